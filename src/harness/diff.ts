// First divergence between two harness documents (goevmlab convention): run documents,
// fixtures, t8n results, state dumps, JSON-lines traces, and a t8n result against the fixture
// block of its height. Both documents are read and validated completely by the loaders their own
// commands use (src/harness/documents.ts) before anything is compared, so malformed input is a
// refusal (exit 2), never "same". "ours" is the reference (expected), "theirs" the
// implementation under test (got). The first line names the block, transaction and field; the
// indented lines below narrow it as replay does: the differing state keys and fields, an envelope
// decoded field by field.
import { echo } from "../bounds.js";
import { bytesEqual, toHex } from "../bytes.js";
import { decodeEnvelope, type TxEnvelope } from "../chain/envelope.js";
import { receiptJson, type TxReceipt } from "../chain/receipts.js";
import { decode, toJson } from "../codec/core.js";
import * as S from "../codec/schema.js";
import { SYS_CBQS } from "../engine/chain.js";
import type { Json, JsonObject } from "../json/parse.js";
import type { RunBlock, RunDocument } from "../scenario/run.js";
import { diffDumps, type DumpEntry } from "../../state/kv/dump.js";
import { KIND_NAMES, type Document } from "./documents.js";
import type { Fixture, FixtureBlock } from "./fixture.js";
import { registryRecords } from "./records.js";
import { count } from "../format.js";
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

/** Every leaf where the two values differ, in document order (at most `limit`). */
export function allDivergences(a: unknown, b: unknown, limit = 100): Divergence[] {
  const found: Divergence[] = [];
  const stack: Array<{ a: unknown; b: unknown; at: PathNode }> = [{ a, b, at: null }];
  const child = (at: PathNode, key: string | number): PathNode => ({ parent: at, key });
  while (stack.length > 0 && found.length < limit) {
    const { a: x, b: y, at } = stack.pop()!;
    if (Array.isArray(x) && Array.isArray(y) && x.length === y.length) {
      for (let i = x.length - 1; i >= 0; i--) stack.push({ a: x[i], b: y[i], at: child(at, i) });
    } else if (isObj(x) && isObj(y)) {
      const keys = [...Object.keys(x), ...Object.keys(y).filter((k) => !Object.hasOwn(x, k))];
      for (let i = keys.length - 1; i >= 0; i--) stack.push({ a: x[keys[i]!], b: y[keys[i]!], at: child(at, keys[i]!) });
    } else if (firstDivergence(x, y) !== null) {
      found.push({ path: pathOf(at, []), ours: x, theirs: y });
    }
  }
  return found;
}

export function show(v: unknown): string {
  return v === undefined ? "(absent)" : echo(JSON.stringify(v));
}

export const pathText = (p: Path): string => p.map((x) => (typeof x === "number" ? `[${x}]` : `.${x}`)).join("").replace(/^\./, "");

const divergenceText = (d: Divergence, prefix = ""): string =>
  `${prefix}${prefix !== "" && d.path.length > 0 ? "." : ""}${pathText(d.path)} expected ${show(d.ours)} got ${show(d.theirs)}`;

/** What `cbqs diff` prints: the first divergence (null when the two are the same) and a caveat, if any. */
export interface DiffOutcome {
  lines: string[] | null;
  note: string | null;
}

export function compareDocuments(ours: Document, theirs: Document): DiffOutcome {
  const lines = describeDiff(ours, theirs);
  if (ours.kind !== theirs.kind) return { lines, note: `note: ${T8N_STATE_ROOT_CAVEAT}` };
  return { lines, note: ours.kind === "dump" && theirs.kind === "dump" ? notePrefixed(dumpHeaderNote(ours, theirs)) : null };
}

const notePrefixed = (note: string | null): string | null => (note === null ? null : `note: ${note}`);

/** A dump's own `height` and `state_root` members, when it has them. */
interface DumpHeader {
  height?: bigint;
  stateRoot?: Uint8Array;
}

/**
 * Two dumps are compared by their entries alone; when their `height` or `state_root` members
 * differ, this note says so (`diff` and `state diff` both print it): a QMDB state root commits to
 * the history of operations that reached the state, not only to the state, so equal entries can
 * stand under different roots (docs/reference/formats/state-dump.md).
 */
