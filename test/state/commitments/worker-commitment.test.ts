// WorkerCommitment (state/commitment/worker-commitment.ts), the state commitment of the pipelined
// replay, held against the plain QMDB commitment it must equal: the same batches give the same
// roots, values and entries whether each commit settles at once or many are in flight, whether a
// batch goes through the shared ring or (larger than the ring) by message, across the ring's
// wrap-around, a refusal and its rewind, and a reset. The worker runs compiled, so this file
// drives dist/ (a dist/ older than its sources is refused, as in the other tests that run it).
import fc from "fast-check";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireFreshDist } from "../../fuzz/dist.js";

type WorkerModule = typeof import("../../../state/commitment/worker-commitment.js");
type QmdbModule = typeof import("../../../state/qmdb/index.js");
type RingModule = typeof import("../../../src/crypto/signature-ring.js");
type RootsModule = typeof import("../../../state/roots/roots.js");
type Commitment = InstanceType<WorkerModule["WorkerCommitment"]>;
type Change = readonly [Uint8Array, Uint8Array | undefined];

let W: WorkerModule;
let Q: QmdbModule;
let R: RingModule;
let roots: RootsModule;
const dist = (path: string) => new URL(`../../../dist/${path}`, import.meta.url).href;

beforeAll(async () => {
  requireFreshDist();
  W = (await import(dist("state/commitment/worker-commitment.js"))) as WorkerModule;
  Q = (await import(dist("state/qmdb/index.js"))) as QmdbModule;
  R = (await import(dist("src/crypto/signature-ring.js"))) as RingModule;
  roots = (await import(dist("state/roots/roots.js"))) as RootsModule;
});

const opened: Commitment[] = [];
afterAll(() => {
  for (const c of opened) c.close();
});

function open(ring?: ReturnType<RingModule["allocateSignatureRing"]>): Commitment {
  const c = new W.WorkerCommitment(ring);
  opened.push(c);
  return c;
}

const key = (i: number): Uint8Array => new Uint8Array(54).fill(i + 1);
const value = (n: number, fill: number): Uint8Array => new Uint8Array(n).fill(fill);
const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");
const plain = (entries: Iterable<[Uint8Array, Uint8Array]>): string[][] => [...entries].map(([k, v]) => [hex(k), hex(v)]);

/** Copies of a batch: the commitment keeps the arrays it is handed, the reference gets its own. */
const copy = (batch: readonly Change[]): Change[] => batch.map(([k, v]) => [k.slice(), v?.slice()]);

/** A deferred WorkerCommitment and the reference, given the same batches: the roots each returned. */
function deferredBeside() {
  const c = open();
  c.deferred = true;
  const reference = Q.createStateCommitment();
  const returned: Uint8Array[] = [];
  const expected: string[] = [];
  const commit = (changes: Change[]) => {
    returned.push(c.commitBatch(copy(changes)));
    expected.push(hex(reference.commitBatch(copy(changes))));
  };
  return { c, reference, commit, returned, expected };
}

