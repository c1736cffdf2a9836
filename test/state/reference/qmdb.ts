// A deliberately plain QMDB "current" for equivalence tests: every MMR node in one array, the
// operation log as objects, the key index as a Map of hex strings, the bitmap as booleans, no
// caches and no pruning. It follows commonware's algorithm step by step (docs/
// state-commitments.md), as the emulator did before its storage was packed; the packed
// database (state/qmdb/) must give the same roots, proofs and values on any history.
import { compareBytes, concatBytes, toHex, u64BE } from "../../../src/bytes.js";
import type { Hasher } from "../../../src/crypto/hash.js";
import { bagPeaks, inactivePeaks, leafDigest, leftmostLeafLocation, nodeDigest, nodeHeight, peaks } from "../../../state/qmdb/mmr.js";
import { chunkAlignedInactivePeaks, graftingHeight } from "../../../state/qmdb/current.js";
import type { Operation, OperationCodec } from "../../../state/qmdb/operation.js";
import type { Write } from "../../../state/qmdb/any.js";

export class ReferenceMmr {
  readonly nodes: Uint8Array[] = [];
  leaves = 0;

  constructor(readonly hasher: Hasher) {}

  append(element: Uint8Array): void {
    this.nodes.push(leafDigest(this.hasher, this.nodes.length, element));
    for (let h = 1, loc = this.leaves; loc % 2 === 1; h++, loc = Math.floor(loc / 2)) {
      const pos = this.nodes.length;
      this.nodes.push(nodeDigest(this.hasher, pos, this.nodes[pos - 2 ** h]!, this.nodes[pos - 1]!));
    }
    this.leaves++;
  }

  root(bagging: "forward" | "backward", inactive: number): Uint8Array {
    return bagPeaks(this.hasher, this.leaves, peaks(this.nodes.length).map((p) => this.nodes[p.pos]!), bagging, inactive);
  }
}

export class ReferenceCurrentDb {
  readonly mmr: ReferenceMmr;
  readonly log: Operation[] = [];
  readonly bits: boolean[] = [];
  readonly snapshot = new Map<string, number>();
  floor = 0;
  lastCommit = 0;
  readonly height: number;

  constructor(
    readonly hasher: Hasher,
    readonly codec: OperationCodec,
    readonly chunkBytes: number,
  ) {
    this.mmr = new ReferenceMmr(hasher);
    this.height = graftingHeight(chunkBytes * 8);
    this.append({ kind: "commit", floor: 0 });
    this.bits[0] = true;
  }

  private append(op: Operation): void {
    this.log.push(op);
    this.bits.push(false);
    this.mmr.append(this.codec.encode(op));
  }

  get(key: Uint8Array): Uint8Array | undefined {
    const loc = this.snapshot.get(toHex(key));
    return loc === undefined ? undefined : (this.log[loc] as { value: Uint8Array }).value;
  }

  locationOf(key: Uint8Array): number | undefined {
    return this.snapshot.get(toHex(key));
  }

  applyBatch(writes: readonly Write[]): void {
    const mutations = new Map<string, Write>();
    for (const w of writes) mutations.set(toHex(w[0]), w);
    const base = this.log.length;
    const ops: Operation[] = [];
    // new location per touched key (undefined = deleted) and the committed location it replaces
    const diff = new Map<string, { key: Uint8Array; loc: number | undefined; old: number | undefined }>();
    const existing = [...mutations.keys()].filter((id) => this.snapshot.has(id)).sort((a, b) => this.snapshot.get(a)! - this.snapshot.get(b)!);
    for (const id of existing) {
      const [key, value] = mutations.get(id)!;
      const old = this.snapshot.get(id)!;
      diff.set(id, { key, loc: value === undefined ? undefined : base + ops.length, old });
      ops.push(value === undefined ? { kind: "delete", key } : { kind: "update", key, value });
    }
    const creates = [...mutations.entries()].filter(([id, w]) => !this.snapshot.has(id) && w[1] !== undefined);
    creates.sort((a, b) => compareBytes(a[1][0], b[1][0]));
    for (const [id, [key, value]] of creates) {
      diff.set(id, { key, loc: base + ops.length, old: undefined });
      ops.push({ kind: "update", key, value: value! });
    }
    const live = this.snapshot.size + creates.length - existing.filter((id) => mutations.get(id)![1] === undefined).length;
    let floor = this.floor;
    if (live === 0) floor = base + ops.length;
    else {
      const tip = base + ops.length;
      let moved = 0;
      for (let loc = this.floor; loc < tip && moved < existing.length + 1; loc++) {
        const op = loc < base ? this.log[loc]! : ops[loc - base]!;
        if (loc < base && !this.bits[loc]) continue;
        floor = loc + 1;
        if (op.kind !== "update") continue;
        const id = toHex(op.key);
        const entry = diff.get(id);
        if (loc < base) {
          if (entry !== undefined || this.snapshot.get(id) !== loc) continue; // superseded
          diff.set(id, { key: op.key, loc: base + ops.length, old: loc });
        } else {
          if (entry!.loc !== loc) continue;
          entry!.loc = base + ops.length;
        }
        ops.push(op);
        moved++;
      }
    }
    ops.push({ kind: "commit", floor });
    for (const op of ops) this.append(op);
    for (const [id, e] of diff) {
      if (e.old !== undefined) this.bits[e.old] = false;
      if (e.loc === undefined) this.snapshot.delete(id);
      else {
        this.snapshot.set(id, e.loc);
        this.bits[e.loc] = true;
      }
    }
    this.bits[this.lastCommit] = false;
    this.lastCommit = this.log.length - 1;
    this.bits[this.lastCommit] = true;
    this.floor = floor;
  }

  chunk(index: number): Uint8Array {
    const out = new Uint8Array(this.chunkBytes);
    for (let i = 0; i < this.chunkBytes * 8; i++) if (this.bits[index * this.chunkBytes * 8 + i]) out[i >> 3]! |= 1 << (i & 7);
    return out;
  }

  opsRoot(): Uint8Array {
    return this.mmr.root("backward", inactivePeaks(this.mmr.leaves, this.floor));
  }

  /** The grafted tree's node at `pos`, computed from scratch. */
  graftedNode(pos: number): Uint8Array {
    const height = nodeHeight(pos);
    if (height < this.height) return this.mmr.nodes[pos]!;
    if (height === this.height) {
      const chunk = this.chunk(leftmostLeafLocation(pos, height) / 2 ** height);
      const ops = this.mmr.nodes[pos]!;
      return chunk.every((b) => b === 0) ? ops : this.hasher.hash(concatBytes(chunk, ops));
    }
    return nodeDigest(this.hasher, pos, this.graftedNode(pos - 2 ** height), this.graftedNode(pos - 1));
  }

  root(): Uint8Array {
    const size = this.mmr.nodes.length;
    const inactive = chunkAlignedInactivePeaks(this.mmr.leaves, this.floor, this.height);
    const grafted = bagPeaks(this.hasher, this.mmr.leaves, peaks(size).map((p) => this.graftedNode(p.pos)), "backward", inactive);
    const chunkBits = this.chunkBytes * 8;
    const nextBit = this.log.length % chunkBits;
    if (nextBit === 0) return this.hasher.hash(concatBytes(this.opsRoot(), grafted));
    const partial = this.hasher.hash(this.chunk(Math.floor(this.log.length / chunkBits)));
    return this.hasher.hash(concatBytes(this.opsRoot(), grafted, u64BE(nextBit), partial));
  }
}

