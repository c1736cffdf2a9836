// gas-vectors/cip-39-gas-vectors-v1.json (schema cowboy.cbqs.gas-vectors.v1, CIP-39 §18.1):
// generation from the vector definitions, and verification by re-executing each vector from the
// pre-state bytes embedded in the file (nothing else), comparing every number, then checking the
// file's canonical form and its SHA-256 against the pinned digest.
import { echo } from "../bounds.js";
import { fromHex, toHex } from "../bytes.js";
import { childPath, JsonError, parseJson } from "../json/parse.js";
import { sha256 } from "../crypto/hash.js";
import { SYS_CBQS } from "../engine/chain.js";
import { COSTS, RESERVATIONS, type CostSchedule } from "../engine/meter.js";
import { canonicalJson, type Json } from "./canonical-json.js";
import { GAS_VECTORS_SHA256 } from "./pinned.js";
import { runScenario, ScenarioError, type GasScenario, type Measurement, type ScenarioTx } from "./scenario.js";
import { VECTORS } from "./vectors.js";
import { ALL_FAST_PATHS, type EngineChoice } from "../engine/fast-paths.js";

export const SCHEMA_ID = "cowboy.cbqs.gas-vectors.v1";
export const ARTIFACT_PATH = "gas-vectors/cip-39-gas-vectors-v1.json";

const PROVENANCE =
  "Published by cbqs-emulator. The upstream CIP-39 artifact of this name (SHA-256 8bfaf1d47b6f312980c828a0b37d6c4550b97e375d2b3320aa30a72d3f388da2) is not published anywhere we can read; this file is our own schedule and vectors, not that artifact, and its digest differs. See gas-vectors/SCHEDULE.md.";
const SCOPE =
  "CBQS-dispatch portion only (§18.1): the decode surcharge plus the handler's hash, signature and state-I/O work and its state-growth and event cells. Excluded, added by the platform: the transaction base, intrinsic calldata cells, the outer system-instruction dispatch, the sender account read/write and the CIP-12 breaker check.";

/** Unusable input: the file cannot be read as a gas-vector artifact (exit 2). */
export class ArtifactError extends Error {
  override name = "ArtifactError";
}

// ---- rendering --------------------------------------------------------------------------------

const dec = (v: bigint): string => v.toString();

function scheduleJson(costs: CostSchedule): Json {
  return {
    decode_cycles_per_payload_byte: dec(costs.decodeCyclesPerPayloadByte),
    read_cycles: dec(costs.readCycles),
    write_cycles: dec(costs.writeCycles),
    hash_word_cycles: dec(costs.hashWordCycles),
    hash_words: "max(1, ceil(len / 32))",
    ed25519_verify_cycles: dec(costs.ed25519VerifyCycles),
    cells_per_written_byte: dec(costs.cellsPerWrittenByte),
    cells_per_event_byte: dec(costs.cellsPerEventByte),
    rejected: "charged reads/writes = the full reservation; decode, hashes and signatures as performed; cells 0",
  };
}

function reservationsJson(): Json {
  const out: Record<string, Json> = {};
  for (const [name, r] of Object.entries(RESERVATIONS)) out[name] = { reads: r.reads, writes: r.writes };
  return out;
}

const txJson = (tx: ScenarioTx): Json => ({ from: toHex(tx.from), opcode: SYS_CBQS, payload: toHex(tx.payload) });

function preStateJson(s: GasScenario): Json {
  return {
    genesis: {
      source: toHex(s.genesis.source),
      chain_id: dec(s.genesis.chain_id),
      governance: toHex(s.genesis.governance),
      params: s.genesis.params.map(([name, value]) => ({ name, value: dec(value) })),
      accounts: s.genesis.accounts.map(([address, balance]) => ({ address: toHex(address), balance: dec(balance) })),
      cycle_price: "0",
      cell_price: "0",
    },
    setup_blocks: s.setup.map((b) => ({ height: dec(b.height), txs: b.txs.map(txJson) })),
  };
}