describe("WorkerCommitment equals the QMDB commitment it runs on its worker", () => {
  it("fast-check: any batches, settled at once or deferred, give the reference's roots, values and entries; reset starts over", () => {
    const c = open();
    // Per batch: which of 10 keys change (unique and sorted by construction) and how: a value of 0..40 bytes, or a deletion.
    const batch = fc.uniqueArray(fc.tuple(fc.integer({ min: 0, max: 9 }), fc.option(fc.integer({ min: 0, max: 40 }), { nil: undefined })), { selector: (t) => t[0], maxLength: 6 });
    const run = fc.array(fc.record({ changes: batch, deferred: fc.boolean() }), { minLength: 1, maxLength: 12 });
    fc.assert(
      fc.property(run, (batches) => {
        c.reset();
        const jobsBefore = c.jobs;
        const reference = Q.createStateCommitment();
        const held = new Set<number>();
        const returned: Uint8Array[] = [];
        const expected: string[] = [];
        for (const [n, { changes, deferred }] of batches.entries()) {
          // A deletion of an absent key is not a change a block can make: those are left out.
          const sorted = [...changes].sort((a, b) => a[0] - b[0]).filter(([k, v]) => v !== undefined || held.has(k));
          const changeSet: Change[] = sorted.map(([k, v]) => [key(k), v === undefined ? undefined : value(v, n + 1)]);
          for (const [k, v] of sorted) v === undefined ? held.delete(k) : held.add(k);
          c.deferred = deferred;
          returned.push(c.commitBatch(copy(changeSet)));
          expected.push(hex(reference.commitBatch(copy(changeSet))));
          // Values are answered at once, deferred or not.
          for (let k = 0; k < 10; k++) expect(c.get(key(k)) && hex(c.get(key(k))!)).toBe(reference.get(key(k)) && hex(reference.get(key(k))!));
        }
        expect(hex(c.root())).toBe(expected.at(-1));
        expect(returned.map(hex)).toEqual(expected);
        expect(plain(c.entries())).toEqual(plain(reference.entries()));
        expect(c.jobs - jobsBefore).toBe(batches.length);
      }),
      { numRuns: 25, seed: 2212 },
    );
  });

  it("a commit that is not deferred settles at once; a deferred one is filled in by settle, and ready says which", () => {
    const c = open();
    const first = c.commitBatch([[key(0), value(3, 1)]]);
    expect(first.some((b) => b !== 0)).toBe(true);
    expect(c.ready(0)).toBe(true);
    c.deferred = true;
    const second = c.commitBatch([[key(1), value(3, 2)]]);
    expect(hex(second)).toBe("00".repeat(32));
    c.settle(2);
    expect(c.ready(1)).toBe(true);
    expect(c.ready(2)).toBe(false);
    const reference = Q.createStateCommitment();
    reference.commitBatch([[key(0), value(3, 1)]]);
    expect(hex(second)).toBe(hex(reference.commitBatch([[key(1), value(3, 2)]])));
  });

  it("more deferred commits than the ring holds (64): the oldest are settled to make room, every root is the reference's", () => {
    const { c, commit, returned, expected } = deferredBeside();
    for (let n = 0; n < 100; n++) commit([[key(n % 7), value(1 + (n % 5), n)]]);
    // Room for each job past the 64th was made by settling the oldest: before the 100th, jobs 0..35 (64 in flight), no more.
    expect(hex(returned[35]!)).toBe(expected[35]);
    expect(hex(returned[36]!)).toBe("00".repeat(32));
    expect(hex(returned[99]!)).toBe("00".repeat(32));
    expect(hex(c.root())).toBe(expected[99]);
    expect(returned.map(hex)).toEqual(expected);
  });

  it("batches past the end of the 16 MiB byte ring start again at its beginning; a batch larger than the ring goes by message", () => {
    const { c, reference, commit, returned, expected } = deferredBeside();
    // 20 batches of 1 MiB values: the byte ring (16 MiB) is full after 15 and reused from its start.
    for (let n = 0; n < 20; n++) commit([[key(n % 3), value(1 << 20, n)]]);
    // 260 values of 64 KiB: 17 MiB in one batch, more than the whole ring.
    commit(Array.from({ length: 260 }, (_, i): Change => [new Uint8Array(54).fill(0xf0).map((b, j) => (j < 2 ? (i >> (8 * j)) & 0xff : b)), value(1 << 16, i)]).sort((a, b) => Buffer.compare(a[0], b[0])));
    commit([[key(0), undefined]]);
    expect(hex(c.root())).toBe(expected.at(-1));
    expect(returned.map(hex)).toEqual(expected);
    expect(plain(c.entries())).toEqual(plain(reference.entries()));
  });

  it("deferRoots gives a block's tx, receipt and logs roots as blockRoots computes them, in order with the state batches", () => {
    const c = open();
    c.deferred = true;
    const txHashes = [new Uint8Array(32).fill(1), new Uint8Array(32).fill(2)];
    const receipts = [
      { status: "ok" as const, errorCode: 0, cycles: 10n, cells: 2n, events: [{ emitter: new Uint8Array(20).fill(0x17), topic: "StreamCreated", payload: value(9, 9) }] },
      { status: "rejected" as const, errorCode: 3, cycles: 1n, cells: 0n, events: [] },
    ];
    const state = c.commitBatch([[key(2), value(4, 4)]]);
    const deferred = c.deferRoots(roots.rootsJob(txHashes, receipts));
    expect(hex(deferred.logs_root)).toBe("00".repeat(32));
    // The state root stays the state batch's: a roots job is no state.
    expect(hex(c.root())).toBe(hex(state));
    // A roots job's three roots and the next job's result, settled together: neither overwrites the other.
    const again = c.deferRoots(roots.rootsJob(txHashes, receipts));
    const next = c.commitBatch([[key(3), value(4, 4)]]);
    // Both done by the worker before this thread reads either result.
    c.wake();
    while (!c.ready(3));
    c.settle(c.jobs);
    const expected = roots.blockRoots(txHashes, receipts);
    for (const r of [deferred, again]) expect([hex(r.tx_root), hex(r.receipt_root), hex(r.logs_root)]).toEqual([hex(expected.tx_root), hex(expected.receipt_root), hex(expected.logs_root)]);
    const reference = Q.createStateCommitment();
    reference.commitBatch([[key(2), value(4, 4)]]);
    expect(hex(next)).toBe(hex(reference.commitBatch([[key(3), value(4, 4)]])));
    expect(c.jobs).toBe(4);
  });

  it("get answers a copy; view the array the commit was handed; entries are copies in key order", () => {
    const c = open();
    const v = value(5, 7);
    c.commitBatch([
      [key(1), value(2, 1)],
      [key(3), v],
    ]);
    expect(c.view(key(3))).toBe(v);
    const got = c.get(key(3))!;
    expect(got).not.toBe(v);
    got[0] = 0;
    expect(c.get(key(3))![0]).toBe(7);
    expect(c.get(key(2))).toBeUndefined();
    const entries = c.entries();
    expect(entries.map(([k]) => k[0])).toEqual([2, 4]);
    entries[1]![1][0] = 0;
    expect(c.view(key(3))![0]).toBe(7);
    entries[1]![0][0] = 0;
    expect(c.entries().map(([k]) => k[0])).toEqual([2, 4]);
    // The root array handed out is a copy too.
    c.root().fill(0);
    const reference = Q.createStateCommitment();
    reference.commitBatch([
      [key(1), value(2, 1)],
      [key(3), value(5, 7)],
    ]);
    expect(hex(c.root())).toBe(hex(reference.root()));
  });
});

