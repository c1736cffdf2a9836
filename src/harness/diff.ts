// First divergence between two harness documents of the same kind (goevmlab convention): run
// documents, fixtures, t8n results, state dumps, or JSON-lines traces. Both are read and
// validated completely by the loaders their own commands use (src/harness/documents.ts) before
// anything is compared, so malformed input is a refusal (exit 2), never "same". "ours" is the
// reference (expected), "theirs" the implementation under test (got).
import { fromHex } from "../bytes.js";
import { decodeEnvelope } from "../chain/envelope.js";
import type { Json } from "../json/parse.js";
import { diffDumps, type DumpEntry } from "../../state/dump.js";
import { KIND_NAMES, type Document } from "./documents.js";
import { blockJson, fixtureHeader } from "./fixture.js";
import { registryRecords } from "./records.js";
import { txKind } from "./trace.js";

/** Two documents that cannot be compared (different kinds, or a kind diff does not take): exit 2. */
export class DiffInputError extends Error {
  override name = "DiffInputError";
}

type Path = Array<string | number>;
interface Divergence {
  path: Path;
  ours: unknown;
  theirs: unknown;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A path as a chain to its parent: extending it costs O(1), however deep the document. */
type PathNode = { parent: PathNode | null; key: string | number } | null;
type Task = { a: unknown; b: unknown; at: PathNode } | { found: { at: PathNode; ours: unknown; theirs: unknown } };

function pathOf(node: PathNode, base: Path): Path {
  const keys: Path = [];
  for (let n = node; n !== null; n = n.parent) keys.push(n.key);
  return [...base, ...keys.reverse()];
}

/**
 * Depth-first, in document order: the first place where the two JSON values differ. Iterative
 * (an explicit stack), so no input depth can exhaust the call stack.
 */
export function firstDivergence(a: unknown, b: unknown, path: Path = []): Divergence | null {
  const stack: Task[] = [{ a, b, at: null }];
  const child = (at: PathNode, key: string | number): PathNode => ({ parent: at, key });
  while (stack.length > 0) {
    const task = stack.pop()!;
    if ("found" in task) return { path: pathOf(task.found.at, path), ours: task.found.ours, theirs: task.found.theirs };
    const { a: x, b: y, at } = task;
    if (Array.isArray(x) && Array.isArray(y)) {
      // Processed last: a length difference counts only when every common element is equal.
      if (x.length !== y.length) stack.push({ found: { at: child(at, "length"), ours: x.length, theirs: y.length } });
      for (let i = Math.min(x.length, y.length) - 1; i >= 0; i--) stack.push({ a: x[i], b: y[i], at: child(at, i) });
      continue;
    }
    if (isObj(x) && isObj(y)) {
      const keys = [...Object.keys(x), ...Object.keys(y).filter((k) => !Object.hasOwn(x, k))];
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i]!;
        if (!Object.hasOwn(y, k)) stack.push({ found: { at: child(at, k), ours: x[k], theirs: undefined } });
        else if (!Object.hasOwn(x, k)) stack.push({ found: { at: child(at, k), ours: undefined, theirs: y[k] } });
        else stack.push({ a: x[k], b: y[k], at: child(at, k) });
      }
      continue;
    }
    const same = (x === null || typeof x !== "object") && (y === null || typeof y !== "object") ? x === y : false;
    if (!same) return { path: pathOf(at, path), ours: x, theirs: y };
  }
  return null;
}

const MAX_VALUE_CHARS = 200;

export function show(v: unknown): string {
  if (v === undefined) return "(absent)";
  const s = JSON.stringify(v);
  return s.length > MAX_VALUE_CHARS ? `${s.slice(0, MAX_VALUE_CHARS)}… (${s.length} characters)` : s;
}

export const pathText = (p: Path): string => p.map((x) => (typeof x === "number" ? `[${x}]` : `.${x}`)).join("").replace(/^\./, "");

/** A document as the JSON its writer produces (the order the divergence is searched in). */
function asJson(d: Document): unknown {
  switch (d.kind) {
    case "fixture":
      return { ...fixtureHeader(d.fixture), blocks: d.fixture.blocks.map(blockJson) };
    case "run":
      return d.run;
    case "t8n":
      return d.result;
    default:
      throw new DiffInputError(`cbqs diff does not compare a ${KIND_NAMES[d.kind]}`);
  }
}

