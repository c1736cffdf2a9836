// Replay benchmark (docs/performance.md): replays the long chain (scripts/gen-long-chain.ts)
// and prints tx/s, blocks/s, where the time goes, and how total time compares with the
// cryptography the same chain cannot avoid (Blake3 of the state commitment, keccak256 of the
// handlers and block roots, Ed25519 verifications), re-run alone on the same inputs.
//
//   node dist/scripts/bench-replay.js [--fixture long-chain.json.gz] [--blocks N]
//
// Without --fixture the chain is generated and filled first (not timed). Timing hooks are
// bench-only: a timing Hasher for the commitment, a timing BlockBatch wrapper, and wrappers
// around the engine meter's keccak/verifyEd25519 methods (restored on exit).
import { performance } from "node:perf_hooks";
import { cpus, totalmem } from "node:os";
import { decode } from "../src/codec/core.js";
import * as S from "../src/codec/schema.js";
import { blake3, keccak256, type Hasher } from "../src/crypto/hash.js";
import { ed25519VerifyStrict } from "../src/crypto/ed25519.js";
import { Meter } from "../src/engine/meter.js";
import { fillScenario } from "../src/harness/fill.js";
import type { Fixture } from "../src/harness/fixture.js";
import { readFixture } from "../src/harness/documents.js";
import { blockResults } from "../src/chain/receipts.js";
import { decodeTransaction } from "../src/harness/execute.js";
import { replayFixture } from "../src/harness/replay.js";
import { parseScenario } from "../src/scenario/parse.js";
import type { BlockBatch, CommitResult, StateAccess, StateStore } from "../state/interface.js";
import { logsRoot, receiptRoot, txRoot } from "../state/roots.js";
import { MemoryStateStore } from "../state/store.js";
import { createStateCommitment } from "../state/qmdb/index.js";
import { generateLongChainScenario } from "./gen-long-chain.js";

const ms = () => performance.now();
const totals = { decode: 0, instructionDecode: 0, state: 0, commit: 0, blake3: 0, meterKeccak: 0, ed25519: 0, execute: 0, roots: 0 };
const counts = { blake3: 0, blake3Bytes: 0, meterKeccak: 0, ed25519: 0, reads: 0, writes: 0 };
/** Inputs of the unavoidable cryptography, re-run alone afterwards. */
const blake3Lengths: number[] = [];
const keccakPreimages: Uint8Array[] = [];
const signatures: Array<[Uint8Array, Uint8Array, Uint8Array]> = [];

const timingBlake3: Hasher = {
  name: "blake3",
  hash(data) {
    const t = ms();
    const out = blake3(data);
    totals.blake3 += ms() - t;
    counts.blake3++;
    counts.blake3Bytes += data.length;
    blake3Lengths.push(data.length);
    return out;
  },
};

class TimingBatch implements BlockBatch {
  constructor(readonly inner: BlockBatch) {}
  get height() {
    return this.inner.height;
  }
  get counts() {
    return this.inner.counts;
  }
  get observer() {
    return this.inner.observer;
  }
  set observer(f: ((a: StateAccess) => void) | undefined) {
    this.inner.observer = f;
  }
  get(key: Uint8Array) {
    const t = ms();
    const v = this.inner.get(key);
    totals.state += ms() - t;
    counts.reads++;
    return v;
  }
  put(key: Uint8Array, value: Uint8Array) {
    const t = ms();
    this.inner.put(key, value);
    totals.state += ms() - t;
    counts.writes++;
  }
  delete(key: Uint8Array) {
    const t = ms();
    this.inner.delete(key);
    totals.state += ms() - t;
    counts.writes++;
  }
  checkpoint() {
    return this.inner.checkpoint();
  }
  rollback(token: number) {
    this.inner.rollback(token);
  }
  release(token: number) {
    this.inner.release(token);
  }
}

