#!/usr/bin/env node
// `cbqs`: the command-line face of the emulator. Each area registers its own commands.
import { Command, CommanderError } from "commander";
import { createRequire } from "node:module";
import { configureProgram, errorLine, exitCodeOf, type Registrar } from "./cli/common.js";
import { register as registerCrypto } from "./cli/crypto.js";
import { register as registerAdmission } from "./cli/admission.js";
import { register as registerConformance } from "./cli/conformance.js";
import { register as registerProof } from "./cli/proof.js";
import { register as registerState } from "./cli/state.js";
import { register as registerRun } from "./cli/run.js";
import { register as registerCodec } from "./cli/codec.js";
import { register as registerHarness } from "./cli/harness.js";
import { register as registerGas } from "./cli/gas.js";

const registrars: Registrar[] = [registerCrypto, registerAdmission, registerConformance, registerProof, registerState, registerRun, registerCodec, registerHarness, registerGas];

async function main(argv: string[]): Promise<void> {
  const program = configureProgram(new Command())
    .name("cbqs")
    .description("CIP-39 Stream Registry reference emulator (CBQS consensus side on a CIP-4 QMDB state emulator)")
    .version(packageVersion());
  for (const register of registrars) register(program);
  try {
    await program.parseAsync(argv);
  } catch (err) {
    fail(err);
  }
}

function fail(err: unknown): never {
  // Commander has already printed its own errors; --help and --version exit here with code 0.
  if (!(err instanceof CommanderError)) process.stderr.write(errorLine(err));
  process.exit(exitCodeOf(err));
}

function packageVersion(): string {
  // Runs as dist/src/cli.js, two levels below package.json.
  const pkg = createRequire(import.meta.url)("../../package.json") as { version: string };
  return pkg.version;
}

process.on("uncaughtException", fail);
main(process.argv).catch(fail);
