// commonware's conformance digests for the storage roots (docs/reference/anchors.md): for each seed
// s = 0..n_cases-1 a workload yields bytes; the digest is SHA-256 over, per seed, the
// little-endian u64 byte length followed by the bytes (commonware conformance/src/lib.rs,
// `compute_conformance_hash`). Every workload here runs with SHA-256, as the published values do.
import { sha256 as nobleSha256 } from "@noble/hashes/sha2.js";
import { concatBytes, toHex, u64BE } from "../../src/bytes.js";
import { SHA256 } from "../../src/crypto/hash.js";
import { bmtRoot } from "../roots/bmt.js";
import { Mmr } from "./mmr.js";
import { AnyDb, type QmdbConfig, type Write } from "./any.js";
import { CurrentDb } from "./current.js";
import { fixedCodec, rawValue, variableCodec } from "./operation.js";

export interface ConformanceWorkload {
  /** commonware test name, as in storage/conformance.toml. */
  name: string;
  nCases: number;
  /** Published digest (docs/reference/anchors.md, commonware commit dc41a895f069). */
  published: string;
  /** The bytes committed for one seed. */
  commit: (seed: number) => Uint8Array;
}

export function conformanceDigest(nCases: number, commit: (seed: number) => Uint8Array): string {
  const h = nobleSha256.create();
  for (let seed = 0; seed < nCases; seed++) {
    const out = commit(seed);
    h.update(u64BE(out.length).reverse());
    h.update(out);
  }
  return toHex(h.digest()).replace(/^0x/, "");
}

/** Element `i` of the Merkle workloads: SHA-256(u64be(i)). */
export function testElement(i: number): Uint8Array {
  return SHA256.hash(u64BE(i));
}

/** merkle::conformance MmrRootStability: root of an MMR of `seed` test elements. */
export function mmrRootStability(seed: number): Uint8Array {
  const mmr = new Mmr(SHA256);
  for (let i = 0; i < seed; i++) mmr.append(testElement(i));
  return mmr.root();
}

/** bmt::tests::conformance RootConformance: BMT root of `seed` test elements. */
export function bmtRootConformance(seed: number): Uint8Array {
  return bmtRoot(SHA256, Array.from({ length: seed }, (_, i) => testElement(i)));
}

// ---- qmdb/conformance.rs `keyed_root`: Digest keys and Digest values, SHA-256, 32-byte chunks.

function toVal(i: number, salt: number): Uint8Array {
  return SHA256.hash(concatBytes(u64BE(i), u64BE(BigInt(salt) + 1n)));
}

/** A key whose first byte is `prefix` (a OneCap translator collision) and last 8 bytes `suffix`. */
function collidingDigest(prefix: number, suffix: number): Uint8Array {
  const out = new Uint8Array(32);
  out[0] = prefix;
  out.set(u64BE(suffix), 24);
  return out;
}

/** ~20% of keys, varying with the seed. */
const isDeleted = (seed: number, i: number): boolean => (seed ^ i) % 5 === 0;

/** The four batches of `keyed_root`, in order. */
export function keyedWorkload(seed: number): Write[][] {
  const n = (seed % 50) + 5;
  const prefix = seed % 256;
  const range = (count: number): number[] => Array.from({ length: count }, (_, i) => i);
  const half = Math.floor(n / 2);
  const batch1: Write[] = range(n).map((i) => [testElement(i), toVal(i, 1)]);
  const batch2: Write[] = range(n).map((i) => [testElement(i), isDeleted(seed, i) ? undefined : toVal(i, 2)]);
  const batch3: Write[] = [
    ...range(n)
      .filter((i) => isDeleted(seed, i))
      .map((i): Write => [testElement(i), toVal(i, 3)]),
    ...range(half).map((i): Write => [collidingDigest(prefix, 10000 + i), toVal(i, 4)]),
  ];
  const batch4: Write[] = [
    ...range(n).map((i): Write => [testElement(i), toVal(i, 5)]),
    ...range(half).map((i): Write => [collidingDigest(prefix, 10000 + i), i % 2 === 1 ? undefined : toVal(i, 6)]),
  ];
  return [batch1, batch2, batch3, batch4];
}

