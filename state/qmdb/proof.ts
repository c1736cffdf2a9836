// State proofs (CIP-4 §5.4, §8.2, Appendix C): a key's current value proven against `state_root`
// with commonware's "current" OperationProof — the key's active Update operation, the bitmap
// chunk holding its activity bit, and a range proof over the grafted tree (storage/src/qmdb/
// current/proof/mod.rs at dc41a895f069). The JSON shape is Appendix C plus the fields a
// standalone verifier needs: `key`, `value` and `inactive_peaks` (D-0045).
import { echo, MAX_EXCLUSION_PROOF_OPS as OPS_BOUND, MAX_PROOF_KEYS } from "../../src/bounds.js";
import { bytesEqual, fromHex, toHex } from "../../src/bytes.js";
import { childPath } from "../../src/json/parse.js";
import {
  MAX_PROOF_DIGESTS_PER_ELEMENT,
  ProofError,
  buildMultiProof,
  buildRangeProof,
  reconstructMultiRoot,
  reconstructRangeRoot,
  type MmrProof,
} from "./mmr.js";
import type { QmdbConfig } from "./any.js";
import type { Operation } from "./operation.js";
import { CurrentDb, combineRoots, graftingProofHasher } from "./current.js";
import { stateDbConfig } from "./index.js";

export const PROOF_VERSION = 1;
/** CIP-4 §5.4/§8.2: at most 256 keys per batch proof (src/bounds.ts owns every input bound). */
export const MAX_MULTI_PROOF_KEYS = MAX_PROOF_KEYS;

/** Appendix C single-key proof (plus key, value, inactive_peaks). Hex is 0x-prefixed. */
export interface StateProof {
  proof_version: number;
  key: string;
  value: string;
  loc: number;
  chunk: string;
  mmr_leaves: number;
  inactive_peaks: number;
  digests: string[];
  partial_chunk_digest: string | null;
  ops_root: string;
}

export interface MultiProofEntry {
  key: string;
  value: string;
  loc: number;
  chunk: string;
}

/** §8.2 batch proof: one digest list (position order, shared nodes once) for all entries. */
export interface MultiStateProof {
  proof_version: number;
  entries: MultiProofEntry[];
  mmr_leaves: number;
  inactive_peaks: number;
  digests: string[];
  partial_chunk_digest: string | null;
  ops_root: string;
}

/** An operation of the log, as an exclusion proof lists it. */
export type ProofOp =
  | { op: "update"; key: string; value: string }
  | { op: "delete"; key: string }
  | { op: "commit"; floor: number };

/**
 * Proof that `key` has no current value: commonware's "current" RangeProof over every operation
 * from the inactivity floor (`loc`) to the last commit, with their bitmap chunks. Every active
 * operation lies at or above the floor, and none of the active Updates is for `key`.
 */
export interface ExclusionProof {
  proof_version: number;
  key: string;
  value: null;
  loc: number;
  ops: ProofOp[];
  chunks: string[];
  mmr_leaves: number;
  inactive_peaks: number;
  digests: string[];
  partial_chunk_digest: string | null;
  ops_root: string;
}

export type VerifyResult = { valid: true } | { valid: false; reason: string };

/**
 * A proof document that is not a well-formed proof at all (missing or unknown field, wrong type,
 * wrong hex length, a bound exceeded, an unsupported proof_version): unusable input, as opposed
 * to a well-formed proof that does not verify. `path` is the JSON path of the problem.
 */
export class ProofFormatError extends ProofError {
  override name = "ProofFormatError";
  constructor(
    /** The verifier's own words (verifyStateProof's `reason`, unchanged since proofs existed). */
    message: string,
    readonly path: string,
    /** What is wrong at `path`, for an error line that names the JSON path. */
    readonly reason: string,
  ) {
    super(message);
  }
}

const BAGGING = "backward";

interface Located {
  key: Uint8Array;
  value: Uint8Array;
  loc: number;
  chunk: Uint8Array;
}

function locate(db: CurrentDb, key: Uint8Array): Located {
  const loc = db.any.locationOf(key);
  if (loc === undefined) throw new ProofError(`key ${toHex(key)} has no current value`);
  const chunkBits = db.any.bitmap.chunkBits;
  return { key, value: db.get(key)!, loc, chunk: db.any.bitmap.chunk(Math.floor(loc / chunkBits)) };
}

