import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { bytesEqual, concatBytes, fromHex, toHex, u64BE } from "../../../src/bytes.js";
import { BLAKE3, SHA256 } from "../../../src/crypto/hash.js";
import { STATE_KEY_LENGTH } from "../../../state/kv/interface.js";
import { AnyDb, type QmdbConfig, type Write } from "../../../state/qmdb/any.js";
import { CurrentDb, chunkAlignedInactivePeaks } from "../../../state/qmdb/current.js";
import { createStateCommitment } from "../../../state/qmdb/index.js";
import {
  byteVecValue,
  fixedCodec,
  rawValue,
  variableCodec,
  type Operation,
} from "../../../state/qmdb/operation.js";
import { encodeVarint } from "../../../state/kv/codec.js";
import { bagPeaks, peaks } from "../../../state/qmdb/mmr.js";

const config = (): QmdbConfig => ({ hasher: SHA256, codec: variableCodec(32, rawValue), chunkBytes: 32, keyLength: 32 });
const key = (b: number): Uint8Array => new Uint8Array(32).fill(b);
const val = (b: number): Uint8Array => SHA256.hash(Uint8Array.of(b));
const H = (...parts: Uint8Array[]): Uint8Array => SHA256.hash(concatBytes(...parts));

function describeOp(op: Operation): string {
  switch (op.kind) {
    case "update":
      return `upd ${op.key[0]}`;
    case "delete":
      return `del ${op.key[0]}`;
    case "commit":
      return `commit ${op.floor}`;
  }
}

describe("QMDB operation codec (CIP-4 §5.1, commonware qmdb/any/operation)", () => {
  it("§5.1 variable encoding: context byte, raw key, value codec; commit = D3 00 varint(floor)", () => {
    const enc = variableCodec(2, byteVecValue);
    expect(toHex(enc.encode({ kind: "delete", key: Uint8Array.of(7, 8) }))).toBe("0xd10708");
    expect(toHex(enc.encode({ kind: "update", key: Uint8Array.of(7), value: Uint8Array.of(1, 2, 3) }))).toBe(
      "0xd20703010203",
    );
    expect(toHex(enc.encode({ kind: "commit", floor: 300 }))).toBe("0xd300ac02");
    expect(toHex(encodeVarint(0))).toBe("0x00");
    expect(toHex(encodeVarint(127))).toBe("0x7f");
    expect(toHex(encodeVarint(128))).toBe("0x8001");
  });

  it("§5.1 fixed encoding pads every operation to max(1+K+V, 2+V+8, 1+K) with a u64 BE floor", () => {
    const enc = fixedCodec(32, 32);
    const commit = enc.encode({ kind: "commit", floor: 258 });
    expect(commit.length).toBe(65);
    expect(toHex(commit.subarray(0, 2))).toBe("0xd300");
    expect(toHex(commit.subarray(34, 42))).toBe("0x0000000000000102");
    expect(commit.subarray(42).every((b) => b === 0)).toBe(true);
    const del = enc.encode({ kind: "delete", key: key(9) });
    expect(del.length).toBe(65);
    expect(del.subarray(33).every((b) => b === 0)).toBe(true);
    expect(() => enc.encode({ kind: "update", key: key(1), value: Uint8Array.of(1) })).toThrow(RangeError);
  });
});