class TimingStore implements StateStore {
  constructor(readonly inner: StateStore) {}
  read(key: Uint8Array) {
    return this.inner.read(key);
  }
  root() {
    return this.inner.root();
  }
  entries() {
    return this.inner.entries();
  }
  beginBlock(height: bigint): BlockBatch {
    return new TimingBatch(this.inner.beginBlock(height));
  }
  commitBlock(batch: BlockBatch): CommitResult {
    const t = ms();
    const r = this.inner.commitBlock(batch instanceof TimingBatch ? batch.inner : batch);
    totals.commit += ms() - t;
    return r;
  }
}

function hookMeter(): () => void {
  const proto = Meter.prototype;
  const keccak = proto.keccak;
  const verify = proto.verifyEd25519;
  proto.keccak = function (this: Meter, preimage: Uint8Array) {
    const t = ms();
    const out = keccak.call(this, preimage);
    totals.meterKeccak += ms() - t;
    counts.meterKeccak++;
    keccakPreimages.push(preimage.slice());
    return out;
  };
  proto.verifyEd25519 = function (this: Meter, pk: Uint8Array, msg: Uint8Array, sig: Uint8Array) {
    const t = ms();
    const ok = verify.call(this, pk, msg, sig);
    totals.ed25519 += ms() - t;
    counts.ed25519++;
    signatures.push([pk.slice(), msg.slice(), sig.slice()]);
    return ok;
  };
  return () => {
    proto.keccak = keccak;
    proto.verifyEd25519 = verify;
  };
}

function loadChain(argv: string[]): Fixture {
  const i = argv.indexOf("--fixture");
  if (i >= 0) {
    const file = argv[i + 1]!;
    return readFixture(file);
  }
  const j = argv.indexOf("--blocks");
  const blocks = j >= 0 ? Number(argv[j + 1]) : 10_000;
  process.stderr.write(`bench: generating and filling the long chain (${blocks} blocks; not timed)…\n`);
  const scenario = generateLongChainScenario({ blocks, minTxs: blocks >= 10_000 ? 50_000 : 0 });
  return fillScenario(parseScenario(scenario), "none");
}

/** The unavoidable cryptography of the same chain, alone: same call counts and input sizes. */
function cryptoOnly(f: Fixture): { seconds: number; parts: Record<string, number> } {
  const parts: Record<string, number> = {};
  const time = (name: string, run: () => void) => {
    const t = ms();
    run();
    parts[name] = (ms() - t) / 1000;
  };
  time("blake3 (state commitment)", () => {
    const buf = new Uint8Array(blake3Lengths.reduce((m, n) => Math.max(m, n), 0));
    for (const n of blake3Lengths) blake3(buf.subarray(0, n));
  });
  time("keccak256 (handlers)", () => {
    for (const p of keccakPreimages) keccak256(p);
  });
  time("keccak256 (tx/receipt/logs roots)", () => {
    // The roots are keccak trees; re-running them on the fixture's own receipts is pure hashing.
    for (const b of f.blocks) {
      txRoot(b.transactions);
      receiptRoot(b.receipts.map((r) => ({ status: r.status, errorCode: r.error?.code ?? 0, cycles: r.cycles, cells: r.cells, events: r.events })));
      logsRoot(b.receipts.flatMap((r) => r.events));
    }
  });
  time("ed25519 verify", () => {
    for (const [pk, msg, sig] of signatures) ed25519VerifyStrict(pk, msg, sig);
  });
  return { seconds: Object.values(parts).reduce((a, b) => a + b, 0), parts };
}