export function dumpHeaderNote(a: DumpHeader, b: DumpHeader): string | null {
  const text = (v: bigint | Uint8Array | undefined): string => (v === undefined ? "(absent)" : typeof v === "bigint" ? v.toString() : toHex(v));
  const sameRoot = a.stateRoot === undefined || b.stateRoot === undefined ? a.stateRoot === b.stateRoot : bytesEqual(a.stateRoot, b.stateRoot);
  const differing = [
    ...(a.height === b.height ? [] : [`height ${text(a.height)} vs ${text(b.height)}`]),
    ...(sameRoot ? [] : [`state_root ${text(a.stateRoot)} vs ${text(b.stateRoot)}`]),
  ];
  if (differing.length === 0) return null;
  return `${differing.join(", ")}: not compared, only the entries are (a state root commits to the history that reached the state, so equal entries can have different roots; docs/spec/state.md §5)`;
}

/** The first divergence in words (a first line, then indented detail lines), or null when the two are the same. */
export function describeDiff(ours: Document, theirs: Document): string[] | null {
  if (ours.kind === "fixture" && theirs.kind === "t8n") return fixtureVsT8n(ours.fixture, theirs.result, "ours");
  if (ours.kind === "t8n" && theirs.kind === "fixture") return fixtureVsT8n(theirs.fixture, ours.result, "theirs");
  if (ours.kind !== theirs.kind) {
    // A run document holds the scenario's results, not a fixture's blocks and roots: the way to compare is to fill it.
    const kinds = new Set([ours.kind, theirs.kind]);
    const next = kinds.has("run") && kinds.has("fixture")
      ? "fill the scenario (cbqs fill) and diff the two fixtures, or check the fixture alone with cbqs replay"
      : "give two documents of the same kind (or a t8n result and a fixture)";
    throw new DiffInputError(`cannot compare a ${KIND_NAMES[ours.kind]} with a ${KIND_NAMES[theirs.kind]}: ${next}`);
  }
  switch (ours.kind) {
    case "fixture":
      return fixtureDiff(ours.fixture, (theirs as typeof ours).fixture);
    case "run":
      return runDiff(ours.run, (theirs as typeof ours).run);
    case "t8n": {
      const d = firstDivergence(ours.result, (theirs as typeof ours).result);
      return d === null ? null : [`t8n result: ${divergenceText(d)}`];
    }
    case "dump": {
      const lines = stateDiffLines(ours.entries, (theirs as typeof ours).entries);
      return lines.length === 0 ? null : [`state: ${lines[0]}${lines.length > 1 ? ` (and ${count(lines.length - 1, "more differing key")})` : ""}`];
    }
    case "trace": {
      const line = traceDiff(ours.lines, (theirs as typeof ours).lines);
      return line === null ? null : [line];
    }
    default:
      throw new DiffInputError(`cbqs diff does not compare a ${KIND_NAMES[ours.kind]}`);
  }
}

// ---- envelopes, field by field --------------------------------------------------------------------

/** An envelope as JSON, its CBQS payload decoded (an undecodable payload stays hex). */
export function envelopeView(raw: Uint8Array): Json {
  let env: TxEnvelope;
  try {
    env = decodeEnvelope(raw);
  } catch {
    return { undecodable: toHex(raw) };
  }
  const body = env.tx.body;
  const view: JsonObject = { chain_id: env.chain_id.toString(), from: toHex(env.tx.from), nonce: env.nonce.toString(), kind: body.kind };
  switch (body.kind) {
    case "system": {
      view["opcode"] = String(body.opcode);
      let payload: Json = toHex(body.payload);
      if (body.opcode === SYS_CBQS) {
        try {
          payload = toJson(S.CbqsInstructionV1, decode(S.CbqsInstructionV1, body.payload));
        } catch {
          // malformed on purpose (a test of the reject path): compare the bytes
        }
      }
      view["payload"] = payload;
      break;
    }
    case "gov": {
      const a = body.action;
      view["action"] =
        a.type === "SetParam"
          ? { type: a.type, name: a.name, value: a.value.toString() }
          : a.type === "SetParams"
            ? { type: a.type, values: a.values.map((v) => ({ name: v.name, value: v.value.toString() })) }
            : a.type === "Unpause"
              ? { type: a.type, actor: toHex(a.actor) }
              : { type: a.type, actor: toHex(a.actor), blocks: a.blocks.toString() };
      break;
    }
    case "transfer":
      view["to"] = toHex(body.to);
      view["amount"] = body.amount.toString();
      break;
  }
  return view;
}