describe("QMDB any: batches, deletes and the inactivity floor (CIP-4 §5.1)", () => {
  it("§5.1 a fresh database holds one CommitFloor(0) and its root is the one-leaf backward root", () => {
    const db = new AnyDb(config());
    expect(db.size).toBe(1);
    const leaf = H(u64BE(0), Uint8Array.of(0xd3, 0, 0));
    expect(bytesEqual(db.root(), H(u64BE(1), leaf))).toBe(true);
  });

  it("§5.1 creates, floor raise, delete and delete-all follow commonware's operation order", () => {
    const db = new AnyDb(config());
    const log = (): string[] => Array.from({ length: db.size }, (_, i) => describeOp(db.operation(i)));

    // Creates in key order; one floor step moves the oldest active op (A at 1) to the tip.
    db.applyBatch([
      [key(2), val(2)],
      [key(1), val(1)],
    ]);
    expect(log()).toEqual(["commit 0", "upd 1", "upd 2", "upd 1", "commit 2"]);
    expect(db.inactivityFloor).toBe(2);

    // Deleting A: two floor steps; B moves, A's old slot and the commit are skipped.
    db.applyBatch([[key(1), undefined]]);
    expect(log().slice(5)).toEqual(["del 1", "upd 2", "commit 6"]);
    expect(db.get(key(1))).toBeUndefined();
    expect(bytesEqual(db.get(key(2))!, val(2))).toBe(true);

    // Deleting an absent key writes nothing; deleting the last key raises the floor to the commit.
    db.applyBatch([
      [key(2), undefined],
      [key(3), undefined],
    ]);
    expect(log().slice(8)).toEqual(["del 2", "commit 9"]);
    expect(db.inactivityFloor).toBe(9);
    expect(db.activeKeys).toBe(0);
  });

  it("§5.1 a re-update supersedes the old location and the last write of a key wins", () => {
    const db = new AnyDb(config());
    db.applyBatch([[key(1), val(1)]]);
    const before = db.root();
    db.applyBatch([
      [key(1), val(2)],
      [key(1), val(3)],
    ]);
    expect(bytesEqual(db.get(key(1))!, val(3))).toBe(true);
    expect(bytesEqual(db.root(), before)).toBe(false);
    expect(db.activeKeys).toBe(1);
    expect(() => db.applyBatch([[new Uint8Array(31), val(1)]])).toThrow(RangeError);
  });

  it("§5.1 the root does not depend on the order of writes within a batch (commonware order-independence)", () => {
    const writes = fc.array(fc.tuple(fc.integer({ min: 0, max: 30 }), fc.option(fc.integer({ min: 0, max: 255 }))), {
      maxLength: 25,
    });
    fc.assert(
      fc.property(fc.array(writes, { minLength: 1, maxLength: 4 }), (batches) => {
        const a = new CurrentDb(config());
        const b = new CurrentDb(config());
        for (const batch of batches) {
          // Keep one write per key so "last write wins" does not depend on order.
          const unique = [...new Map(batch.map(([k, v]) => [k, v])).entries()];
          const ws: Write[] = unique.map(([k, v]) => [key(k), v === null ? undefined : val(v)]);
          a.applyBatch(ws);
          b.applyBatch([...ws].reverse());
        }
        return bytesEqual(a.root(), b.root());
      }),
      { numRuns: 60 },
    );
  });

  it("§5.1 model check: values, live-key count, floor and an exact activity bitmap", () => {
    const batchArb = fc.array(fc.tuple(fc.integer({ min: 0, max: 40 }), fc.option(fc.integer({ min: 0, max: 255 }))), {
      maxLength: 30,
    });
    fc.assert(
      fc.property(fc.array(batchArb, { minLength: 1, maxLength: 8 }), (batches) => {
        const db = new AnyDb(config());
        const model = new Map<number, number>();
        for (const batch of batches) {
          db.applyBatch(batch.map(([k, v]): Write => [key(k), v === null ? undefined : val(v)]));
          for (const [k, v] of batch) {
            if (v === null) model.delete(k);
            else model.set(k, v);
          }
          if (db.activeKeys !== model.size) return false;
          if (db.inactivityFloor > db.lastCommit) return false;
          let bits = 0;
          for (let i = 0; i < db.size; i++) if (db.bitmap.get(i)) bits++;
          if (bits !== model.size + 1 || !db.bitmap.get(db.lastCommit)) return false;
          for (let k = 0; k <= 40; k++) {
            const got = db.get(key(k));
            const want = model.get(k);
            if (want === undefined ? got !== undefined : got === undefined || !bytesEqual(got, val(want))) return false;
            const loc = db.locationOf(key(k));
            if (loc !== undefined && (loc < db.inactivityFloor || !db.bitmap.get(loc))) return false;
          }
        }
        return true;
      }),
      { numRuns: 80 },
    );
  });
});