function commonParts(db: CurrentDb): { partial_chunk_digest: string | null; ops_root: string } {
  const parts = db.rootParts();
  return {
    partial_chunk_digest: parts.partial === undefined ? null : toHex(parts.partial.digest),
    ops_root: toHex(parts.opsRoot),
  };
}

function proofOp(op: Operation): ProofOp {
  switch (op.kind) {
    case "update":
      return { op: "update", key: toHex(op.key), value: toHex(op.value) };
    case "delete":
      return { op: "delete", key: toHex(op.key) };
    case "commit":
      return { op: "commit", floor: op.floor };
  }
}

/**
 * Proof of `key`'s current value in `db`, or — when it has none — an exclusion proof. An
 * unordered QMDB can only show absence by exhibiting every operation from the inactivity floor
 * on, so exclusion proofs grow with the live state (D-0045).
 */
export function proveKey(db: CurrentDb, key: Uint8Array): StateProof | ExclusionProof {
  if (db.any.locationOf(key) === undefined) return proveAbsent(db, key);
  return proveInclusion(db, key);
}

function proveAbsent(db: CurrentDb, key: Uint8Array): ExclusionProof {
  if (key.length !== db.config.keyLength) throw new ProofError(`key must be ${db.config.keyLength} bytes`);
  const start = db.any.inactivityFloor;
  const end = db.any.mmr.leaves;
  const proof = buildRangeProof(
    db.config.hasher,
    end,
    db.graftedInactivePeaks(),
    BAGGING,
    start,
    end,
    (pos) => db.graftedNode(pos),
  );
  const chunkBits = db.any.bitmap.chunkBits;
  const chunks: string[] = [];
  for (let c = Math.floor(start / chunkBits); c <= Math.floor((end - 1) / chunkBits); c++) {
    chunks.push(toHex(db.any.bitmap.chunk(c)));
  }
  const ops: ProofOp[] = [];
  for (let loc = start; loc < end; loc++) ops.push(proofOp(db.any.operation(loc)));
  return {
    proof_version: PROOF_VERSION,
    key: toHex(key),
    value: null,
    loc: start,
    ops,
    chunks,
    mmr_leaves: proof.leaves,
    inactive_peaks: proof.inactivePeaks,
    digests: proof.digests.map(toHex),
    ...commonParts(db),
  };
}

/** Proof that `key`'s current value in `db` is what the proof states. */
export function proveInclusion(db: CurrentDb, key: Uint8Array): StateProof {
  const target = locate(db, key);
  const proof = buildRangeProof(
    db.config.hasher,
    db.any.mmr.leaves,
    db.graftedInactivePeaks(),
    BAGGING,
    target.loc,
    target.loc + 1,
    (pos) => db.graftedNode(pos),
  );
  return {
    proof_version: PROOF_VERSION,
    key: toHex(target.key),
    value: toHex(target.value),
    loc: target.loc,
    chunk: toHex(target.chunk),
    mmr_leaves: proof.leaves,
    inactive_peaks: proof.inactivePeaks,
    digests: proof.digests.map(toHex),
    ...commonParts(db),
  };
}

/** §8.2 batch proof for up to 256 distinct keys, each with a current value. */
export function proveKeys(db: CurrentDb, keys: readonly Uint8Array[]): MultiStateProof {
  if (keys.length === 0) throw new ProofError("no keys to prove");
  if (keys.length > MAX_MULTI_PROOF_KEYS) {
    throw new ProofError(`${keys.length} keys requested; at most ${MAX_MULTI_PROOF_KEYS} per proof (CIP-4 §8.2)`);
  }
  if (new Set(keys.map(toHex)).size !== keys.length) throw new ProofError("duplicate key in batch proof");
  // Batch proofs cover keys with a current value only; absence is proven key by key.
  const targets = keys.map((key) => locate(db, key));
  const proof = buildMultiProof(
    db.any.mmr.leaves,
    db.graftedInactivePeaks(),
    BAGGING,
    targets.map((t) => t.loc),
    (pos) => db.graftedNode(pos),
  );
  return {
    proof_version: PROOF_VERSION,
    entries: targets.map((t) => ({ key: toHex(t.key), value: toHex(t.value), loc: t.loc, chunk: toHex(t.chunk) })),
    mmr_leaves: proof.leaves,
    inactive_peaks: proof.inactivePeaks,
    digests: proof.digests.map(toHex),
    ...commonParts(db),
  };
}

