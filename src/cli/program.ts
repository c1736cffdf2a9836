// The `cbqs` program: every area's commands on one commander program with the shared
// conventions of src/cli/common.ts. src/cli.ts runs it; tests run it in-process.
import { Command } from "commander";
import { configureProgram, exitCodes, UsageError, type Registrar } from "./common.js";
import { register as registerCrypto } from "./crypto.js";
import { register as registerAdmission } from "./admission.js";
import { register as registerConformance } from "./conformance.js";
import { register as registerProofs } from "./proofs.js";
import { register as registerState } from "./state.js";
import { register as registerRun } from "./run.js";
import { register as registerCodec } from "./codec.js";
import { register as registerTx } from "./tx.js";
import { register as registerHarness } from "./harness.js";
import { register as registerGas } from "./gas.js";
import { register as registerNode } from "./node.js";
import { register as registerFollow } from "./follow.js";
import { register as registerSnapshot } from "./snapshot.js";
import { register as registerStore } from "./store.js";
import { register as registerFuzz } from "./fuzz.js";

/** Commands in workflow order (run → fill → replay → t8n → trace → diff → state → proofs → codec → crypto → gas vectors), as --help lists them. */
const registrars: Registrar[] = [
  registerRun,
  registerHarness,
  registerState,
  registerProofs,
  registerCodec,
  registerTx,
  registerCrypto,
  registerAdmission,
  registerConformance,
  registerGas,
  registerFuzz,
  registerNode,
  registerFollow,
  registerSnapshot,
  registerStore,
];

export function buildProgram(version: string): Command {
  const program = configureProgram(new Command())
    .name("cbqs")
    .description("CIP-39 Stream Registry reference emulator (CBQS consensus side on a CIP-4 QMDB state emulator)")
    .version(version)
    .addHelpText("after", exitCodes("success, accept, match", "reject, verification mismatch, difference", "unusable input: one line `cbqs: error: …` naming the file and JSON path"));
  for (const register of registrars) register(program);
  registerHelp(program);
  return program;
}

/** `cbqs help [command…]`: commander's own prints the whole help on an unknown name; here that is exit 2, one line. */
function registerHelp(program: Command): void {
  program.helpCommand(false);
  program
    .command("help")
    .description("display help for command")
    .argument("[command...]", "command (and subcommand) names")
    .addHelpText("after", exitCodes("help printed", "(not used)", "unknown command"))
    .action((names: string[]) => {
      let command = program;
      names.forEach((name, i) => {
        const sub = command.commands.find((c) => c.name() === name || c.aliases().includes(name));
        if (sub === undefined) throw new UsageError(`unknown command '${names.slice(0, i + 1).join(" ")}' (see cbqs help)`);
        command = sub;
      });
      command.outputHelp();
    });
}