describe("WorkerCommitment: a state batch executed with an invalid signature check is refused and rewound", () => {
  function signatureChecks() {
    const shared = R.allocateSignatureRing();
    const c = open(shared);
    const ring = new R.SignatureRing(shared, c.wake);
    // A check that fails: a zero signature by a zero key (not a valid Ed25519 signature of anything).
    const postInvalid = () => expect(ring.post(new Uint8Array(32), value(3, 1), new Uint8Array(64))).toBe(true);
    return { c, ring, postInvalid };
  }

  it("the refused batch and every job after it are undone; the next job takes the refused one's number; the roots are the reference's", () => {
    const { c, ring, postInvalid } = signatureChecks();
    c.deferred = true;
    c.commitBatch([[key(0), value(2, 1)]]); // job 0, no checks
    postInvalid();
    c.checks = { from: 0, to: ring.size };
    c.commitBatch([[key(0), value(2, 2)], [key(1), value(2, 2)]]); // job 1, refused
    const later = c.commitBatch([[key(2), value(2, 3)]]); // job 2: posted after the refused one, undone with it
    // Until the rewind the values are the ones executed, refused or not.
    expect(c.get(key(1))).toBeDefined();
    let refused: unknown;
    try {
      c.root();
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(W.BatchRefused);
    expect((refused as InstanceType<WorkerModule["BatchRefused"]>).job).toBe(1);
    expect((refused as Error).message).toBe("the commit worker refused state batch 1: it was executed with an invalid signature check");
    expect(() => c.rewind(2)).toThrow("rewind to job 2, but the worker refused 1");
    c.rewind(1);
    expect(c.jobs).toBe(1);
    expect(hex(c.get(key(0))!)).toBe(hex(value(2, 1)));
    expect(c.get(key(1))).toBeUndefined();
    expect(c.get(key(2))).toBeUndefined();
    expect(hex(later)).toBe("00".repeat(32));
    // The checks after a batch are the next batch's only if it is given them: this one has none.
    const again = c.commitBatch([[key(3), value(2, 4)]]);
    expect(c.jobs).toBe(2);
    const reference = Q.createStateCommitment();
    reference.commitBatch([[key(0), value(2, 1)]]);
    const expected = reference.commitBatch([[key(3), value(2, 4)]]);
    expect(hex(c.root())).toBe(hex(expected));
    expect(hex(again)).toBe(hex(expected));
    expect(plain(c.entries())).toEqual(plain(reference.entries()));
  });

  it("a refused batch that came by message is dropped from the worker's port: the next batch by message is applied, not the dropped one", () => {
    const { c, ring, postInvalid } = signatureChecks();
    c.deferred = true;
    const big = (fill: number): Change[] => Array.from({ length: 260 }, (_, i): Change => [new Uint8Array(54).fill(0xe0).map((b, j) => (j < 2 ? (i >> (8 * j)) & 0xff : b)), value(1 << 16, fill)]).sort((a, b) => Buffer.compare(a[0], b[0]));
    c.commitBatch([[key(0), value(1, 1)]]); // job 0, through the ring
    postInvalid();
    c.checks = { from: 0, to: ring.size };
    c.commitBatch(big(1)); // job 1, by message, refused
    expect(() => c.root()).toThrow(W.BatchRefused);
    c.rewind(1);
    expect(c.entries()).toHaveLength(1);
    const root = c.commitBatch(big(2));
    const reference = Q.createStateCommitment();
    reference.commitBatch([[key(0), value(1, 1)]]);
    expect(hex(c.root())).toBe(hex(reference.commitBatch(big(2))));
    expect(hex(root)).toBe(hex(reference.root()));
  });

  it("the checks set for the next state batch are its own even when a block's roots job is posted between (the roots job carries none)", () => {
    const { c, ring, postInvalid } = signatureChecks();
    c.deferred = true;
    postInvalid();
    c.checks = { from: 0, to: ring.size };
    c.deferRoots(roots.rootsJob([], []));
    c.commitBatch([[key(0), value(1, 1)]]);
    expect(() => c.root()).toThrow(new W.BatchRefused(1).message);
  });

  it("reset rewinds a refusal in flight and starts a fresh database: then it is as new (not deferred, no checks)", () => {
    const { c, ring, postInvalid } = signatureChecks();
    c.deferred = true;
    c.commitBatch([[key(0), value(2, 1)]]);
    postInvalid();
    c.checks = { from: 0, to: ring.size };
    c.commitBatch([[key(1), value(2, 2)]]);
    c.reset();
    expect(c.deferred).toBe(false);
    expect(c.checks).toEqual({ from: 0, to: 0 });
    expect(c.entries()).toEqual([]);
    expect(hex(c.root())).toBe(hex(Q.createStateCommitment().root()));
    const root = c.commitBatch([[key(5), value(1, 5)]]);
    const reference = Q.createStateCommitment();
    expect(hex(root)).toBe(hex(reference.commitBatch([[key(5), value(1, 5)]])));
  });
});

describe("WorkerCommitment's refusals, by message", () => {
  it("a state key that is not 54 bytes, before anything is applied", () => {
    const c = open();
    expect(() => c.commitBatch([[new Uint8Array(53), value(1, 1)]])).toThrow("state key of 53 bytes");
    expect(c.jobs).toBe(0);
    expect(c.entries()).toEqual([]);
  });

  it("a job the worker cannot apply fails every later wait with the worker's error, then without a message", () => {
    const c = open();
    c.deferRoots(Uint8Array.of(0, 0, 0, 5)); // five tx hashes announced, none there
    expect(() => c.root()).toThrow(/^the commit worker failed: RangeError: Offset is outside the bounds of the DataView/);
    expect(() => c.root()).toThrow("the commit worker failed: (no message)");
  });

  it("a worker that answers nothing (its thread ended behind the commitment's back) fails the wait once the stall time is over, naming it", async () => {
    const c = new W.WorkerCommitment(undefined, 300);
    opened.push(c);
    const inside = c as unknown as { worker: { terminate(): Promise<number> }; header: Int32Array };
    // Ended once its loop runs: a worker terminated while its modules are evaluated aborts Node 22 and 24 (below).
    while (Atomics.load(inside.header, W.H.started) === 0) await new Promise((r) => setTimeout(r, 5));
    await inside.worker.terminate();
    expect(() => c.commitBatch([[key(0), value(1, 1)]])).toThrow(new W.WorkerCommitmentError("no root from the commit worker for 0.3 s"));
  });

  it("run from the TypeScript sources (no compiled worker next to them), it refuses at once, naming the build", async () => {
    const { WorkerCommitment } = await import("../../../state/commitment/worker-commitment.js");
    expect(() => new WorkerCommitment()).toThrow(/^no compiled commit worker at \/.*\/state\/commitment\/commit-worker\.js \(run npm run build\)$/);
  });

  it("every use after close; a second close is harmless", () => {
    const c = open();
    c.close();
    c.close();
    expect(() => c.commitBatch([[key(0), value(1, 1)]])).toThrow("the commitment is closed");
    expect(() => c.deferRoots(roots.rootsJob([], []))).toThrow("the commitment is closed");
    expect(() => c.reset()).toThrow("the commitment is closed");
    expect(new W.WorkerCommitmentError("x").name).toBe("WorkerCommitmentError");
    expect(new W.BatchRefused(0).name).toBe("BatchRefused");
  });
});

// A worker stopped while it works: `close` terminates it mid-batch, and so does the exit of a
// process that never closed it. Node 22 and 24 abort the whole process there (a V8 fatal error,
// exit 133) when the worker's loop runs inside its module's evaluation, which has top-level await
// below it (D-0172 "The commit worker's loop runs outside module evaluation"). Each
// case runs in a child process on this test's own Node, so an abort fails the test, not the suite.
describe("a busy worker stopped", () => {
  /** Runs `body` in a fresh Node with `busy()` (a commitment whose worker is applying a 4,000-key batch) in scope. */
  function child(body: string) {
    const script = `
      const { WorkerCommitment } = await import(${JSON.stringify(dist("state/commitment/worker-commitment.js"))});
      const key = (i) => { const k = new Uint8Array(54); k[0] = 1; new DataView(k.buffer).setUint32(50, i); return k; };
      const busy = () => {
        const c = new WorkerCommitment();
        c.commitBatch([[key(0), Uint8Array.of(1)]]); // settled: the worker is in its loop
        c.deferred = true;
        c.commitBatch(Array.from({ length: 4000 }, (_, i) => [key(i), new Uint8Array(32).fill(i & 255)]));
        return c;
      };
      ${body}`;
    // A file, not `-e`: a worker started from an --input-type=module eval does not start before the main thread waits for it.
    const dir = mkdtempSync(join(tmpdir(), "cbqs-busy-worker-"));
    try {
      writeFileSync(join(dir, "busy.mjs"), script);
      return spawnSync(process.execPath, [join(dir, "busy.mjs")], { encoding: "utf8", timeout: 60_000 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  it("closed while it applies a batch, ten times in one process: the process goes on and exits 0", () => {
    const r = child(`for (let i = 0; i < 10; i++) busy().close(); console.log("closed 10");`);
    expect({ status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr }).toEqual({ status: 0, signal: null, stdout: "closed 10\n", stderr: "" });
  });

  it("close right after the commitment is made waits until the worker's loop runs, so the worker is never ended while its modules are evaluated", () => {
    for (let i = 0; i < 3; i++) {
      const c = new W.WorkerCommitment();
      const header = (c as unknown as { header: Int32Array }).header;
      expect(Atomics.load(header, W.H.started)).toBe(0);
      c.close();
      expect(Atomics.load(header, W.H.started)).toBe(1);
    }
  });

  it("still applying a batch when its process ends without closing it: the process exits 0", () => {
    const r = child(`busy(); console.log("left busy");`);
    expect({ status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr }).toEqual({ status: 0, signal: null, stdout: "left busy\n", stderr: "" });
  });
});
