// Reading every document a command takes, by format, through the one file reader
// (src/json/read.ts: `.json` or gzip, strict JSON, bounded): fixtures, state dumps, scenarios,
// run documents, t8n results and JSON-lines traces. Large arrays are loaded element by element
// as they are read (a fixture's `blocks`, a dump's `entries`, a run's `blocks`) whenever the
// document names its `format` first, as every document this project writes does. Every problem
// is an InputError naming the file and the JSON path (exit 2).
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { fromHex } from "../bytes.js";
import { EncodeError, JsonValueError } from "../codec/errors.js";
import { JsonError, parseJson, TrailingContentError, type Json, type JsonObject } from "../json/parse.js";
import { InputError, readFileBytes, readJsonFile, readJsonFileSteps, STDIN } from "../json/read.js";
import { finish, type Steps } from "../steps.js";
import { parseScenario, SCENARIO_FORMAT, type Scenario } from "../scenario/parse.js";
import { loadRunBlock, loadRunDocument } from "../scenario/run-document.js";
import { RUN_FORMAT, type RunBlock, type RunDocument } from "../scenario/run.js";
import { DUMP_FORMAT, dumpEntryCollector, loadDump, type DumpEntries } from "../../state/kv/dump.js";
import { formatProblem } from "../json/fields.js";
import { FIXTURE_FORMAT, loadBlock, loadFixture, type Fixture, type FixtureBlock } from "./fixture.js";
import { loadT8nResult, T8N_RESULT_FORMAT } from "./t8n.js";
import { loadTraceLine, TRACE_FORMAT } from "./trace.js";

/** An error that names a JSON path, reported against `file`; anything else passes through. */
export function asInputError(file: string, err: unknown): unknown {
  if (err instanceof InputError) return err;
  if (err instanceof JsonError || err instanceof JsonValueError || err instanceof EncodeError) return new InputError(file, err.path, err.reason);
  return err;
}

/** Runs `load`, reporting any path error against `file`. */
export function inFile<T>(file: string, load: () => T): T {
  try {
    return load();
  } catch (err) {
    throw asInputError(file, err);
  }
}

/** inFile for a computation run unit by unit (src/steps.ts). */
export function* inFileSteps<T>(file: string, steps: Steps<T>): Steps<T> {
  try {
    return yield* steps;
  } catch (err) {
    throw asInputError(file, err);
  }
}

/** The corpus index `fill` writes beside its fixtures (src/harness/corpus.ts): never a fixture. */
export const CORPUS_INDEX_NAME = "index.json";

const isFixtureName = (name: string): boolean => name !== CORPUS_INDEX_NAME && (name.endsWith(".json") || name.endsWith(".json.gz"));

/** The fixture files named by `target`: the file itself, or a directory's `*.json`/`*.json.gz`, sorted by name. */
export function fixtureFiles(target: string): string[] {
  if (target === STDIN) return [target];
  let isDir: boolean;
  try {
    isDir = statSync(target).isDirectory();
  } catch (err) {
    throw InputError.unreadable(target, err);
  }
  if (!isDir) return [target];
  const files = readdirSync(target)
    .filter(isFixtureName)
    .sort()
    .map((name) => join(target, name));
  if (files.length === 0) throw new InputError(target, "", "no *.json or *.json.gz fixtures in this directory");
  return files;
}

const formatOf = (root: JsonObject | Json[]): unknown => (Array.isArray(root) ? undefined : root["format"]);

export function readFixture(file: string): Fixture {
  return finish(readFixtureSteps(file));
}

/** readFixture unit by unit (a unit is a chunk of the file: src/steps.ts). */
export function* readFixtureSteps(file: string): Steps<Fixture> {
  const blocks: FixtureBlock[] = [];
  const doc = yield* readJsonFileSteps(file, {
    streams: {
      "$.blocks": (b, i, root) => formatOf(root) === FIXTURE_FORMAT && blocks.push(loadBlock(b, `$.blocks[${i}]`)) > 0,
    },
  });
  return inFile(file, () => loadFixture(doc, blocks));
}

/** A cbqs-state-dump/v1 file (a dump or a t8n alloc) as entries sorted by key; `onEntry` sees the count read so far. */
export function readDump(file: string, onEntry?: (entries: number) => void): DumpEntries {
  return finish(readDumpSteps(file, onEntry));
}

/** readDump unit by unit (a unit is a chunk of the file: src/steps.ts). */
export function* readDumpSteps(file: string, onEntry?: (entries: number) => void): Steps<DumpEntries> {
  const collector = dumpEntryCollector();
  const take = (e: Json, i: number): boolean => {
    collector.take(e, i);
    onEntry?.(i + 1);
    return true;
  };
  let doc: Json;
  try {
    doc = yield* readJsonFileSteps(file, { streams: { "$.entries": (e, i, root) => formatOf(root) === DUMP_FORMAT && take(e, i) } });
  } catch (err) {
    throw asInputError(file, err);
  }
  return inFile(file, () => loadDump(doc, "$", collector.entries));
}

export function readScenario(file: string): Scenario {
  const doc = readJsonFile(file);
  return inFile(file, () => parseScenario(doc));
}

/** A JSON document of any shape (t8n `txs` and `env`, a codec value, a proof) read strictly. */
export function readJson(file: string): Json {
  return readJsonFile(file);
}

