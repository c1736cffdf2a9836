// The `cbqs` program: the command tree as data — where each command stands, what each group is
// for, and the earlier names kept as hidden aliases — built on one commander program with the
// shared conventions of src/cli/common.ts. src/cli.ts runs it; tests run it in-process;
// scripts/gen-cli-reference.ts writes docs/reference/cli.md from it.
import { Command } from "commander";
import { configureProgram, exitCodes, UsageError, type ExitCodes } from "./common.js";
import { declare, defineCommand, defineGroup, type CommandSpec, type GroupSpec } from "./define.js";

/**
 * Each area's commands, loaded only when a command of it runs: a command module imports its
 * implementation (the engine, hash-wasm, lmdb, the codec tables…) at its top, and loading all of
 * them made every call, even `cbqs --version`, cost 0.3–0.5 s (docs/engineering/performance.md "Start-up").
 */
const AREAS = {
  run: () => import("./run.js"),
  fill: () => import("./fill.js"),
  replay: () => import("./replay.js"),
  consume: () => import("./consume.js"),
  t8n: () => import("./t8n.js"),
  trace: () => import("./trace.js"),
  diff: () => import("./diff.js"),
  state: () => import("./state.js"),
  fuzz: () => import("./fuzz.js"),
  node: () => import("./node.js"),
  follow: () => import("./follow.js"),
  tx: () => import("./tx.js"),
  export: () => import("./export.js"),
  snapshot: () => import("./snapshot.js"),
  store: () => import("./store.js"),
  proofs: () => import("./proofs.js"),
  codec: () => import("./codec.js"),
  crypto: () => import("./crypto.js"),
  admission: () => import("./admission.js"),
  broker: () => import("./broker.js"),
  gas: () => import("./gas.js"),
  conformance: () => import("./conformance.js"),
} satisfies Record<string, () => Promise<{ commands: Readonly<Record<string, CommandSpec>> }>>;

export type Area = keyof typeof AREAS;

/** A command (its spec is `commands[name]` of its area's module) or a group of them. */
export type TreeNode = { readonly name: string; readonly area: Area } | { readonly name: string; readonly group: GroupSpec; readonly children: readonly TreeNode[] };

const command = (name: string, area: Area): TreeNode => ({ name, area });
const group = (name: string, description: string, exits: ExitCodes, children: readonly TreeNode[]): TreeNode => ({ name, group: { description, exits }, children });

/**
 * The command tree, in the order --help lists it: the workflow's verbs at the top (a scenario run
 * and filled into fixtures, replayed, consumed by an implementation's t8n, traced and diffed on a
 * mismatch, fuzzed; a node, its followers and transactions), then the tools grouped by what they
 * work on.
 */