function main(argv: string[]): void {
  const fixture = loadChain(argv);
  const txs = fixture.blocks.reduce((n, b) => n + b.transactions.length, 0);
  process.stderr.write(`bench: replaying ${fixture.blocks.length} blocks, ${txs} transactions…\n`);
  const unhook = hookMeter();
  const store = new TimingStore(new MemoryStateStore(createStateCommitment(timingBlake3)));
  // The replay's own decode and root computation, measured by running them once more alone.
  const started = ms();
  const outcome = replayFixture(fixture, { store });
  const total = (ms() - started) / 1000;
  unhook();
  if (outcome.mismatch !== null) throw new Error(`replay mismatch at block ${outcome.mismatch.height}: ${outcome.mismatch.field}`);
  const chainId = fixture.genesis.config.chain_id;
  let t = ms();
  const payloads: Uint8Array[] = [];
  for (const b of fixture.blocks) {
    b.transactions.forEach((raw, i) => {
      const body = decodeTransaction(raw, i, chainId).tx.body;
      if (body.kind === "system") payloads.push(body.payload);
    });
  }
  totals.decode = ms() - t;
  // The engine decodes each CBQS payload inside executeBlock: the same decodes, alone.
  t = ms();
  for (const p of payloads) {
    try {
      decode(S.CbqsInstructionV1, p);
    } catch {
      // malformed payloads of the chain are rejected by the engine the same way
    }
  }
  totals.instructionDecode = ms() - t;
  t = ms();
  for (const b of fixture.blocks) {
    const outcomes = b.receipts.map((r) => ({ status: r.status, error: r.error === null ? null : { ...r.error, message: "" }, events: r.events, cycles: r.cycles, cells: r.cells, reads: 0, writes: 0, hashPreimageLengths: [], signatures: 0 }));
    blockResults(b.transactions, { height: b.height, effectiveRentHeight: b.height, stateRoot: b.state_root, outcomes });
  }
  totals.roots = ms() - t;
  const crypto = cryptoOnly(fixture);

  const s = (x: number) => x / 1000;
  const commitOther = s(totals.commit - totals.blake3);
  const handlers = total - s(totals.decode) - s(totals.instructionDecode) - s(totals.roots) - s(totals.commit) - s(totals.state) - s(totals.meterKeccak) - s(totals.ed25519);
  const rows: Array<[string, number]> = [
    ["envelope decode", s(totals.decode)],
    ["instruction decode (CbqsInstructionV1)", s(totals.instructionDecode)],
    ["handlers + engine (rest)", handlers],
    [`state reads/writes (${counts.reads} reads, ${counts.writes} writes)`, s(totals.state)],
    ["merkleization: QMDB commit without Blake3", commitOther],
    [`hashing: Blake3 in the commitment (${counts.blake3} calls, ${counts.blake3Bytes} bytes)`, s(totals.blake3)],
    [`hashing: keccak256 in handlers (${counts.meterKeccak} calls)`, s(totals.meterKeccak)],
    ["hashing + merkleization: tx/receipt/logs roots", s(totals.roots)],
    [`signature checks (${counts.ed25519} Ed25519)`, s(totals.ed25519)],
  ];
  const lines = [
    `machine: ${cpus()[0]?.model ?? "?"} x${cpus().length}, ${Math.round(totalmem() / 2 ** 30)} GiB, node ${process.version}`,
    `replay: ${fixture.blocks.length} blocks, ${txs} txs in ${total.toFixed(2)} s: ${(fixture.blocks.length / total).toFixed(0)} blocks/s, ${(txs / total).toFixed(0)} tx/s`,
    "time split (s, % of total):",
    ...rows.map(([name, v]) => `  ${v.toFixed(2).padStart(8)}  ${((100 * v) / total).toFixed(1).padStart(5)}%  ${name}`),
    `unavoidable cryptography alone, same inputs: ${crypto.seconds.toFixed(2)} s`,
    ...Object.entries(crypto.parts).map(([name, v]) => `  ${v.toFixed(2).padStart(8)}  ${name}`),
    `ratio total / cryptography: ${(total / crypto.seconds).toFixed(1)}x`,
  ];
  process.stdout.write(lines.join("\n") + "\n");
}

main(process.argv.slice(2));