/** The first divergence in words, or null when the two are the same. */
export function describeDiff(ours: Document, theirs: Document): string | null {
  if (ours.kind !== theirs.kind) throw new DiffInputError(`cannot compare a ${KIND_NAMES[ours.kind]} with a ${KIND_NAMES[theirs.kind]}`);
  if (ours.kind === "dump" && theirs.kind === "dump") return dumpDiff(ours.entries, theirs.entries);
  if (ours.kind === "trace" && theirs.kind === "trace") return traceDiff(ours.lines, theirs.lines);
  const a = asJson(ours);
  const d = firstDivergence(a, asJson(theirs));
  return d === null ? null : `${where(ours.kind, a, d.path)} expected ${show(d.ours)} got ${show(d.theirs)}`;
}

/** "block 812 tx 3 CreateStream: receipts[3].status" for run documents and fixtures. */
function where(kind: Document["kind"], doc: unknown, path: Path): string {
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
  return `${KIND_NAMES[kind]}: ${pathText(path)}`;
}

function fixtureTxKind(block: Record<string, unknown> | undefined, i: number): string {
  const raw = (block?.["transactions"] as unknown[] | undefined)?.[i];
  try {
    return ` ${txKind(decodeEnvelope(fromHex(raw as string)))}`;
  } catch {
    return "";
  }
}

function dumpDiff(a: Iterable<readonly [Uint8Array, Uint8Array]>, b: Iterable<readonly [Uint8Array, Uint8Array]>): string | null {
  const d = diffDumps(a, b, registryRecords);
  const view = (e: DumpEntry) => show(e.decoded?.value ?? e.value);
  const first = [
    ...d.changed.map((c) => ({ key: c.key, text: changedKey(c.key, c.before, c.after) })),
    ...d.removed.map((e) => ({ key: e.key, text: `key ${e.key}: expected ${view(e)} got (absent)` })),
    ...d.added.map((e) => ({ key: e.key, text: `key ${e.key}: expected (absent) got ${view(e)}` })),
  ].sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0))[0];
  if (first === undefined) return null;
  const count = d.changed.length + d.removed.length + d.added.length;
  return `state: ${first.text}${count > 1 ? ` (and ${count - 1} more differing ${count - 1 === 1 ? "key" : "keys"})` : ""}`;
}

/** A changed key, narrowed to the first differing field of its decoded values. */
export function changedKey(key: string, ours: DumpEntry, theirs: DumpEntry): string {
  const d = firstDivergence(ours.decoded?.value ?? ours.value, theirs.decoded?.value ?? theirs.value);
  if (d === null || d.path.length === 0) return `key ${key}: expected ${show(ours.decoded?.value ?? ours.value)} got ${show(theirs.decoded?.value ?? theirs.value)}`;
  return `key ${key}: ${pathText(d.path)} expected ${show(d.ours)} got ${show(d.theirs)}`;
}

interface TraceLine {
  height?: Json;
  tx_index?: Json;
  kind?: Json;
  steps?: Array<Record<string, Json>>;
}

function traceDiff(ours: readonly object[], theirs: readonly object[]): string | null {
  for (let i = 0; i < Math.min(ours.length, theirs.length); i++) {
    const a = ours[i] as TraceLine;
    const b = theirs[i] as TraceLine;
    const label = a.tx_index === null || a.tx_index === undefined ? `block ${String(a.height)} (outside transactions)` : `block ${String(a.height)} tx ${String(a.tx_index)} ${String(a.kind)}`;
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
      return `${label}: ${sa.length} state accesses expected, got ${sb.length} (first unmatched: ${String(extra["op"])} key ${String(extra["key"])})`;
    }
    const d = firstDivergence({ ...a, steps: undefined }, { ...b, steps: undefined });
    if (d !== null) return `${label}: ${pathText(d.path)} expected ${show(d.ours)} got ${show(d.theirs)}`;
  }
  return ours.length === theirs.length ? null : `trace: ${ours.length} lines expected, got ${theirs.length}`;
}