export const TREE: readonly TreeNode[] = [
  command("run", "run"),
  command("fill", "fill"),
  group("fixture", "fixture corpora and the chains in them: the corpus index, a stored chain written as a fixture, a fixture's genesis", exitCodes(
    "index, export, genesis: written",
    "export: a stored block is not what re-executing the chain from genesis gives (nothing written)",
    "unreadable or malformed input (file and JSON path named), no store or a busy one, an unwritable output, an unknown subcommand",
    "export: no file is written (on stdout, the blocks so far); the store is closed unchanged",
  ), [command("index", "fill"), command("export", "export"), command("genesis", "node")]),
  command("replay", "replay"),
  command("consume", "consume"),
  command("t8n", "t8n"),
  command("t8n-adapter", "t8n"),
  command("trace", "trace"),
  command("diff", "diff"),
  group("state", "state dumps (CIP-4 keys and values, decoded) and their differences", exitCodes(
    "dump: the dump is written; diff: the two states are equal",
    "dump: a fixture or scenario does not replay to its own expected values; diff: the states differ",
    "unusable input (one error line naming the file and JSON path), bad options, an unknown subcommand",
    "no file is written (a dump to stdout keeps the entries printed so far)",
  ), [command("dump", "state"), command("diff", "state")]),
  command("fuzz", "fuzz"),
  command("node", "node"),
  command("follow", "follow"),
  command("tx", "tx"),
  group("snapshot", "state snapshots for fast sync (CIP-4 §8.1): export from a store, import into an empty one", exitCodes(
    "export: the snapshot is written; import: the store is rebuilt from it",
    "import: the snapshot's block is not --trusted-block-hash (nothing is written)",
    "export: no store, an empty or busy one, a pruned block, an unwritable file; import: an unusable or foreign snapshot, a target holding a chain; an unknown subcommand",
    "no snapshot file is written and no store is changed",
  ), [command("export", "snapshot"), command("import", "snapshot")]),
  group("store", "the persistent store of --db (docs/spec/state.md §6)", exitCodes(
    "verify: every check held",
    "verify: an inconsistency or damage (the first one found is named)",
    "no store there, a store in use, not a directory, an unknown subcommand",
  ), [command("verify", "store")]),
  group("proof", "CIP-4 proofs: write the proof of a state key (Appendix C), a transaction or a receipt (§5.4) from a fixture, a dump or a store, and verify one against a trusted root", exitCodes(
    "state, tx, receipt: the proof is written; verify, verify-bmt: the proof verifies",
    "state, tx, receipt: the fixture does not replay to its own values (no proof written); verify, verify-bmt: a well-formed proof that does not verify",
    "unreadable or malformed input, a bad --key, --root, --height, --block or --index, a store in use or empty, an unwritable output, an unknown subcommand",
    "no proof is written",
  ), [command("state", "proofs"), command("tx", "proofs"), command("receipt", "proofs"), command("verify", "proofs"), command("verify-bmt", "proofs")]),
  group("codec", "the canonical CBQS codec (CIP-39 §14): decode and encode values, list the types, derive identifiers and digests", exitCodes(
    "decoded, encoded, listed or derived",
    "(not used)",
    "unknown type, bad hex, a value or bytes the type does not allow, a missing or malformed option, an unknown subcommand",
  ), [
    command("decode", "codec"),
    command("encode", "codec"),
    command("types", "codec"),
    group("derive", "derive CIP-39 identifiers and digests", exitCodes("derived", "(not used)", "a missing or malformed option, an unreadable genesis file (chain-instance-id), an unknown subcommand"), [
      command("stream-id", "codec"),
      command("key-stream-id", "codec"),
      command("lane-id", "codec"),
      command("chain-instance-id", "codec"),
      command("signing-key-id", "codec"),
      command("schedule-digest", "codec"),
    ]),
  ]),
  group("check", "check one thing against the specification: a signature, an endpoint URI, a broker's artifacts, the gas vectors, the conformance digests", exitCodes(
    "valid, accepted, every rule held, every vector or digest matches (gas-vectors generate, schedule, plans and conformance trace: written)",
    "invalid, rejected, a rule broken, a number or digest that differs",
    "malformed input or options, a file that cannot be read or written, a node that cannot be reached, an unknown subcommand",
  ), [
    command("sig", "crypto"),
    command("endpoint", "admission"),
    command("broker", "broker"),
    group("gas-vectors", "CIP-39 §18.1 gas schedule, canonical plans and gas vectors", exitCodes(
      "generate, schedule, plans: written; verify: every vector re-executes to its recorded numbers and the file hashes to the pinned SHA-256",
      "verify: a number or the digest differs",
      "verify: unreadable or malformed artifact; generate, schedule, plans: unwritable output; an unknown subcommand",
    ), [command("generate", "gas"), command("verify", "gas"), command("schedule", "gas"), command("plans", "gas")]),
    group("conformance", "external conformance checks", exitCodes(
      "commonware: every digest matches the published value; trace: printed",
      "commonware: a digest differs",
      "trace: unknown workload or bad seed; an unknown subcommand",
    ), [command("commonware", "conformance"), command("trace", "conformance")]),
  ]),
];

/**
 * The top-level names of earlier versions, each the path of its command now: they keep working,
 * options and all, as hidden aliases (not listed by --help) until the next major version (README
 * "Versioning"; test/cli/aliases.test.ts runs each one).
 */
export const ALIASES: ReadonlyArray<readonly [old: string, path: string]> = [
  ["index", "fixture index"],
  ["export", "fixture export"],
  ["genesis", "fixture genesis"],
  ["verify-proof", "proof verify"],
  ["prove-state", "proof state"],
  ["prove-tx", "proof tx"],
  ["prove-receipt", "proof receipt"],
  ["verify-bmt-proof", "proof verify-bmt"],
  ["decode", "codec decode"],
  ["encode", "codec encode"],
  ["types", "codec types"],
  ["derive", "codec derive"],
  ["verify-sig", "check sig"],
  ["admit-endpoint", "check endpoint"],
  ["verify-broker", "check broker"],
  ["gas-vectors", "check gas-vectors"],
  ["conformance", "check conformance"],
];