// ---- Standalone verification: only the proof, the root and the database configuration.

const jsonPath = (what: string): string => (what === "proof" ? "$" : what.startsWith("proof.") ? `$.${what.slice(6)}` : `$.${what}`);

function field(obj: Record<string, unknown>, name: string, where = "proof"): unknown {
  if (!Object.hasOwn(obj, name)) throw new ProofFormatError(`missing field ${name}`, `${jsonPath(where)}.${name}`, "missing");
  return obj[name];
}

function asRecord(value: unknown, what: string, allowed: readonly string[]): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ProofFormatError(`${what} is not an object`, jsonPath(what), "expected a JSON object");
  const record = value as Record<string, unknown>;
  for (const name of Object.keys(record)) {
    if (!allowed.includes(name)) {
      throw new ProofFormatError(`unknown field ${echo(name)} in ${what}`, childPath(jsonPath(what), name), `unknown field (expected one of: ${allowed.join(", ")})`);
    }
  }
  return record;
}

function asIndex(value: unknown, what: string): number {
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 0) {
    throw new ProofFormatError(`${what} must be a non-negative integer`, jsonPath(what), "expected a non-negative integer");
  }
  return value;
}

function asHex(value: unknown, what: string, length?: number): Uint8Array {
  if (typeof value !== "string") throw new ProofFormatError(`${what} must be a hex string`, jsonPath(what), "expected a 0x-prefixed hex string");
  try {
    return fromHex(value, length, what);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new ProofFormatError(message, jsonPath(what), message.replace(`${what}: `, ""));
  }
}

function asDigests(value: unknown, max: number, digestLength: number): Uint8Array[] {
  if (!Array.isArray(value)) throw new ProofFormatError("digests must be an array", "$.digests", "expected a JSON array");
  if (value.length > max) throw new ProofFormatError(`${value.length} digests exceed the bound ${max}`, "$.digests", `${value.length} digests exceed the bound ${max}`);
  return value.map((d, i) => asHex(d, `digests[${i}]`, digestLength));
}

interface ParsedCommon {
  leaves: number;
  inactivePeaks: number;
  partial: Uint8Array | undefined;
  opsRoot: Uint8Array;
}

function parseCommon(record: Record<string, unknown>, digestLength: number): ParsedCommon {
  if (field(record, "proof_version") !== PROOF_VERSION) throw new ProofFormatError("unsupported proof_version", "$.proof_version", `unsupported (this verifier reads proof_version ${PROOF_VERSION})`);
  const partialRaw = field(record, "partial_chunk_digest");
  return {
    leaves: asIndex(field(record, "mmr_leaves"), "mmr_leaves"),
    inactivePeaks: asIndex(field(record, "inactive_peaks"), "inactive_peaks"),
    partial: partialRaw === null ? undefined : asHex(partialRaw, "partial_chunk_digest", digestLength),
    opsRoot: asHex(field(record, "ops_root"), "ops_root", digestLength),
  };
}

function parseEntry(record: Record<string, unknown>, config: QmdbConfig, what: string): Located {
  return {
    key: asHex(field(record, "key", what), `${what}.key`, config.keyLength),
    value: asHex(field(record, "value", what), `${what}.value`),
    loc: asIndex(field(record, "loc", what), `${what}.loc`),
    chunk: asHex(field(record, "chunk", what), `${what}.chunk`, config.chunkBytes),
  };
}

/**
 * Checks one entry's bitmap evidence (OperationProof::verify + RangeProof::reconstruct_root):
 * the activity bit is set, and a chunk inside the trailing partial chunk matches its digest.
 */