function txLabel(raw: Uint8Array | undefined): string {
  if (raw === undefined) return "";
  try {
    return ` ${txKind(decodeEnvelope(raw))}`;
  } catch {
    return "";
  }
}

// ---- fixtures -------------------------------------------------------------------------------------

const b = (x: Uint8Array): string => toHex(x);

/** Differing state keys as replay shows them (a changed key narrowed to its first differing field). */
function stateDiffLines(ours: Iterable<readonly [Uint8Array, Uint8Array]>, theirs: Iterable<readonly [Uint8Array, Uint8Array]>): string[] {
  const d = diffDumps(ours, theirs, registryRecords);
  const view = (e: DumpEntry) => show(e.decoded?.value ?? e.value);
  return [
    ...d.changed.map((c) => ({ key: c.key, text: changedKey(c.key, c.before, c.after) })),
    ...d.removed.map((e) => ({ key: e.key, text: `key ${e.key}: expected ${view(e)} got (absent)` })),
    ...d.added.map((e) => ({ key: e.key, text: `key ${e.key}: expected (absent) got ${view(e)}` })),
  ]
    .sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0))
    .map((x) => x.text);
}

/** A changed key, narrowed to the first differing field of its decoded values. */
export function changedKey(key: string, ours: DumpEntry, theirs: DumpEntry): string {
  const d = firstDivergence(ours.decoded?.value ?? ours.value, theirs.decoded?.value ?? theirs.value);
  if (d === null || d.path.length === 0) return `key ${key}: expected ${show(ours.decoded?.value ?? ours.value)} got ${show(theirs.decoded?.value ?? theirs.value)}`;
  return `key ${key}: ${divergenceText(d)}`;
}

function receiptDiff(ours: TxReceipt, theirs: TxReceipt): Divergence | null {
  return firstDivergence(receiptJson(ours), receiptJson(theirs));
}

/** One fixture block against another at the same position; null when equal. */
function blockDiff(index: number, ours: FixtureBlock, theirs: FixtureBlock): string[] | null {
  const label = `block ${ours.height}`;
  if (ours.height !== theirs.height) return [`blocks[${index}]: height expected "${ours.height}" got "${theirs.height}"`];
  if (ours.timestamp !== theirs.timestamp) return [`${label}: timestamp expected "${ours.timestamp}" got "${theirs.timestamp}"`];
  const n = Math.min(ours.transactions.length, theirs.transactions.length);
  for (let i = 0; i < n; i++) {
    const x = ours.transactions[i]!;
    const y = theirs.transactions[i]!;
    if (bytesEqual(x, y)) continue;
    const d = firstDivergence(envelopeView(x), envelopeView(y));
    // The envelopes decoded field by field (a CBQS payload down to its instruction's fields).
    return [`${label} tx ${i}${txLabel(x)}: transactions[${i}]${d === null ? "" : `.${pathText(d.path)}`} expected ${show(d?.ours)} got ${show(d?.theirs)}`];
  }
  if (ours.transactions.length !== theirs.transactions.length) return [`${label}: transactions.length expected ${ours.transactions.length} got ${theirs.transactions.length}`];
  for (let i = 0; i < ours.receipts.length; i++) {
    const d = receiptDiff(ours.receipts[i]!, theirs.receipts[i]!);
    if (d !== null) return [`${label} tx ${i}${txLabel(ours.transactions[i])}: ${divergenceText(d, `receipts[${i}]`)}`];
  }
  if (!bytesEqual(ours.state_root, theirs.state_root)) {
    const first = `${label}: state_root expected "${b(ours.state_root)}" got "${b(theirs.state_root)}"`;
    if (ours.post_state === undefined || theirs.post_state === undefined) return [first, "  (both fixtures need a post_state at this block to name the differing keys)"];
    const keys = stateDiffLines(ours.post_state, theirs.post_state);
    return [first, ...(keys.length > 0 ? keys : ["(the post_state dumps are equal: only the stated root differs)"]).map((k) => `  ${k}`)];
  }
  for (const f of ["tx_root", "receipt_root", "logs_root", "block_hash"] as const) {
    if (!bytesEqual(ours[f], theirs[f])) return [`${label}: ${f} expected "${b(ours[f])}" got "${b(theirs[f])}"`];
  }
  if (ours.effective_rent_height !== theirs.effective_rent_height) return [`${label}: effective_rent_height expected "${ours.effective_rent_height}" got "${theirs.effective_rent_height}"`];
  if (ours.gas_vectors_sha256 !== theirs.gas_vectors_sha256) return [`${label}: gas_vectors_sha256 expected "${ours.gas_vectors_sha256}" got "${theirs.gas_vectors_sha256}"`];
  if ((ours.post_state === undefined) !== (theirs.post_state === undefined)) return [`${label}: post_state ${ours.post_state === undefined ? "absent" : "present"} expected, got ${theirs.post_state === undefined ? "absent" : "present"}`];
  if (ours.post_state !== undefined && theirs.post_state !== undefined) {
    const keys = stateDiffLines(ours.post_state, theirs.post_state);
    if (keys.length > 0) return [`${label}: post_state differs (${count(keys.length, "key")})`, ...keys.map((k) => `  ${k}`)];
  }
  return null;
}

