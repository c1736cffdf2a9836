// The corpus selection options `replay` and `consume` share (docs/reference/formats/fixture.md "Test ids, the
// index and selection"): -k, --instruction, --error, --shard and --list, and the INDEX lines a
// directory that differs from its index.json prints. Loads no harness code until it runs.
import type { Option } from "commander";
import { echo } from "../bounds.js";
import type { IndexFailure, Selection } from "../harness/selection.js";
import { EXIT_OK, EXIT_REJECT, oneLine, option, repeatableOption, UsageError } from "./common.js";

export interface SelectionOpts {
  k?: string;
  instruction?: string[];
  error?: string[];
  shard?: string;
  list?: boolean;
}

export function selectionOptions(verb: "replay" | "consume"): Option[] {
  return [
    option("-k <pattern>", "only fixtures whose test id (path relative to the corpus directory) matches this regular expression or substring"),
    repeatableOption("--instruction <name>", "only fixtures exercising this transaction kind (CreateStream, Gov.SetParam, Transfer…; repeatable: any of them), from the corpus index"),
    repeatableOption("--error <name>", "only fixtures with a receipt of this error name (repeatable: any of them), from the corpus index"),
    option("--shard <i/n>", `${verb} shard i of n of the selected fixtures: every n-th by sorted file name, from the i-th (CI matrices)`),
    option("--list", `print the test ids that would be ${verb === "replay" ? "replayed" : "consumed"}, one per line, and exit`),
  ];
}

/** The fixtures `targets` and the options select; bad options are usage errors. */
export async function selectFromOptions(targets: readonly string[], o: SelectionOpts): Promise<Selection> {
  const [{ idPattern, NoIndexError, selectFixtures }, { parseShard }] = await Promise.all([import("../harness/selection.js"), import("../harness/replay.js")]);
  let options;
  try {
    options = {
      ...(o.k === undefined ? {} : { pattern: idPattern(o.k) }),
      ...(o.shard === undefined ? {} : { shard: parseShard(o.shard) }),
      instructions: o.instruction ?? [],
      errors: o.error ?? [],
    };
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  let selected;
  try {
    selected = selectFixtures(targets, options);
  } catch (err) {
    if (err instanceof NoIndexError) throw new UsageError(err.message);
    throw err;
  }
  // A name no indexed fixture exercises is a typo far more often than a wish for an empty run.
  for (const [flag, names, all] of [
    ["--instruction", options.instructions, new Set(selected.indexed.flatMap((e) => e.instructions))],
    ["--error", options.errors, new Set(selected.indexed.flatMap((e) => e.errors))],
  ] as const) {
    for (const name of names) if (!all.has(name)) throw new UsageError(`${flag} ${echo(name)}: no indexed fixture has it (the index lists: ${[...all].sort().join(", ")})`);
  }
  return selected;
}

/** `--list`: the ids, one per line, then the differences from the corpus index (exit 1 when there are any). */
export function printList(selection: Selection): void {
  process.stdout.write(selection.files.map((f) => `${oneLine(f.id)}\n`).join("") + indexFailureLines(selection.indexFailures));
  process.exitCode = selection.indexFailures.length > 0 ? EXIT_REJECT : EXIT_OK;
}

/** One line per difference between a directory and its index, on stdout with the mismatches. */
export function indexFailureLines(failures: readonly IndexFailure[]): string {
  return failures.map((f) => `INDEX ${oneLine(`${f.index}: ${f.id}: ${f.problem}`)}\n`).join("");
}