function checkEntry(entry: Located, common: ParsedCommon, config: QmdbConfig): void {
  const chunkBits = config.chunkBytes * 8;
  const bit = entry.loc % chunkBits;
  if ((entry.chunk[bit >> 3]! & (1 << (bit & 7))) === 0) throw new ProofError("operation is not active in its chunk");
  if (entry.loc >= common.leaves) throw new ProofError("loc beyond mmr_leaves");
  const complete = Math.floor(common.leaves / chunkBits);
  const hasPartial = common.leaves % chunkBits !== 0;
  if (hasPartial !== (common.partial !== undefined)) throw new ProofError("partial_chunk_digest presence mismatch");
  if (Math.floor(entry.loc / chunkBits) === complete && !bytesEqual(config.hasher.hash(entry.chunk), common.partial!)) {
    throw new ProofError("chunk does not match partial_chunk_digest");
  }
}

/** What a verifier rebuilt from a proof, step by step (`cbqs verify-proof` reports it). */
export interface Reconstruction {
  kind: "single" | "batch" | "exclusion";
  /** The proven keys and the locations of their active operations (exclusion: the floor). */
  keys: Array<{ key: Uint8Array; loc: number }>;
  /** Digests the path used. */
  digests: number;
  /** The grafted tree's root rebuilt from the operation(s), their bitmap chunk(s) and the digests. */
  graftedRoot: Uint8Array;
  /** The ops_root the proof states; it is bound only through the combined root. */
  opsRoot: Uint8Array;
  partial: { nextBit: number; digest: Uint8Array } | undefined;
  /** H(ops_root ‖ grafted_root [‖ next_bit ‖ partial digest]): must equal the state root. */
  root: Uint8Array;
}

function canonicalRoot(
  kind: Reconstruction["kind"],
  keys: Reconstruction["keys"],
  digests: number,
  common: ParsedCommon,
  graftedRoot: Uint8Array,
  config: QmdbConfig,
): Reconstruction {
  const nextBit = common.leaves % (config.chunkBytes * 8);
  const partial = common.partial === undefined ? undefined : { nextBit, digest: common.partial };
  return { kind, keys, digests, graftedRoot, opsRoot: common.opsRoot, partial, root: combineRoots(config.hasher, common.opsRoot, graftedRoot, partial) };
}

function elementFor(entry: Located, config: QmdbConfig) {
  const chunkBits = config.chunkBytes * 8;
  return {
    element: config.codec.encode({ kind: "update", key: entry.key, value: entry.value }),
    loc: entry.loc,
    ph: graftingProofHasher(config.hasher, Math.log2(chunkBits), Math.floor(entry.loc / chunkBits), [entry.chunk]),
  };
}

const SINGLE_FIELDS = [
  "proof_version",
  "key",
  "value",
  "loc",
  "chunk",
  "mmr_leaves",
  "inactive_peaks",
  "digests",
  "partial_chunk_digest",
  "ops_root",
] as const;
const MULTI_FIELDS = [
  "proof_version",
  "entries",
  "mmr_leaves",
  "inactive_peaks",
  "digests",
  "partial_chunk_digest",
  "ops_root",
] as const;
const ENTRY_FIELDS = ["key", "value", "loc", "chunk"] as const;
const EXCLUSION_FIELDS = [
  "proof_version",
  "key",
  "value",
  "loc",
  "ops",
  "chunks",
  "mmr_leaves",
  "inactive_peaks",
  "digests",
  "partial_chunk_digest",
  "ops_root",
] as const;
/** Bound on the operations an exclusion proof may list before anything is allocated for them. */
export const MAX_EXCLUSION_PROOF_OPS = OPS_BOUND;

function parseOp(raw: unknown, config: QmdbConfig, what: string): Operation {
  const kind = typeof raw === "object" && raw !== null ? (raw as Record<string, unknown>).op : undefined;
  switch (kind) {
    case "update": {
      const r = asRecord(raw, what, ["op", "key", "value"]);
      return {
        kind: "update",
        key: asHex(field(r, "key", what), `${what}.key`, config.keyLength),
        value: asHex(field(r, "value", what), `${what}.value`),
      };
    }
    case "delete": {
      const r = asRecord(raw, what, ["op", "key"]);
      return { kind: "delete", key: asHex(field(r, "key", what), `${what}.key`, config.keyLength) };
    }
    case "commit": {
      const r = asRecord(raw, what, ["op", "floor"]);
      return { kind: "commit", floor: asIndex(field(r, "floor", what), `${what}.floor`) };
    }
    default:
      throw new ProofFormatError(`${what}.op must be update, delete or commit`, `${jsonPath(what)}.op`, 'expected "update", "delete" or "commit"');
  }
}