function fixtureDiff(ours: Fixture, theirs: Fixture): string[] | null {
  const g = ["source", "chain_instance_id", "state_root"] as const;
  for (const f of g) {
    if (!bytesEqual(ours.genesis[f], theirs.genesis[f])) {
      if (f !== "source") return [`genesis: ${f} expected "${b(ours.genesis[f])}" got "${b(theirs.genesis[f])}"`];
      const d = firstDivergence(genesisView(ours), genesisView(theirs));
      return [d === null ? "genesis: source bytes differ (the same configuration written differently: a different chain_instance_id)" : `genesis: ${divergenceText(d, "source")}`];
    }
  }
  for (let i = 0; i < Math.min(ours.blocks.length, theirs.blocks.length); i++) {
    const d = blockDiff(i, ours.blocks[i]!, theirs.blocks[i]!);
    if (d !== null) return d;
  }
  if (ours.blocks.length !== theirs.blocks.length) return [`blocks.length expected ${ours.blocks.length} got ${theirs.blocks.length}`];
  for (const f of ["name", "description"] as const) if (ours[f] !== theirs[f]) return [`${f} expected ${show(ours[f])} got ${show(theirs[f])}`];
  return null;
}

function genesisView(f: Fixture): Json {
  const c = f.genesis.config;
  return {
    chain_id: c.chain_id.toString(),
    timestamp: c.timestamp.toString(),
    block_time_seconds: c.block_time_seconds.toString(),
    governance: toHex(c.governance),
    params: Object.fromEntries([...c.params].map(([k, v]) => [k, v.toString()])),
    accounts: c.accounts.map((a) => ({ address: toHex(a.address), balance: a.balance.toString() })),
    cycle_price: c.cycle_price.toString(),
    cell_price: c.cell_price.toString(),
  };
}

// ---- run documents ----------------------------------------------------------------------------------

function runDiff(ours: RunDocument, theirs: RunDocument): string[] | null {
  for (const f of ["chain_instance_id", "genesis_state_root"] as const) {
    if (ours[f] !== theirs[f]) return [`${f} expected "${ours[f]}" got "${theirs[f]}"`];
  }
  for (let i = 0; i < Math.min(ours.blocks.length, theirs.blocks.length); i++) {
    const x: RunBlock = ours.blocks[i]!;
    const y: RunBlock = theirs.blocks[i]!;
    const label = `block ${x.height}`;
    for (let k = 0; k < Math.min(x.receipts.length, y.receipts.length); k++) {
      const d = firstDivergence(x.receipts[k], y.receipts[k]);
      if (d !== null) return [`${label} tx ${k}: ${divergenceText(d, `receipts[${k}]`)}`];
    }
    const { receipts: xr, ...xh } = x;
    const { receipts: yr, ...yh } = y;
    if (xr.length !== yr.length) return [`${label}: receipts.length expected ${xr.length} got ${yr.length}`];
    const d = firstDivergence(xh, yh);
    if (d !== null) {
      const lines = [`${label}: ${divergenceText(d)}`];
      if (d.path[0] === "state_root") {
        // A run document has no per-block state: the final state narrows it (when it differs too).
        const s = firstDivergence(ours.state, theirs.state);
        lines.push(s === null ? "  (the final states are equal)" : `  final state: ${divergenceText(s)}`);
      }
      return lines;
    }
  }
  if (ours.blocks.length !== theirs.blocks.length) return [`blocks.length expected ${ours.blocks.length} got ${theirs.blocks.length}`];
  const s = firstDivergence(ours.state, theirs.state);
  if (s !== null) return [`state: ${divergenceText(s)}`];
  const f = firstDivergence(ours.failure ?? null, theirs.failure ?? null);
  return f === null ? null : [`failure: ${divergenceText(f)}`];
}

