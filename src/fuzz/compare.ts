// Our t8n result against theirs, block by block, in the order a reader wants the first
// difference named: which transactions were left out (`rejected`), then each receipt (status,
// error code and name, events, cycles, cells), then the post-state key by key, then the roots.
// Words come from the harness differ (src/harness/diff.ts, the same text as `cbqs diff`); only
// consensus is compared: rejection messages and `rejected` reasons are each tool's own words.
import { bytesEqual } from "../bytes.js";
import { describeDiff } from "../harness/diff.js";
import type { Json } from "../json/parse.js";
import { DumpEntries } from "../../state/kv/dump.js";
import type { Entries } from "../target/target.js";
import type { TargetOutput } from "../target/target.js";

/**
 * Our side of one block: a fuzz chain's (src/fuzz/build.ts) or a fixture's (src/consume/).
 * `result` has the chain's state_root; `ours` is the per-call t8n of the same inputs, whose
 * state_root commits the pre-state as one batch (read only for a "per_block" target).
 */
export interface ComparedBlock {
  height: bigint;
  result: Record<string, unknown>;
  readonly postState: Entries;
  readonly ours: { result: Record<string, unknown> };
  /** Per input transaction, what it is in words. */
  kinds: string[];
}

export interface CompareOptions {
  /** Compare state_root too (only between tools that commit the alloc as one batch, docs/reference/formats/fixture.md §4). */
  stateRoot: boolean;
}

/**
 * Which of our state roots theirs is compared with: "per_block", our per-call t8n's (the block's
 * pre-state committed as one batch); "chain", our chain's from genesis (a server session opened
 * on the genesis state, docs/reference/formats/t8n-server.md).
 */
export type StateRootKind = "per_block" | "chain";

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const list = (v: unknown, f: (x: Obj) => unknown): unknown => (Array.isArray(v) ? v.map((x) => (isObj(x) ? f(x) : x)) : v);

/** The consensus fields of a t8n result, rebuilt in a fixed key order (so JSON text equality is value equality). */
function consensus(r: Obj, opts: CompareOptions): { head: Obj; roots: Obj } {
  const head = {
    format: r["format"],
    height: r["height"],
    rejected: list(r["rejected"], (x) => ({ index: x["index"] })),
    receipts: list(r["receipts"], (x) => ({
      index: x["index"],
      tx_hash: x["tx_hash"],
      status: x["status"],
      error: isObj(x["error"]) ? { code: x["error"]["code"], name: x["error"]["name"] } : x["error"],
      events: list(x["events"], (e) => ({ emitter: e["emitter"], topic: e["topic"], payload: e["payload"] })),
      cycles: x["cycles"],
      cells: x["cells"],
    })),
  };
  const roots: Obj = {
    tx_root: r["tx_root"],
    receipt_root: r["receipt_root"],
    logs_root: r["logs_root"],
    effective_rent_height: r["effective_rent_height"],
    gas_vectors_sha256: r["gas_vectors_sha256"],
  };
  if (opts.stateRoot) {
    roots["state_root"] = r["state_root"];
    // A block hash commits to the state root. There is one when the env gave the parent hash;
    // an absent one stays undefined, which JSON leaves out.
    roots["block_hash"] = r["block_hash"];
  }
  return { head, roots };
}

const same = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

function sameEntries(a: Entries, b: Entries): boolean {
  return a.length === b.length && a.every(([k, v], i) => bytesEqual(k, b[i]![0]) && bytesEqual(v, b[i]![1]));
}

/** Our result with the state root theirs is compared with: the chain's, or our per-call t8n's. */
export function oursResult(block: ComparedBlock, kind: StateRootKind): Obj {
  return kind === "chain" ? block.result : block.ours.result;
}

/** Whether their result alone differs from ours (the cheap check: no post-state needed). */
export function resultDiffers(block: ComparedBlock, theirs: Obj, opts: CompareOptions, kind: StateRootKind = "per_block"): boolean {
  const ours = consensus(oursResult(block, kind), opts);
  const got = consensus(theirs, opts);
  return !same(ours.head, got.head) || !same(ours.roots, got.roots);
}

/** The first difference between our t8n and theirs on one block, in words, or null. */
export function firstDifference(block: ComparedBlock, theirs: TargetOutput, opts: CompareOptions, kind: StateRootKind = "per_block"): string | null {
  const ours = consensus(oursResult(block, kind), opts);
  const got = consensus(theirs.result, opts);
  const at = `block ${block.height}`;
  if (!same(ours.head, got.head)) return `${at}${receiptLabel(block, ours.head, got.head)}: ${words(ours.head, got.head)}`;
  const post = block.postState;
  if (!sameEntries(post, theirs.allocEntries)) return `${at}: ${dumpWords(post, theirs.allocEntries)}`;
  if (!same(ours.roots, got.roots)) return `${at}: ${words(ours.roots, got.roots)}`;
  return null;
}

function words(ours: Obj, theirs: Obj): string {
  const lines = describeDiff({ kind: "t8n", result: ours as Record<string, Json> }, { kind: "t8n", result: theirs as Record<string, Json> });
  return lines?.join(" ") ?? "the t8n result differs";
}

function dumpWords(ours: Entries, theirs: Entries): string {
  const lines = describeDiff({ kind: "dump", entries: dumpEntriesOf(ours) }, { kind: "dump", entries: dumpEntriesOf(theirs) });
  return lines?.join(" ") ?? "the post-state differs";
}

function dumpEntriesOf(entries: Entries): DumpEntries {
  const out = new DumpEntries();
  for (const [k, v] of entries) out.push(k, v);
  return out;
}

/** " tx 3 SettleStreamRent" when the first difference is inside a receipt. */
function receiptLabel(block: ComparedBlock, ours: Obj, theirs: Obj): string {
  if (!same(ours["format"], theirs["format"]) || !same(ours["height"], theirs["height"]) || !same(ours["rejected"], theirs["rejected"])) return "";
  const a = ours["receipts"] as unknown[];
  const b = Array.isArray(theirs["receipts"]) ? theirs["receipts"] : [];
  const i = a.findIndex((r, k) => !same(r, b[k]));
  if (i < 0) return "";
  const tx = Number((a[i] as Obj)["index"]);
  return ` tx ${tx} ${block.kinds[tx] ?? ""}`.trimEnd();
}