/**
 * Exclusion proof (RangeProof::reconstruct_root over [floor, leaves)): the range must end at the
 * last commit and start at that commit's floor; no active Update in it may be for the key.
 */
function reconstructExclusionRoot(proof: unknown, config: QmdbConfig, digestLength: number): Reconstruction {
  const record = asRecord(proof, "proof", EXCLUSION_FIELDS);
  const common = parseCommon(record, digestLength);
  const key = asHex(field(record, "key"), "key", config.keyLength);
  const start = asIndex(field(record, "loc"), "loc");
  const rawOps = field(record, "ops");
  if (!Array.isArray(rawOps) || rawOps.length === 0) throw new ProofFormatError("ops must be a non-empty array", "$.ops", "expected a non-empty JSON array");
  if (rawOps.length > MAX_EXCLUSION_PROOF_OPS) throw new ProofFormatError(`more than ${MAX_EXCLUSION_PROOF_OPS} ops`, "$.ops", `more than ${MAX_EXCLUSION_PROOF_OPS} ops`);
  const ops = rawOps.map((raw, i) => parseOp(raw, config, `ops[${i}]`));
  const chunkBits = config.chunkBytes * 8;
  const end = start + ops.length;
  if (end !== common.leaves) throw new ProofError("ops do not reach the last operation");
  const last = ops[ops.length - 1]!;
  if (last.kind !== "commit" || last.floor !== start) throw new ProofError("range does not start at the committed floor");
  const startChunk = Math.floor(start / chunkBits);
  const rawChunks = field(record, "chunks");
  const chunkCount = Math.floor((end - 1) / chunkBits) - startChunk + 1;
  if (!Array.isArray(rawChunks)) throw new ProofFormatError(`chunks must list ${chunkCount} chunks`, "$.chunks", "expected a JSON array");
  if (rawChunks.length !== chunkCount) throw new ProofError(`chunks must list ${chunkCount} chunks`);
  const chunks = rawChunks.map((c, i) => asHex(c, `chunks[${i}]`, config.chunkBytes));
  const hasPartial = common.leaves % chunkBits !== 0;
  if (hasPartial !== (common.partial !== undefined)) throw new ProofError("partial_chunk_digest presence mismatch");
  if (hasPartial && !bytesEqual(config.hasher.hash(chunks[chunks.length - 1]!), common.partial!)) {
    throw new ProofError("last chunk does not match partial_chunk_digest");
  }
  ops.forEach((op, i) => {
    const loc = start + i;
    const chunk = chunks[Math.floor(loc / chunkBits) - startChunk]!;
    const bit = loc % chunkBits;
    const active = (chunk[bit >> 3]! & (1 << (bit & 7))) !== 0;
    if (active && op.kind === "update" && bytesEqual(op.key, key)) throw new ProofError("key has a current value");
  });
  const mmrProof: MmrProof = {
    leaves: common.leaves,
    inactivePeaks: common.inactivePeaks,
    digests: asDigests(field(record, "digests"), MAX_PROOF_DIGESTS_PER_ELEMENT, digestLength),
  };
  const ph = graftingProofHasher(config.hasher, Math.log2(chunkBits), startChunk, chunks);
  const elements = ops.map((op) => config.codec.encode(op));
  return canonicalRoot("exclusion", [{ key, loc: start }], mmrProof.digests.length, common, reconstructRangeRoot(ph, mmrProof, elements, start, BAGGING), config);
}

