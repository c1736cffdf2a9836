// The `cbqs` program: every area's commands on one commander program with the shared
// conventions of src/cli/common.ts. src/cli.ts runs it; tests run it in-process.
import { Command } from "commander";
import { configureProgram, type Registrar } from "./common.js";
import { register as registerCrypto } from "./crypto.js";
import { register as registerAdmission } from "./admission.js";
import { register as registerConformance } from "./conformance.js";
import { register as registerProof } from "./proof.js";
import { register as registerState } from "./state.js";
import { register as registerRun } from "./run.js";
import { register as registerCodec } from "./codec.js";
import { register as registerHarness } from "./harness.js";
import { register as registerGas } from "./gas.js";

const registrars: Registrar[] = [
  registerCrypto,
  registerAdmission,
  registerConformance,
  registerProof,
  registerState,
  registerRun,
  registerCodec,
  registerHarness,
  registerGas,
];

export function buildProgram(version: string): Command {
  const program = configureProgram(new Command())
    .name("cbqs")
    .description("CIP-39 Stream Registry reference emulator (CBQS consensus side on a CIP-4 QMDB state emulator)")
    .version(version);
  for (const register of registrars) register(program);
  return program;
}
