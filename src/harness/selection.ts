// Which fixtures of a corpus a run takes (`replay`, `consume`): the files named on the command
// line with their test ids (src/harness/corpus.ts), each directory checked against its index
// when it has one, then `-k` on the ids, `--instruction` and `--error` from the index, and
// `--shard` last — so a CI matrix shards exactly the selected set.
import { basename, dirname } from "node:path";
import { statSync } from "node:fs";
import { corpusFiles, type CorpusFile } from "./corpus.js";
import { checkIndex, readIndex, type IndexEntry } from "./corpus-index.js";
import { fixtureFiles } from "./documents.js";
import { shardOf, type Shard } from "./replay.js";
import { STDIN } from "../json/read.js";

export interface SelectionOptions {
  /** `-k`: a regular expression (a plain substring is one) tested against each id. */
  pattern?: RegExp;
  /** `--instruction`: fixtures exercising at least one of these transaction kinds. */
  instructions?: readonly string[];
  /** `--error`: fixtures with a receipt of at least one of these error names. */
  errors?: readonly string[];
  shard?: Shard;
}

export interface IndexFailure {
  /** The index file. */
  index: string;
  id: string;
  problem: string;
}

export interface Selection {
  files: CorpusFile[];
  /** Differences between directories and their indexes: failures of the run, each naming its fixture. */
  indexFailures: IndexFailure[];
  /** Every entry of the indexes read. */
  indexed: IndexEntry[];
}

/** A filter that needs the index met a fixture its directory does not index. */
export class NoIndexError extends Error {
  override name = "NoIndexError";
}

export function selectFixtures(targets: readonly string[], options: SelectionOptions = {}): Selection {
  const all = corpusFiles(targets);
  const indexFailures: IndexFailure[] = [];
  const entries = new Map<string, IndexEntry>();
  const indexes = new Map<string, IndexEntry[] | null>();
  for (const target of targets) {
    if (target === STDIN) continue;
    const isDir = statSync(target).isDirectory();
    const dir = isDir ? target : dirname(target);
    if (!indexes.has(dir)) indexes.set(dir, readIndex(dir));
    const index = indexes.get(dir)!;
    if (index === null) continue;
    // A directory is checked whole; a single file only for its own entry.
    const names = isDir ? fixtureFiles(dir).map((f) => basename(f)) : [basename(target)];
    const listed = isDir ? index : index.filter((e) => e.file === basename(target));
    for (const p of checkIndex(dir, names, listed)) indexFailures.push({ index: `${dir}/index.json`, ...p });
    for (const e of index) entries.set(`${dir}\0${e.file}`, e);
  }
  const entryOf = (f: CorpusFile): IndexEntry => {
    const e = entries.get(`${f.root}\0${basename(f.file)}`) ?? entries.get(`${dirname(f.file)}\0${basename(f.file)}`);
    if (e === undefined) throw new NoIndexError(`--instruction and --error select from the corpus index, and ${f.file} is not in one (cbqs fill writes index.json beside its fixtures; cbqs index <dir> writes one for any directory)`);
    return e;
  };
  const anyOf = (wanted: readonly string[] | undefined, have: readonly string[]): boolean => wanted === undefined || wanted.length === 0 || wanted.some((w) => have.includes(w));
  const chosen = all.filter(
    (f) =>
      (options.pattern === undefined || options.pattern.test(f.id)) &&
      (options.instructions === undefined || options.instructions.length === 0 || anyOf(options.instructions, entryOf(f).instructions)) &&
      (options.errors === undefined || options.errors.length === 0 || anyOf(options.errors, entryOf(f).errors)),
  );
  const files = options.shard === undefined ? chosen : shardOf(chosen.map((f) => f.file), options.shard).map((file) => chosen.find((f) => f.file === file)!);
  return { files, indexFailures, indexed: [...entries.values()] };
}

/** `-k <pattern>`: a JavaScript regular expression; a plain substring is one. */
export function idPattern(text: string): RegExp {
  try {
    return new RegExp(text);
  } catch (err) {
    throw new SyntaxError(`-k must be a regular expression or a substring of test ids: ${(err as Error).message}`);
  }
}