/** The measured members of a vector, in order (a generated artifact that differs fails its own verification). */
const MEASURED_FIELDS = ["instruction", "status", "error", "payload_bytes", "reserved", "actual", "charged", "hash_preimage_lengths", "signatures", "written_bytes", "event_bytes", "cycles", "cells"];

function measurementJson(m: Measurement): Record<string, Json> {
  return {
    instruction: m.instruction,
    status: m.status,
    error: m.error,
    payload_bytes: m.payloadBytes,
    reserved: { reads: m.reserved.reads, writes: m.reserved.writes },
    actual: { reads: m.actual.reads, writes: m.actual.writes },
    charged: { reads: m.charged.reads, writes: m.charged.writes },
    hash_preimage_lengths: m.hashPreimageLengths,
    signatures: m.signatures,
    written_bytes: m.writtenBytes,
    event_bytes: m.eventBytes,
    cycles: dec(m.cycles),
    cells: dec(m.cells),
  };
}

function vectorJson(id: string, description: string, s: GasScenario, m: Measurement): Json {
  return {
    id,
    description,
    pre_state: preStateJson(s),
    tx: { height: dec(s.target.height), ...(txJson(s.target) as Record<string, Json>) },
    ...measurementJson(m),
  };
}

/** The artifact's canonical text, derived from the engine; `costs` is injectable for tests, `engine` the engine's fast paths. */
export function generateArtifact(costs: CostSchedule = COSTS, engine: EngineChoice = ALL_FAST_PATHS): string {
  const vectors = VECTORS.map((v) => {
    const s = v.build();
    return vectorJson(v.id, v.description, s, runScenario(s, costs, undefined, engine));
  });
  return canonicalJson({ schema: SCHEMA_ID, provenance: PROVENANCE, scope: SCOPE, schedule: scheduleJson(costs), reservations: reservationsJson(), vectors });
}

export const sha256Hex = (text: string): string => toHex(sha256(new TextEncoder().encode(text))).slice(2);

// ---- parsing ----------------------------------------------------------------------------------

type Obj = Record<string, unknown>;

/** An object; with `fields`, exactly those members (unknown fields are refused, missing ones too). */
function obj(v: unknown, where: string, fields?: readonly string[]): Obj {
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw new ArtifactError(`${where}: expected an object`);
  if (fields !== undefined) {
    for (const k of Object.keys(v)) if (!fields.includes(k)) throw new ArtifactError(`${childPath(where, k)}: unknown field (expected one of: ${fields.join(", ")})`);
    for (const k of fields) if (!Object.hasOwn(v, k)) throw new ArtifactError(`${where}.${k}: missing`);
  }
  return v as Obj;
}

const ROOT_FIELDS = ["schema", "provenance", "scope", "schedule", "reservations", "vectors"];
const VECTOR_FIELDS = ["id", "description", "pre_state", "tx", ...MEASURED_FIELDS];
function arr(v: unknown, where: string): unknown[] {
  if (!Array.isArray(v)) throw new ArtifactError(`${where}: expected an array`);
  return v;
}
function str(v: unknown, where: string): string {
  if (typeof v !== "string") throw new ArtifactError(`${where}: expected a string`);
  return v;
}
function uint(v: unknown, where: string): bigint {
  const s = str(v, where);
  if (!/^(0|[1-9][0-9]*)$/.test(s)) throw new ArtifactError(`${where}: expected a decimal integer string`);
  return BigInt(s);
}
function hex(v: unknown, where: string, length?: number): Uint8Array {
  try {
    return fromHex(str(v, where), length, where);
  } catch (err) {
    throw new ArtifactError((err as Error).message);
  }
}
function tx(v: unknown, where: string, fields = ["from", "opcode", "payload"]): ScenarioTx {
  const o = obj(v, where, fields);
  if (o.opcode !== SYS_CBQS) throw new ArtifactError(`${where}.opcode: expected ${SYS_CBQS}`);
  return { from: hex(o.from, `${where}.from`, 20), payload: hex(o.payload, `${where}.payload`) };
}

