// The corpus index (`cbqs-fixture-index/v1`, docs/reference/formats/fixture.md "Test ids and the index"): one
// entry per fixture of a directory — its id, the SHA-256 of the file's bytes, its size in blocks
// and transactions, and the instructions and error names it exercises. `fill` writes it beside
// the fixtures; `replay` and `consume` check a directory against it (a missing, extra or edited
// fixture is a failure naming it) and select fixtures by what it lists.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { decodeEnvelope } from "../chain/envelope.js";
import { readJsonFile } from "../json/read.js";
import { array, decimal, object, sha256Hex, string } from "../json/fields.js";
import { JsonError } from "../json/parse.js";
import { writeOutputFile } from "../output-file.js";
import { CORPUS_INDEX_NAME, fixtureFiles, inFile, readFixture } from "./documents.js";
import type { Fixture } from "./fixture.js";
import { txKind } from "./trace.js";

export const INDEX_FORMAT = "cbqs-fixture-index/v1";

export interface IndexEntry {
  id: string;
  /** The file name inside the corpus directory. */
  file: string;
  /** SHA-256 of the file's bytes as stored (gzipped ones included), lowercase hex. */
  sha256: string;
  blocks: number;
  transactions: number;
  /** Distinct transaction kinds, sorted: the nine instructions' names, `Gov.SetParam`, `Transfer`, … */
  instructions: string[];
  /** Distinct error names of the fixture's receipts, sorted. */
  errors: string[];
}

// sort()'s default order compares UTF-16 code units, as `<` does: the same order in every locale.
const sorted = (values: Iterable<string>): string[] => [...new Set(values)].sort();

export const fileSha256 = (path: string): string => createHash("sha256").update(readFileSync(path)).digest("hex");

/** What an index says about a fixture's content (everything but its name and file hash). */
export type FixtureSummary = Pick<IndexEntry, "blocks" | "transactions" | "instructions" | "errors">;

export function fixtureSummary(fixture: Fixture): FixtureSummary {
  const kinds: string[] = [];
  const errors: string[] = [];
  for (const b of fixture.blocks) {
    for (const raw of b.transactions) kinds.push(txKind(decodeEnvelope(raw)));
    for (const r of b.receipts) if (r.error !== null) errors.push(r.error.name);
  }
  return {
    blocks: fixture.blocks.length,
    transactions: fixture.blocks.reduce((n, b) => n + b.transactions.length, 0),
    instructions: sorted(kinds),
    errors: sorted(errors),
  };
}

/**
 * Indexes every fixture of `dir` and writes `<dir>/index.json`: fixtures in `known` (by file name,
 * just written by `fill`) are not read again. Returns the index's path.
 */
export function indexDirectory(dir: string, known: ReadonlyMap<string, FixtureSummary> = new Map()): string {
  const entries = fixtureFiles(dir).map((path) => {
    const file = basename(path);
    const summary = known.get(file) ?? fixtureSummary(readFixture(path));
    return { id: file, file, sha256: fileSha256(path), ...summary };
  });
  return writeIndex(dir, entries);
}

/** Writes `<dir>/index.json` (temporary name, then renamed), entries sorted by id. */
export function writeIndex(dir: string, entries: readonly IndexEntry[]): string {
  const fixtures = [...entries]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((e) => ({ ...e, blocks: String(e.blocks), transactions: String(e.transactions) }));
  const path = join(dir, CORPUS_INDEX_NAME);
  writeOutputFile(path, JSON.stringify({ format: INDEX_FORMAT, fixtures }, null, 2) + "\n");
  return path;
}

const MAX_COUNT = BigInt(Number.MAX_SAFE_INTEGER);

/** Fixtures an index may list (a bound checked before the entries are read). */
const MAX_INDEX_ENTRIES = 1_000_000;

/** `<dir>/index.json`, or null when the directory has none; a malformed one is unusable input naming its JSON path. */
export function readIndex(dir: string): IndexEntry[] | null {
  if (!readdirSync(dir).includes(CORPUS_INDEX_NAME)) return null;
  const path = join(dir, CORPUS_INDEX_NAME);
  return inFile(path, () => {
    const doc = object(readJsonFile(path), "$", ["format", "fixtures"]);
    if (doc["format"] !== INDEX_FORMAT) throw new JsonError("$.format", `expected "${INDEX_FORMAT}"`);
    const seen = new Set<string>();
    return array(doc["fixtures"], "$.fixtures", MAX_INDEX_ENTRIES).map((v, i) => {
      const at = `$.fixtures[${i}]`;
      const e = object(v, at, ["id", "file", "sha256", "blocks", "transactions", "instructions", "errors"]);
      const names = (name: string): string[] => array(e[name], `${at}.${name}`, 10_000).map((x, k) => string(x, `${at}.${name}[${k}]`));
      const entry: IndexEntry = {
        id: string(e["id"], `${at}.id`),
        file: string(e["file"], `${at}.file`),
        sha256: sha256Hex(e["sha256"], `${at}.sha256`),
        blocks: Number(decimal(e["blocks"], `${at}.blocks`, MAX_COUNT)),
        transactions: Number(decimal(e["transactions"], `${at}.transactions`, MAX_COUNT)),
        instructions: names("instructions"),
        errors: names("errors"),
      };
      if (entry.file.includes("/") || entry.file === CORPUS_INDEX_NAME) throw new JsonError(`${at}.file`, "expected the name of a fixture file in this directory");
      if (seen.has(entry.id)) throw new JsonError(`${at}.id`, `${entry.id} is listed twice`);
      seen.add(entry.id);
      return entry;
    });
  });
}

/** A difference between a directory and its index, in words naming the fixture. */
export interface IndexProblem {
  id: string;
  problem: string;
}

/** The fixtures of `dir` (file names) against its index: missing, extra and edited ones. */
export function checkIndex(dir: string, files: readonly string[], index: readonly IndexEntry[]): IndexProblem[] {
  const listed = new Map(index.map((e) => [e.file, e]));
  const problems: IndexProblem[] = [];
  for (const e of index) if (!files.includes(e.file)) problems.push({ id: e.id, problem: `listed in ${CORPUS_INDEX_NAME} but missing from ${dir}` });
  for (const file of files) {
    const e = listed.get(file);
    if (e === undefined) problems.push({ id: file, problem: `in ${dir} but not listed in ${CORPUS_INDEX_NAME}` });
    else {
      const actual = fileSha256(join(dir, file));
      if (actual !== e.sha256) problems.push({ id: e.id, problem: `edited since ${CORPUS_INDEX_NAME} was written: sha256 ${actual}, the index has ${e.sha256}` });
    }
  }
  return problems.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