describe("QMDB current: grafted bitmap and canonical root (CIP-4 §5.1)", () => {
  it("§5.1 below one full chunk the root binds ops root, plain grafted bagging and the partial chunk", () => {
    const db = new CurrentDb(config());
    db.applyBatch([
      [key(1), val(1)],
      [key(2), val(2)],
    ]);
    const parts = db.rootParts();
    const mmr = db.any.mmr;
    expect(bytesEqual(parts.opsRoot, db.any.root())).toBe(true);
    expect(bytesEqual(parts.graftedRoot, mmr.root("backward", 0))).toBe(true);
    // 5 operations: bits 2, 3, 4 set → first byte 0b11100.
    const chunk = new Uint8Array(32);
    chunk[0] = 0b11100;
    expect(parts.partial?.nextBit).toBe(5);
    expect(bytesEqual(parts.partial!.digest, SHA256.hash(chunk))).toBe(true);
    expect(bytesEqual(parts.root, H(parts.opsRoot, parts.graftedRoot, u64BE(5), SHA256.hash(chunk)))).toBe(true);
  });

  it("§5.1 a complete chunk is grafted as H(chunk || ops subtree root), an all-zero one as the subtree root", () => {
    const db = new CurrentDb(config());
    // Rewrite the same keys until the first chunk (ops 0..255) holds no active operation.
    let round = 0;
    while (db.any.size < 256 || db.any.bitmap.chunk(0).some((b) => b !== 0)) {
      db.applyBatch(Array.from({ length: 8 }, (_, i): Write => [key(i), val(round + i)]));
      round++;
      if (round === 1) expect(db.any.bitmap.length).toBeLessThan(256);
      if (db.any.size >= 256 && round < 200 && db.any.bitmap.chunk(0).some((b) => b !== 0)) {
        const chunk = db.any.bitmap.chunk(0);
        expect(bytesEqual(db.virtualNode(510, 8, 0), H(chunk, db.any.mmr.node(510)))).toBe(true);
      }
      expect(round).toBeLessThan(200);
    }
    expect(bytesEqual(db.virtualNode(510, 8, 0), db.any.mmr.node(510))).toBe(true);
    // The grafted root bags the virtual peaks with chunk-aligned inactive peaks.
    const mmr = db.any.mmr;
    let first = 0;
    const virtualPeaks = peaks(mmr.size).map((p) => {
      const d = db.virtualNode(p.pos, p.height, first);
      first += 2 ** p.height;
      return d;
    });
    const inactive = chunkAlignedInactivePeaks(mmr.leaves, db.any.inactivityFloor, 8);
    expect(bytesEqual(db.rootParts().graftedRoot, bagPeaks(SHA256, mmr.leaves, virtualPeaks, "backward", inactive))).toBe(
      true,
    );
  });

  it("§5.1 chunk-aligned inactive peaks round down to whole 256-leaf chunks", () => {
    // 300 leaves: peaks of 256, 32, 8, 4 leaves.
    expect(chunkAlignedInactivePeaks(300, 255, 8)).toBe(0);
    expect(chunkAlignedInactivePeaks(300, 256, 8)).toBe(1);
    expect(chunkAlignedInactivePeaks(300, 296, 8)).toBe(1);
    expect(chunkAlignedInactivePeaks(512 + 256, 768, 8)).toBe(2);
  });
});

describe("Cowboy state commitment (CIP-4 §5.1: QMDB current, Blake3, 54-byte keys)", () => {
  const k = (b: number): Uint8Array => new Uint8Array(STATE_KEY_LENGTH).fill(b);

  it("§5.1 commitBatch returns the new root; deletes and re-updates change it; Blake3 is the hasher", () => {
    const sc = createStateCommitment();
    const empty = sc.root();
    const r1 = sc.commitBatch([
      [k(1), fromHex("0x0102")],
      [k(2), fromHex("0x03")],
    ]);
    expect(bytesEqual(r1, sc.root())).toBe(true);
    expect(bytesEqual(r1, empty)).toBe(false);
    const r2 = sc.commitBatch([[k(1), undefined]]);
    const r3 = sc.commitBatch([[k(1), fromHex("0x0102")]]);
    expect(new Set([r1, r2, r3].map(toHex)).size).toBe(3);
    // An empty block still commits (a CommitFloor op), so the root moves.
    expect(bytesEqual(sc.commitBatch([]), r3)).toBe(false);
    expect(sc.db.config.hasher).toBe(BLAKE3);
    expect(() => sc.commitBatch([[new Uint8Array(32), fromHex("0x01")]])).toThrow(RangeError);
  });

  it("§5.1 equal change sets from equal states give equal roots", () => {
    const a = createStateCommitment();
    const b = createStateCommitment();
    for (const sc of [a, b]) {
      sc.commitBatch([[k(5), fromHex("0x05")]]);
      sc.commitBatch([[k(6), fromHex("0x")]]);
    }
    expect(bytesEqual(a.root(), b.root())).toBe(true);
  });
});