function parseScenario(v: Obj, where: string): GasScenario {
  const pre = obj(v.pre_state, `${where}.pre_state`, ["genesis", "setup_blocks"]);
  const gw = `${where}.pre_state.genesis`;
  const g = obj(pre.genesis, gw, ["source", "chain_id", "governance", "params", "accounts", "cycle_price", "cell_price"]);
  const t = obj(v.tx, `${where}.tx`);
  return {
    genesis: {
      source: hex(g.source, `${gw}.source`),
      chain_id: uint(g.chain_id, `${gw}.chain_id`),
      governance: hex(g.governance, `${gw}.governance`, 20),
      params: arr(g.params, `${gw}.params`).map((p, i) => {
        const o = obj(p, `${gw}.params[${i}]`, ["name", "value"]);
        return [str(o.name, `${gw}.params[${i}].name`), uint(o.value, `${gw}.params[${i}].value`)];
      }),
      accounts: arr(g.accounts, `${gw}.accounts`).map((a, i) => {
        const o = obj(a, `${gw}.accounts[${i}]`, ["address", "balance"]);
        return [hex(o.address, `${gw}.accounts[${i}].address`, 20), uint(o.balance, `${gw}.accounts[${i}].balance`)];
      }),
    },
    setup: arr(pre.setup_blocks, `${where}.pre_state.setup_blocks`).map((b, i) => {
      const bw = `${where}.pre_state.setup_blocks[${i}]`;
      const o = obj(b, bw, ["height", "txs"]);
      return { height: uint(o.height, `${bw}.height`), txs: arr(o.txs, `${bw}.txs`).map((x, j) => tx(x, `${bw}.txs[${j}]`)) };
    }),
    target: { height: uint(t.height, `${where}.tx.height`), ...tx(t, `${where}.tx`, ["height", "from", "opcode", "payload"]) },
  };
}

// ---- verification -----------------------------------------------------------------------------

export type VerifyResult = { ok: true; sha256: string; vectors: number } | { ok: false; reason: string };

/** Decimal strings print as plain numbers in a mismatch report. */
const show = (v: Json | undefined): string => (typeof v === "string" && /^[0-9]+$/.test(v) ? v : JSON.stringify(v ?? null));

/** The first leaf where `actual` differs from `expected`, as "path: expected X, actual Y". */
function firstDifference(expected: Json, actual: Json, path: string): string | null {
  if (expected !== null && actual !== null && typeof expected === "object" && typeof actual === "object") {
    if (Array.isArray(expected) !== Array.isArray(actual)) return `${path}: expected ${show(expected)}, actual ${show(actual)}`;
    if (Array.isArray(expected) && Array.isArray(actual)) {
      for (let i = 0; i < Math.max(expected.length, actual.length); i++) {
        if (i >= expected.length || i >= actual.length) return `${path}: expected ${expected.length} entries, actual ${actual.length}`;
        const d = firstDifference(expected[i]!, actual[i]!, `${path}[${i}]`);
        if (d !== null) return d;
      }
      return null;
    }
    const e = expected as Record<string, Json>;
    const a = actual as Record<string, Json>;
    for (const k of new Set([...Object.keys(e), ...Object.keys(a)])) {
      if (!(k in e) || !(k in a)) return `${path ? path + "." : ""}${k}: expected ${show(e[k])}, actual ${show(a[k])}`;
      const d = firstDifference(e[k]!, a[k]!, path ? `${path}.${k}` : k);
      if (d !== null) return d;
    }
    return null;
  }
  return expected === actual ? null : `${path}: expected ${show(expected)}, actual ${show(actual)}`;
}

/** One check of an artifact: `run` gives null when it holds, else the difference in words. */
export interface ArtifactCheck {
  /** "cost table", a vector's id, "canonical form" or "pinned SHA-256". */
  name: string;
  vector: boolean;
  run: () => string | null;
}