export type Document =
  | { kind: "fixture"; fixture: Fixture }
  | { kind: "dump"; entries: DumpEntries; /** The dump's own `height` and `state_root` members, when it has them. */ height?: bigint; stateRoot?: Uint8Array }
  | { kind: "scenario"; scenario: Scenario }
  | { kind: "run"; run: RunDocument }
  | { kind: "t8n"; result: Record<string, Json> }
  | { kind: "trace"; lines: JsonObject[] };

export type DocumentKind = Document["kind"];

const KIND_FORMATS: Record<DocumentKind, string> = {
  fixture: FIXTURE_FORMAT,
  dump: DUMP_FORMAT,
  scenario: SCENARIO_FORMAT,
  run: RUN_FORMAT,
  t8n: T8N_RESULT_FORMAT,
  trace: TRACE_FORMAT,
};

/**
 * Any document, by its `format`, validated completely with the loader its own command uses
 * (a fixture as replay loads it, a dump as t8n loads an alloc, …). A file of several JSON
 * values, one per line, is a cbqs-trace/v1 trace.
 */
export function readDocument(file: string, accept: readonly DocumentKind[] = ["fixture", "dump", "scenario", "run", "t8n", "trace"]): Document {
  return finish(readDocumentSteps(file, accept));
}

/** readDocument unit by unit (a unit is a chunk of the file: src/steps.ts). */
export function* readDocumentSteps(file: string, accept: readonly DocumentKind[] = ["fixture", "dump", "scenario", "run", "t8n", "trace"]): Steps<Document> {
  const formats = accept.map((k) => KIND_FORMATS[k]);
  const taking = (format: unknown, kind: DocumentKind): boolean => format === KIND_FORMATS[kind] && accept.includes(kind);
  const blocks: FixtureBlock[] = [];
  const runBlocks: RunBlock[] = [];
  const dump = dumpEntryCollector();
  let doc: Json;
  try {
    doc = yield* readJsonFileSteps(file, {
      streams: {
        "$.blocks": (b, i, root) => {
          const format = formatOf(root);
          if (taking(format, "fixture")) return blocks.push(loadBlock(b, `$.blocks[${i}]`)) > 0;
          if (taking(format, "run")) return runBlocks.push(loadRunBlock(b, `$.blocks[${i}]`)) > 0;
          return false;
        },
        "$.entries": (e, i, root) => taking(formatOf(root), "dump") && dump.take(e, i),
      },
    });
  } catch (err) {
    if (err instanceof InputError && err.trailing && accept.includes("trace") && isTraceLines(file)) {
      return { kind: "trace", lines: readTraceLines(file) };
    }
    throw asInputError(file, err);
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) throw new InputError(file, "$", "expected a JSON object");
  const format = doc["format"];
  if (!formats.includes(format as string)) throw new InputError(file, "$.format", formatProblem(format, formats));
  return inFile(file, (): Document => {
    switch (format) {
      case FIXTURE_FORMAT:
        return { kind: "fixture", fixture: loadFixture(doc, blocks) };
      case DUMP_FORMAT: {
        const entries = loadDump(doc, "$", dump.entries);
        const { height, state_root: root } = doc;
        return {
          kind: "dump",
          entries,
          ...(typeof height === "string" ? { height: BigInt(height) } : {}),
          ...(typeof root === "string" ? { stateRoot: fromHex(root, 32) } : {}),
        };
      }
      case SCENARIO_FORMAT:
        return { kind: "scenario", scenario: parseScenario(doc) };
      case RUN_FORMAT:
        return { kind: "run", run: loadRunDocument(doc, runBlocks) };
      case T8N_RESULT_FORMAT:
        return { kind: "t8n", result: loadT8nResult(doc) };
      default:
        return { kind: "trace", lines: [loadTraceLine(doc, "$")] };
    }
  });
}

export const KIND_NAMES: Record<DocumentKind, string> = {
  fixture: "fixture",
  dump: "state dump",
  scenario: "scenario",
  run: "run document",
  t8n: "t8n result",
  trace: "trace",
};

/** Whether the file's first line is a complete cbqs-trace/v1 value (then the file is JSON lines). */
function isTraceLines(file: string): boolean {
  const bytes = readFileBytes(file);
  const end = bytes.indexOf(0x0a);
  try {
    const first = parseJson(bytes.subarray(0, end === -1 ? bytes.length : end));
    return typeof first === "object" && first !== null && !Array.isArray(first) && first["format"] === TRACE_FORMAT;
  } catch (err) {
    if (err instanceof JsonError) return false;
    throw err;
  }
}

/** A JSON-lines trace: every non-empty line a cbqs-trace/v1 object (errors name the line). */
export function readTraceLines(file: string): JsonObject[] {
  const bytes = readFileBytes(file);
  const lines: JsonObject[] = [];
  let line = 0;
  for (let start = 0; start < bytes.length; ) {
    const nl = bytes.indexOf(0x0a, start);
    const end = nl === -1 ? bytes.length : nl;
    line++;
    const text = bytes.subarray(start, end);
    start = end + 1;
    if (text.every((b) => b === 0x20 || b === 0x09 || b === 0x0d)) continue;
    try {
      lines.push(loadTraceLine(parseJson(text), "$"));
    } catch (err) {
      if (err instanceof JsonError && !(err instanceof TrailingContentError)) throw new InputError(file, `line ${line} ${err.path}`, err.reason);
      if (err instanceof TrailingContentError) throw new InputError(file, `line ${line}`, "one JSON value per line");
      throw err;
    }
  }
  return lines;
}