// ---- a t8n result against a fixture block ------------------------------------------------------------

/** The caveat of docs/reference/formats/fixture.md §4, said wherever a t8n state_root meets a chain's. */
export const T8N_STATE_ROOT_CAVEAT =
  "state_root and block_hash not compared: t8n commits its pre-state as one batch, so its state_root equals the chain's only where the chain reached that state in one batch too (docs/fixtures.md §4)";

/**
 * A t8n result against the fixture block of its height: every transaction included, then receipts
 * field by field, tx/receipt/logs roots, effective_rent_height and the gas-vector digest. `fixtureIs`
 * says which side the fixture was given on (it is the expected side when it is "ours").
 */
function fixtureVsT8n(fixture: Fixture, result: Record<string, Json>, fixtureIs: "ours" | "theirs"): string[] | null {
  const height = BigInt(result["height"] as string);
  const block = fixture.blocks.find((x) => x.height === height);
  if (block === undefined) throw new DiffInputError(`the fixture has no block at the t8n result's height ${height}`);
  const label = `block ${height}`;
  const pair = (fromFixture: unknown, fromT8n: unknown): [unknown, unknown] => (fixtureIs === "ours" ? [fromFixture, fromT8n] : [fromT8n, fromFixture]);
  const rejected = result["rejected"] as Json[];
  if (rejected.length > 0) {
    const r = rejected[0] as JsonObject;
    return [`${label} tx ${String(r["index"])}${txLabel(block.transactions[Number(r["index"])])}: t8n left it out of the block (${show(r["error"])}); the fixture includes every transaction`];
  }
  const receipts = result["receipts"] as JsonObject[];
  for (let i = 0; i < Math.min(receipts.length, block.receipts.length); i++) {
    const { index: _index, ...t } = receipts[i]!;
    void _index;
    const e = t["error"] as JsonObject | null;
    const tj = e === null ? t : { ...t, error: { code: e["code"]!, name: e["name"]! } };
    const [x, y] = pair(receiptJson(block.receipts[i]!), tj);
    const d = firstDivergence(x, y);
    if (d !== null) return [`${label} tx ${i}${txLabel(block.transactions[i])}: ${divergenceText(d, `receipts[${i}]`)}`];
  }
  if (receipts.length !== block.receipts.length) {
    const [x, y] = pair(block.receipts.length, receipts.length);
    return [`${label}: receipts.length expected ${String(x)} got ${String(y)}`];
  }
  for (const f of ["tx_root", "receipt_root", "logs_root"] as const) {
    const [x, y] = pair(b(block[f]), result[f]);
    if (x !== y) return [`${label}: ${f} expected ${show(x)} got ${show(y)}`];
  }
  for (const [f, v] of [["effective_rent_height", block.effective_rent_height.toString()], ["gas_vectors_sha256", block.gas_vectors_sha256]] as const) {
    const [x, y] = pair(v, result[f]);
    if (x !== y) return [`${label}: ${f} expected ${show(x)} got ${show(y)}`];
  }
  return null;
}

// ---- traces -------------------------------------------------------------------------------------------

interface TraceLine {
  height?: Json;
  tx_index?: Json;
  kind?: Json;
  steps?: Array<Record<string, Json>>;
}

function traceDiff(ours: readonly object[], theirs: readonly object[]): string | null {
  for (let i = 0; i < Math.min(ours.length, theirs.length); i++) {
    const a = ours[i] as TraceLine;
    const c = theirs[i] as TraceLine;
    const label = a.tx_index === null || a.tx_index === undefined ? `block ${String(a.height)} (outside transactions)` : `block ${String(a.height)} tx ${String(a.tx_index)} ${String(a.kind)}`;
    const sa = a.steps ?? [];
    const sb = c.steps ?? [];
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
    const d = firstDivergence({ ...a, steps: undefined }, { ...c, steps: undefined });
    if (d !== null) return `${label}: ${divergenceText(d)}`;
  }
  return ours.length === theirs.length ? null : `trace: ${ours.length} lines expected, got ${theirs.length}`;
}
