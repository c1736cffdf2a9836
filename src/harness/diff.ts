// First divergence between two harness outputs of the same kind (goevmlab convention): run
// documents, fixtures, t8n results, state dumps, or JSON-lines traces. "ours" is the
// reference (expected), "theirs" the implementation under test (got).
import { fromHex } from "../bytes.js";
import { decodeEnvelope } from "../chain/envelope.js";
import { diffDumps, loadDump, type DumpEntry } from "../../state/dump.js";
import { FIXTURE_FORMAT } from "./fixture.js";
import { registryRecords } from "./records.js";
import { T8N_RESULT_FORMAT } from "./t8n.js";
import { TRACE_FORMAT, txKind } from "./trace.js";

export class DiffInputError extends Error {
  override name = "DiffInputError";
}

export type DiffKind = "run" | "fixture" | "t8n" | "dump" | "trace";

const FORMATS: Record<string, DiffKind> = {
  "cbqs-run/v1": "run",
  [FIXTURE_FORMAT]: "fixture",
  [T8N_RESULT_FORMAT]: "t8n",
  "cbqs-state-dump/v1": "dump",
};

export interface Parsed {
  kind: DiffKind;
  value: unknown;
}

/** Detects the kind from `format` (a trace is JSON lines whose lines say cbqs-trace/v1). */
export function parseForDiff(text: string, name: string): Parsed {
  const firstLine = text.slice(0, text.indexOf("\n") === -1 ? text.length : text.indexOf("\n"));
  try {
    const first = JSON.parse(firstLine) as { format?: unknown };
    if (first?.format === TRACE_FORMAT) {
      const lines = text.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as unknown);
      return { kind: "trace", value: lines };
    }
  } catch {
    // not JSON lines: a whole-document JSON below
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new DiffInputError(`${name}: not valid JSON or JSON lines (${(err as Error).message})`);
  }
  const format = (doc as { format?: unknown } | null)?.format;
  const kind = typeof format === "string" ? FORMATS[format] : undefined;
  if (kind === undefined) throw new DiffInputError(`${name}: unknown format ${JSON.stringify(format)} (run, fixture, t8n result, state dump or trace)`);
  return { kind, value: doc };
}

type Path = Array<string | number>;
interface Divergence {
  path: Path;
  ours: unknown;
  theirs: unknown;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Depth-first, in document order: the first place where the two JSON values differ. */
export function firstDivergence(a: unknown, b: unknown, path: Path = []): Divergence | null {
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const d = firstDivergence(a[i], b[i], [...path, i]);
      if (d !== null) return d;
    }
    return a.length === b.length ? null : { path: [...path, "length"], ours: a.length, theirs: b.length };
  }
  if (isObj(a) && isObj(b)) {
    const keys = [...Object.keys(a), ...Object.keys(b).filter((k) => !(k in a))];
    for (const k of keys) {
      if (!(k in b)) return { path: [...path, k], ours: a[k], theirs: undefined };
      if (!(k in a)) return { path: [...path, k], ours: undefined, theirs: b[k] };
      const d = firstDivergence(a[k], b[k], [...path, k]);
      if (d !== null) return d;
    }
    return null;
  }
  return JSON.stringify(a) === JSON.stringify(b) ? null : { path, ours: a, theirs: b };
}

const MAX_VALUE_CHARS = 400;

export function show(v: unknown): string {
  if (v === undefined) return "(absent)";
  const s = JSON.stringify(v);
  return s.length > MAX_VALUE_CHARS ? `${s.slice(0, MAX_VALUE_CHARS)}…` : s;
}

export const pathText = (p: Path): string => p.map((x) => (typeof x === "number" ? `[${x}]` : `.${x}`)).join("").replace(/^\./, "");

/** The first divergence in words, or null when the two are the same. */
export function describeDiff(ours: Parsed, theirs: Parsed): string | null {
  if (ours.kind !== theirs.kind) throw new DiffInputError(`cannot compare a ${ours.kind} with a ${theirs.kind}`);
  switch (ours.kind) {
    case "dump":
      return dumpDiff(ours.value, theirs.value);
    case "trace":
      return traceDiff(ours.value as unknown[], theirs.value as unknown[]);
    default: {
      const d = firstDivergence(ours.value, theirs.value);
      return d === null ? null : `${where(ours.kind, ours.value, d.path)} expected ${show(d.ours)} got ${show(d.theirs)}`;
    }
  }
}