/** A check that was run. */
export interface CheckResult {
  check: ArtifactCheck;
  difference: string | null;
}

/**
 * The checks of `text`, in order: the cost table, every vector (re-executed against the engine,
 * every recorded number compared), the canonical form, the pinned digest. The whole artifact is
 * read first: unusable input throws ArtifactError before any check runs, so a malformed vector
 * is exit 2 even after a differing one.
 */
export function artifactChecks(text: string, pinned: string = GAS_VECTORS_SHA256): { sha256: string; checks: ArtifactCheck[] } {
  let parsed: unknown;
  try {
    parsed = parseJson(text);
  } catch (err) {
    if (err instanceof JsonError) throw new ArtifactError(err.message);
    throw err;
  }
  const root = obj(parsed, "$", ROOT_FIELDS);
  if (root.schema !== SCHEMA_ID) throw new ArtifactError(`$.schema: ${echo(JSON.stringify(root.schema), 60)} is not "${SCHEMA_ID}"`);
  const vectors = arr(root.vectors, "$.vectors").map((v, i) => {
    const o = obj(v, `$.vectors[${i}]`, VECTOR_FIELDS);
    return { o, id: str(o.id, `$.vectors[${i}].id`), scenario: parseScenario(o, `$.vectors[${i}]`) };
  });
  // Everywhere below "expected" is what the file records and "actual" what the engine gives; the difference says so.
  const sides = " (expected: the file's value, actual: the engine's)";
  const digest = sha256Hex(text);
  const costTable: ArtifactCheck = {
    name: "cost table",
    vector: false,
    run: () => {
      const d = firstDifference(
        { schedule: (root.schedule ?? null) as Json, reservations: (root.reservations ?? null) as Json },
        { schedule: scheduleJson(COSTS), reservations: reservationsJson() },
        "",
      );
      return d === null ? null : `cost table differs from the engine: ${d}${sides}`;
    },
  };
  const vectorChecks = vectors.map(({ o, id, scenario }): ArtifactCheck => ({
    name: id,
    vector: true,
    run: () => {
      let m: Measurement;
      try {
        m = runScenario(scenario);
      } catch (err) {
        if (err instanceof ScenarioError) return `vector ${id}: cannot re-execute: ${err.message}`;
        throw err;
      }
      const recorded: Record<string, Json> = {};
      const fresh = measurementJson(m);
      for (const k of Object.keys(fresh)) recorded[k] = (o[k] ?? null) as Json;
      const d = firstDifference(recorded, fresh, "");
      return d === null ? null : `vector ${id}: ${d}${sides}`;
    },
  }));
  const canonical: ArtifactCheck = {
    name: "canonical form",
    vector: false,
    run: () => (canonicalJson(parsed as Json) === text ? null : "the file is not in canonical form (key order, whitespace or trailing newline)"),
  };
  const pinnedDigest: ArtifactCheck = {
    name: "pinned SHA-256",
    vector: false,
    run: () => (digest === pinned ? null : `SHA-256 ${digest} is not the pinned GAS_VECTORS_SHA256 ${pinned} (src/gas/pinned.ts)`),
  };
  return { sha256: digest, checks: [costTable, ...vectorChecks, canonical, pinnedDigest] };
}

/** The verdict of checks that were run: the first difference in their order, or ok. */
export function artifactVerdict(sha256: string, results: readonly CheckResult[]): VerifyResult {
  const first = results.find((r) => r.difference !== null);
  if (first !== undefined) return { ok: false, reason: first.difference! };
  return { ok: true, sha256, vectors: results.filter((r) => r.check.vector).length };
}

/**
 * Re-executes every vector of `text` against the engine and compares every recorded number;
 * then checks canonical form and the pinned digest. Throws ArtifactError on unusable input.
 */
export function verifyArtifact(text: string, pinned: string = GAS_VECTORS_SHA256): VerifyResult {
  const { sha256, checks } = artifactChecks(text, pinned);
  return artifactVerdict(sha256, checks.map((check) => ({ check, difference: check.run() })));
}
