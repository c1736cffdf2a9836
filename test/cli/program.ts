// Runs `cbqs` in-process the way src/cli.ts does (same program configuration, same registrars,
// same error line and exit code), capturing stdout and stderr. No build needed.
import { Command, CommanderError } from "commander";
import { vi } from "vitest";
import { configureProgram, errorLine, exitCodeOf, type Registrar } from "../../src/cli/common.js";
import { register as registerCrypto } from "../../src/cli/crypto.js";
import { register as registerAdmission } from "../../src/cli/admission.js";
import { register as registerConformance } from "../../src/cli/conformance.js";
import { register as registerProof } from "../../src/cli/proof.js";
import { register as registerState } from "../../src/cli/state.js";
import { register as registerRun } from "../../src/cli/run.js";
import { register as registerCodec } from "../../src/cli/codec.js";
import { register as registerHarness } from "../../src/cli/harness.js";
import { register as registerGas } from "../../src/cli/gas.js";

const registrars: Registrar[] = [registerCrypto, registerAdmission, registerConformance, registerProof, registerState, registerRun, registerCodec, registerHarness, registerGas];

export interface CbqsRun {
  exitCode: number;
  out: string;
  err: string;
}

export async function cbqs(...args: string[]): Promise<CbqsRun> {
  const program = configureProgram(new Command()).name("cbqs");
  for (const register of registrars) register(program);
  let out = "";
  let err = "";
  const o = vi.spyOn(process.stdout, "write").mockImplementation((c) => ((out += String(c)), true));
  const e = vi.spyOn(process.stderr, "write").mockImplementation((c) => ((err += String(c)), true));
  process.exitCode = 0;
  let exitCode: number;
  try {
    await program.parseAsync(["node", "cbqs", ...args]);
    exitCode = Number(process.exitCode ?? 0);
  } catch (x) {
    if (!(x instanceof CommanderError)) err += errorLine(x);
    exitCode = exitCodeOf(x);
  } finally {
    o.mockRestore();
    e.mockRestore();
    process.exitCode = 0;
  }
  return { exitCode, out, err };
}