export type QmdbVariant = "any" | "current";
export type QmdbEncoding = "variable" | "fixed";

export function conformanceQmdbConfig(encoding: QmdbEncoding): QmdbConfig {
  return {
    hasher: SHA256,
    codec: encoding === "variable" ? variableCodec(32, rawValue) : fixedCodec(32, 32),
    chunkBytes: 32,
    keyLength: 32,
  };
}

/** Root after the keyed workload of `seed` on the given database variant. */
export function keyedRoot(variant: QmdbVariant, encoding: QmdbEncoding, seed: number): Uint8Array {
  const config = conformanceQmdbConfig(encoding);
  const db = variant === "any" ? new AnyDb(config) : new CurrentDb(config);
  for (const batch of keyedWorkload(seed)) db.applyBatch(batch);
  return db.root();
}

/** One batch of a traced workload: the encoded operations it appended and the roots after it. */
export interface TraceStep {
  batch: number;
  start: number;
  ops: string[];
  floor: number;
  opsRoot: string;
  root: string;
}

/** The keyed workload of `seed`, batch by batch, for diffing against another implementation. */
export function traceKeyedWorkload(variant: QmdbVariant, encoding: QmdbEncoding, seed: number): TraceStep[] {
  const config = conformanceQmdbConfig(encoding);
  const db = new CurrentDb(config);
  return keyedWorkload(seed).map((writes, batch) => {
    const trace = db.applyBatch(writes);
    return {
      batch: batch + 1,
      start: trace.start,
      ops: Array.from({ length: trace.count }, (_, i) => toHex(db.any.encodedOperation(trace.start + i))),
      floor: trace.floor,
      opsRoot: toHex(db.any.root()),
      root: toHex(variant === "any" ? db.any.root() : db.root()),
    };
  });
}

/** The six commonware workloads of docs/reference/anchors.md, with their published digests. */
export const COMMONWARE_WORKLOADS: readonly ConformanceWorkload[] = [
  {
    name: "merkle::conformance::tests::MmrRootStability",
    nCases: 200,
    published: "4078ce1f5e242f8edb1d41575d51e166af620404036124f8094fc74d4b401047",
    commit: mmrRootStability,
  },
  {
    name: "bmt::tests::conformance::RootConformance",
    nCases: 200,
    published: "18b1108f18520078e2eb5bb29c6a4cdf3bded6b52d8efda19d45c0f10be27207",
    commit: bmtRootConformance,
  },
  {
    name: "qmdb::conformance::tests::AnyMmrUnorderedVariableConf",
    nCases: 200,
    published: "22374a7cbdfa0bdac17e2e285422a54375fec27017942ef7abea2cf8da298c70",
    commit: (seed) => keyedRoot("any", "variable", seed),
  },
  {
    name: "qmdb::conformance::tests::CurrentMmrUnorderedVariableConf",
    nCases: 200,
    published: "0d0591823b7d5ed8dcb940d086ec214062eb3cfffd018e9fbadf9e16ce8da0f7",
    commit: (seed) => keyedRoot("current", "variable", seed),
  },
  {
    name: "qmdb::conformance::tests::AnyMmrUnorderedFixedConf",
    nCases: 200,
    published: "79c5de9509b38d619ea082cdee833f80eadfa0ef21211f69039ee2d37de07bad",
    commit: (seed) => keyedRoot("any", "fixed", seed),
  },
  {
    name: "qmdb::conformance::tests::CurrentMmrUnorderedFixedConf",
    nCases: 200,
    published: "8ce052fef8ce8e4d817a2961144cf3a28aec4bd6eb75d32b013499116a6981da",
    commit: (seed) => keyedRoot("current", "fixed", seed),
  },
];