/** The node at `path` (space-separated names) of the tree, or undefined. */
export function nodeAt(path: string): TreeNode | undefined {
  let nodes = TREE;
  let found: TreeNode | undefined;
  for (const name of path.split(" ")) {
    found = nodes.find((n) => n.name === name);
    if (found === undefined) return undefined;
    nodes = "children" in found ? found.children : [];
  }
  return found;
}

/** The areas of every command at or below `node`. */
function areasOf(node: TreeNode): Area[] {
  return "area" in node ? [node.area] : node.children.flatMap(areasOf);
}

const ALL_AREAS = Object.keys(AREAS) as Area[];

/**
 * The areas a call needs, from its first arguments (commander takes the command from there: the
 * program's only options are --version and --help): the command they name (by its path, or by an
 * earlier name), with every command of a group named without a known subcommand. `--version`/`-V`
 * needs none (commander prints the version before it looks at any command); anything else —
 * `--help`, `help …`, an unknown or mistyped name (commander suggests the nearest of all) — needs
 * them all. Without `args` (tests, in-process callers): all.
 */
export function areasFor(args: readonly string[] | undefined): Area[] {
  const first = args?.[0];
  if (first === undefined) return ALL_AREAS;
  if (first === "--version" || first === "-V") return [];
  const alias = ALIASES.find(([old]) => old === first);
  const named = nodeAt(alias === undefined ? first : alias[1]);
  if (named === undefined) return ALL_AREAS;
  let node: TreeNode = named;
  for (const name of args!.slice(1)) {
    const child: TreeNode | undefined = "children" in node ? node.children.find((c) => c.name === name) : undefined;
    if (child === undefined) break;
    node = child;
  }
  return [...new Set(areasOf(node))];
}

type Loaded = ReadonlyMap<Area, Readonly<Record<string, CommandSpec>>>;

/** Defines `node` under `parent` as `name` with the areas loaded; a group none of whose commands is loaded is left out. */
function defineNode(parent: Command, name: string, node: TreeNode, loaded: Loaded, hidden: boolean): void {
  if ("area" in node) {
    const commands = loaded.get(node.area);
    if (commands === undefined) return;
    const spec = commands[node.name];
    if (spec === undefined) throw new Error(`src/cli/program.ts: area ${node.area} has no command ${node.name}`);
    defineCommand(parent, name, spec, hidden);
    return;
  }
  if (!areasOf(node).some((area) => loaded.has(area))) return;
  const defined = defineGroup(parent, name, node.group, hidden);
  for (const child of node.children) defineNode(defined, child.name, child, loaded, false);
}

/** What the program's own --help says its exit codes mean. */
const PROGRAM_EXITS = exitCodes("success, accept, match", "reject, verification mismatch, difference", "unusable input: one line `cbqs: error: …` naming the file and JSON path");

/** The `cbqs` program for the arguments after `node cbqs` (`args`): only the commands they need are loaded (areasFor). */
export async function buildProgram(version: string, args?: readonly string[]): Promise<Command> {
  const areas = areasFor(args);
  const loaded: Loaded = new Map(await Promise.all(areas.map(async (area) => [area, (await AREAS[area]()).commands] as const)));
  const program = configureProgram(new Command())
    .name("cbqs")
    .description("CIP-39 Stream Registry reference emulator (CBQS consensus side on a CIP-4 QMDB state emulator)")
    .version(version);
  declare(program, PROGRAM_EXITS);
  for (const node of TREE) defineNode(program, node.name, node, loaded, false);
  for (const [old, path] of ALIASES) defineNode(program, old, nodeAt(path)!, loaded, true);
  registerHelp(program);
  return program;
}

/** What `cbqs help`'s --help says its exit codes mean. */
const HELP_EXITS = exitCodes("help printed", "(not used)", "unknown command");

/** `cbqs help [command…]`: commander's own prints the whole help on an unknown name; here that is exit 2, one line. */
function registerHelp(program: Command): void {
  program.helpCommand(false);
  const help = program.command("help").description("display help for command").argument("[command...]", "command (and subcommand) names");
  declare(help, HELP_EXITS).action((names: string[]) => {
    let command = program;
    names.forEach((name, i) => {
      const sub = command.commands.find((c) => c.name() === name || c.aliases().includes(name));
      if (sub === undefined) throw new UsageError(`unknown command '${names.slice(0, i + 1).join(" ")}' (see cbqs help)`);
      command = sub;
    });
    command.outputHelp();
  });
}