/** "block 812 tx 3 CreateStream: receipts[3].status" for run documents and fixtures. */
function where(kind: DiffKind, doc: unknown, path: Path): string {
  if ((kind === "run" || kind === "fixture") && path[0] === "blocks" && typeof path[1] === "number") {
    const block = (doc as { blocks: Array<Record<string, unknown>> }).blocks[path[1]];
    const label = `block ${String(block?.["height"] ?? `#${path[1]}`)}`;
    const rest = path.slice(2);
    if ((rest[0] === "receipts" || rest[0] === "transactions") && typeof rest[1] === "number") {
      const kindName = kind === "fixture" ? fixtureTxKind(block, rest[1]) : "";
      return `${label} tx ${rest[1]}${kindName}: ${pathText(rest)}`;
    }
    return `${label}: ${pathText(rest)}`;
  }
  return `${kind === "t8n" ? "t8n result" : kind}: ${pathText(path)}`;
}

function fixtureTxKind(block: Record<string, unknown> | undefined, i: number): string {
  const raw = (block?.["transactions"] as unknown[] | undefined)?.[i];
  try {
    return ` ${txKind(decodeEnvelope(fromHex(raw as string)))}`;
  } catch {
    return "";
  }
}

function dumpDiff(a: unknown, b: unknown): string | null {
  let ea, eb;
  try {
    ea = loadDump(a);
    eb = loadDump(b);
  } catch (err) {
    throw new DiffInputError((err as Error).message);
  }
  const d = diffDumps(ea, eb, registryRecords);
  const view = (e: DumpEntry) => show(e.decoded?.value ?? e.value);
  const first = [
    ...d.changed.map((c) => ({ key: c.key, text: changedKey(c.key, c.before, c.after) })),
    ...d.removed.map((e) => ({ key: e.key, text: `key ${e.key}: expected ${view(e)} got (absent)` })),
    ...d.added.map((e) => ({ key: e.key, text: `key ${e.key}: expected (absent) got ${view(e)}` })),
  ].sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0))[0];
  if (first === undefined) return null;
  const count = d.changed.length + d.removed.length + d.added.length;
  return `state: ${first.text}${count > 1 ? ` (and ${count - 1} more differing key(s))` : ""}`;
}

/** A changed key, narrowed to the first differing field of its decoded values. */
export function changedKey(key: string, ours: DumpEntry, theirs: DumpEntry): string {
  const d = firstDivergence(ours.decoded?.value ?? ours.value, theirs.decoded?.value ?? theirs.value);
  if (d === null || d.path.length === 0) return `key ${key}: expected ${show(ours.decoded?.value ?? ours.value)} got ${show(theirs.decoded?.value ?? theirs.value)}`;
  return `key ${key}: ${pathText(d.path)} expected ${show(d.ours)} got ${show(d.theirs)}`;
}

interface TraceLine {
  height?: string;
  tx_index?: number | null;
  kind?: string;
  steps?: Array<Record<string, unknown>>;
}

function traceDiff(ours: unknown[], theirs: unknown[]): string | null {
  for (let i = 0; i < Math.min(ours.length, theirs.length); i++) {
    const a = ours[i] as TraceLine;
    const b = theirs[i] as TraceLine;
    const label = a.tx_index === null || a.tx_index === undefined ? `block ${a.height} (outside transactions)` : `block ${a.height} tx ${a.tx_index} ${a.kind}`;
    const sa = a.steps ?? [];
    const sb = b.steps ?? [];
    for (let k = 0; k < Math.min(sa.length, sb.length); k++) {
      const d = firstDivergence(sa[k], sb[k]);
      if (d === null) continue;
      const op = String(sa[k]!["op"]);
      const nth = sa.slice(0, k + 1).filter((s) => s["op"] === op).length;
      const field = d.path.length === 0 ? "step" : pathText(d.path);
      return `${label}: ${op} #${nth} key ${String(sa[k]!["key"])}: ${field} expected ${show(d.ours)} got ${show(d.theirs)}`;
    }
    if (sa.length !== sb.length) {
      const extra = sa.length > sb.length ? sa[sb.length]! : sb[sa.length]!;
      return `${label}: ${sa.length} state accesses expected, got ${sb.length} (first unmatched: ${extra["op"]} key ${String(extra["key"])})`;
    }
    const d = firstDivergence({ ...a, steps: undefined }, { ...b, steps: undefined });
    if (d !== null) return `${label}: ${pathText(d.path)} expected ${show(d.ours)} got ${show(d.theirs)}`;
  }
  return ours.length === theirs.length ? null : `trace: ${ours.length} lines expected, got ${theirs.length}`;
}