function reconstructRoot(proof: unknown, config: QmdbConfig): Reconstruction {
  const digestLength = config.hasher.hash(new Uint8Array()).length;
  const isObject = typeof proof === "object" && proof !== null;
  if (isObject && Object.hasOwn(proof, "value") && (proof as { value: unknown }).value === null) {
    return reconstructExclusionRoot(proof, config, digestLength);
  }
  const isMulti = isObject && Object.hasOwn(proof, "entries");
  if (!isMulti) {
    const record = asRecord(proof, "proof", SINGLE_FIELDS);
    const common = parseCommon(record, digestLength);
    const entry = parseEntry(record, config, "proof");
    const mmrProof: MmrProof = {
      leaves: common.leaves,
      inactivePeaks: common.inactivePeaks,
      digests: asDigests(field(record, "digests"), MAX_PROOF_DIGESTS_PER_ELEMENT, digestLength),
    };
    checkEntry(entry, common, config);
    const { element, ph } = elementFor(entry, config);
    const grafted = reconstructRangeRoot(ph, mmrProof, [element], entry.loc, BAGGING);
    return canonicalRoot("single", [{ key: entry.key, loc: entry.loc }], mmrProof.digests.length, common, grafted, config);
  }
  const record = asRecord(proof, "proof", MULTI_FIELDS);
  const common = parseCommon(record, digestLength);
  const rawEntries = field(record, "entries");
  if (!Array.isArray(rawEntries) || rawEntries.length === 0) throw new ProofFormatError("entries must be a non-empty array", "$.entries", "expected a non-empty JSON array");
  if (rawEntries.length > MAX_MULTI_PROOF_KEYS) {
    throw new ProofFormatError(`more than ${MAX_MULTI_PROOF_KEYS} entries`, "$.entries", `more than ${MAX_MULTI_PROOF_KEYS} entries (CIP-4 §8.2)`);
  }
  const entries = rawEntries.map((raw, i) => parseEntry(asRecord(raw, `entries[${i}]`, ENTRY_FIELDS), config, `entries[${i}]`));
  if (new Set(entries.map((e) => toHex(e.key))).size !== entries.length) throw new ProofError("duplicate key");
  if (new Set(entries.map((e) => e.loc)).size !== entries.length) throw new ProofError("duplicate loc");
  const mmrProof: MmrProof = {
    leaves: common.leaves,
    inactivePeaks: common.inactivePeaks,
    digests: asDigests(field(record, "digests"), MAX_PROOF_DIGESTS_PER_ELEMENT * entries.length, digestLength),
  };
  for (const entry of entries) checkEntry(entry, common, config);
  const grafted = reconstructMultiRoot(
    mmrProof,
    entries.map((e) => elementFor(e, config)),
    BAGGING,
  );
  return canonicalRoot("batch", entries.map((e) => ({ key: e.key, loc: e.loc })), mmrProof.digests.length, common, grafted, config);
}

/**
 * Verifies a single-key or batch state proof against `root`. Needs nothing but the proof and
 * the root (and, for tooling, the database configuration: Cowboy's by default).
 */
export function verifyStateProof(proof: unknown, root: Uint8Array, config: QmdbConfig = stateDbConfig()): VerifyResult {
  const r = verifyStateProofDetailed(proof, root, config);
  return r.valid ? { valid: true } : { valid: false, reason: r.reason };
}

export type DetailedVerifyResult =
  | { valid: true; reconstruction: Reconstruction }
  | { valid: false; malformed: false; reason: string; reconstruction?: Reconstruction }
  | { valid: false; malformed: true; reason: string; path: string; problem: string };

/**
 * As verifyStateProof, telling a malformed proof document (ProofFormatError: `malformed`, with the
 * JSON path) from a well-formed proof that does not verify, and returning what was rebuilt.
 */
export function verifyStateProofDetailed(proof: unknown, root: Uint8Array, config: QmdbConfig = stateDbConfig()): DetailedVerifyResult {
  let reconstruction: Reconstruction;
  try {
    reconstruction = reconstructRoot(proof, config);
  } catch (err) {
    if (err instanceof ProofFormatError) return { valid: false, malformed: true, reason: err.message, path: err.path, problem: err.reason };
    if (err instanceof ProofError || err instanceof RangeError) return { valid: false, malformed: false, reason: err.message };
    throw err;
  }
  return bytesEqual(reconstruction.root, root)
    ? { valid: true, reconstruction }
    : { valid: false, malformed: false, reason: "root mismatch", reconstruction };
}
