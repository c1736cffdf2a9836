// The `cbqs` program: every area's commands on one commander program with the shared
// conventions of src/cli/common.ts. src/cli.ts runs it; tests run it in-process.
import { Command } from "commander";
import { configureProgram, exitCodes, UsageError, type Registrar } from "./common.js";

/**
 * Each area's registrar, loaded only when a command of it runs: a command module imports its
 * implementation (the engine, hash-wasm, lmdb, the codec tables…) at its top, and loading all of
 * them made every call, even `cbqs --version`, cost 0.3–0.5 s (docs/engineering/performance.md "Start-up").
 * `commands` are the names each one registers (test/cli/workflow.test.ts checks them against the
 * registrar); the order is workflow order (run → fill → replay → t8n → trace → diff → state →
 * proofs → codec → crypto → gas vectors), as --help lists them.
 */
const areas: ReadonlyArray<{ commands: readonly string[]; load: () => Promise<{ register: Registrar }> }> = [
  { commands: ["run"], load: () => import("./run.js") },
  { commands: ["fill", "index", "replay", "t8n", "t8n-adapter", "trace", "diff"], load: () => import("./harness.js") },
  { commands: ["state"], load: () => import("./state.js") },
  { commands: ["verify-proof", "prove-state", "prove-tx", "prove-receipt", "verify-bmt-proof"], load: () => import("./proofs.js") },
  { commands: ["decode", "encode", "derive", "types"], load: () => import("./codec.js") },
  { commands: ["tx"], load: () => import("./tx.js") },
  { commands: ["verify-sig"], load: () => import("./crypto.js") },
  { commands: ["admit-endpoint"], load: () => import("./admission.js") },
  { commands: ["conformance"], load: () => import("./conformance.js") },
  { commands: ["gas-vectors"], load: () => import("./gas.js") },
  { commands: ["consume"], load: () => import("./consume.js") },
  { commands: ["verify-broker"], load: () => import("./broker.js") },
  { commands: ["fuzz"], load: () => import("./fuzz.js") },
  { commands: ["genesis", "node"], load: () => import("./node.js") },
  { commands: ["follow"], load: () => import("./follow.js") },
  { commands: ["snapshot"], load: () => import("./snapshot.js") },
  { commands: ["store"], load: () => import("./store.js") },
  { commands: ["export"], load: () => import("./export.js") },
];

/** The command names of each area, in --help order. */
export const areaCommands: ReadonlyArray<readonly string[]> = areas.map((a) => a.commands);

/**
 * The areas a call needs, from its first argument (commander takes the command from there: the
 * program's only options are --version and --help). A command name needs its own area;
 * `--version`/`-V` none (commander prints the version before it looks at any command); anything
 * else — `--help`, `help …`, an unknown or mistyped name (commander suggests the nearest of all) —
 * needs them all. Without `args` (tests, in-process callers): all.
 */
function areasFor(args: readonly string[] | undefined): typeof areas {
  const first = args?.[0];
  if (first === undefined) return areas;
  if (first === "--version" || first === "-V") return [];
  const area = areas.find((a) => a.commands.includes(first));
  return area === undefined ? areas : [area];
}

/** The `cbqs` program for the arguments after `node cbqs` (`args`): only the commands they need are loaded (areasFor). */
export async function buildProgram(version: string, args?: readonly string[]): Promise<Command> {
  const registrars = await Promise.all(areasFor(args).map(async (a) => (await a.load()).register));
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
