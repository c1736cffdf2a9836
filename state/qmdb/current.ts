// QMDB "current" database (CIP-4 §5.1): the "any" database plus its activity bitmap grafted onto
// the operation MMR, so one root authenticates both an operation and whether it is still the
// key's current value. Ported from commonware storage/src/qmdb/current/{mod.rs,db.rs,
// grafting.rs} at dc41a895f069 (MMR family only: every complete chunk is graftable at once).
//
//   grafting height g = log2(chunk bits)            (256-bit chunks → g = 8)
//   virtual node at height < g : the ops MMR node
//   virtual node at height = g : ops node if its chunk is all zero, else H(chunk || ops node)
//   virtual node at height > g : H(u64be(ops pos) || left || right) over virtual children
//   grafted_root = backward bagging of the virtual peaks, inactive peaks rounded down to a
//                  chunk boundary (`chunk_aligned_inactive_peaks`)
//   root = H(ops_root || grafted_root [|| u64be(next_bit) || H(partial chunk)])
import { concatBytes, u64BE } from "../../src/bytes.js";
import type { Hasher } from "../../src/crypto/hash.js";
import {
  bagPeaks,
  children,
  leafPosition,
  leftmostLeafLocation,
  mmrSize,
  hashPair,
  nodeDigest,
  nodeHeight,
  nodePosition,
  peakHeights,
  standardProofHasher,
  type ProofHasher,
} from "./mmr.js";
import { AnyDb, type BatchTrace, type QmdbConfig, type Write } from "./any.js";
import type { QmdbStorage } from "./storage.js";

function isZero(bytes: Uint8Array): boolean {
  for (let i = 0; i < bytes.length; i++) if (bytes[i] !== 0) return false;
  return true;
}

export function graftingHeight(chunkBits: number): number {
  const height = Math.log2(chunkBits);
  if (!Number.isInteger(height) || height < 1) throw new RangeError(`chunk of ${chunkBits} bits is not a power of two`);
  return height;
}

/**
 * Leading peaks that lie wholly below the floor, counted only up to the last one that ends on
 * a chunk boundary (grafting.rs `chunk_aligned_inactive_peaks`).
 */
export function chunkAlignedInactivePeaks(leaves: number, floor: number, height: number): number {
  const chunkSize = 2 ** height;
  let leafEnd = 0;
  let aligned = 0;
  const all = peakHeights(leaves);
  for (let i = 0; i < all.length; i++) {
    const next = leafEnd + 2 ** all[i]!;
    if (next > floor) break;
    leafEnd = next;
    if (leafEnd % chunkSize === 0) aligned = i + 1;
  }
  return aligned;
}

/** db.rs `combine_roots` (MMR: never a pending chunk). */
export function combineRoots(
  hasher: Hasher,
  opsRoot: Uint8Array,
  graftedRoot: Uint8Array,
  partial: { nextBit: number; digest: Uint8Array } | undefined,
): Uint8Array {
  return partial === undefined
    ? hasher.hash(concatBytes(opsRoot, graftedRoot))
    : hasher.hash(concatBytes(opsRoot, graftedRoot, u64BE(partial.nextBit), partial.digest));
}

/**
 * Proof hasher of a "current" verifier (grafting.rs `Verifier`): below and above the grafting
 * height it hashes like the MMR; at the grafting height it folds in the supplied bitmap chunk
 * (`chunks[i]` is chunk `startChunk + i`) unless that chunk is all zero or not supplied.
 * commonware's Verifier also skips chunks that are not yet graftable; in the MMR family a node
 * at the grafting height exists only over a complete chunk, and every complete chunk is
 * graftable, so that case cannot arise here.
 */
export function graftingProofHasher(hasher: Hasher, height: number, startChunk: number, chunks: readonly Uint8Array[]): ProofHasher {
  const standard = standardProofHasher(hasher);
  return {
    hasher,
    leaf: standard.leaf,
    node(sub, left, right) {
      const opsNode = nodeDigest(hasher, sub.pos, left, right);
      if (sub.height !== height) return opsNode;
      const index = sub.leafStart / 2 ** height;
      const chunk = chunks[index - startChunk];
      if (chunk === undefined || chunk.every((b) => b === 0)) return opsNode;
      return hasher.hash(concatBytes(chunk, opsNode));
    },
  };
}

/** The parts of a "current" root, as CIP-4 Appendix C proofs expose them. */
export interface CurrentRootParts {
  opsRoot: Uint8Array;
  graftedRoot: Uint8Array;
  /** Bits in the trailing incomplete chunk and that chunk's digest, when there is one. */
  partial: { nextBit: number; digest: Uint8Array } | undefined;
  root: Uint8Array;
}

export class CurrentDb {
  readonly any: AnyDb;
  readonly height: number;
  /**
   * Grafted-tree digests (height ≥ g) by position. Ops nodes never change (the MMR only grows),
   * so an entry goes stale only when a bitmap chunk under it changes: those entries are dropped
   * before every use (`refresh`); new positions are simply not cached yet. Below the pruning
   * boundary every bit is 0, so a grafted node there equals its ops node, which the MMR keeps
   * pinned (virtualNode): nothing there needs caching.
   */
  private readonly graftedCache = new Map<number, Uint8Array>();
  /** Cache size after the last sweep of pruned entries. */
  private sweptSize = 0;

  constructor(
    readonly config: QmdbConfig,
    storage?: QmdbStorage,
  ) {
    this.any = new AnyDb(config, storage);
    this.height = graftingHeight(config.chunkBytes * 8);
  }

  applyBatch(writes: Iterable<Write>): BatchTrace {
    return this.any.applyBatch(writes);
  }

  get(key: Uint8Array): Uint8Array | undefined {
    return this.any.get(key);
  }

  root(): Uint8Array {
    return this.rootParts().root;
  }

  rootParts(): CurrentRootParts {
    this.refresh();
    const { hasher } = this.config;
    const opsRoot = this.any.root();
    const mmr = this.any.mmr;
    const peakDigests: Uint8Array[] = [];
    let firstLeaf = 0;
    for (const height of peakHeights(mmr.leaves)) {
      peakDigests.push(this.virtualNode(nodePosition(height, firstLeaf / 2 ** height), height, firstLeaf));
      firstLeaf += 2 ** height;
    }
    const inactive = this.graftedInactivePeaks();
    const graftedRoot = bagPeaks(hasher, mmr.leaves, peakDigests, "backward", inactive);
    const bitmap = this.any.bitmap;
    const nextBit = bitmap.length % bitmap.chunkBits;
    const partial =
      nextBit === 0 ? undefined : { nextBit, digest: hasher.hash(bitmap.chunk(Math.floor(bitmap.length / bitmap.chunkBits))) };
    return { opsRoot, graftedRoot, partial, root: combineRoots(hasher, opsRoot, graftedRoot, partial) };
  }

  /** Inactive peaks committed by the grafted root (and by proofs against it). */
  graftedInactivePeaks(): number {
    return chunkAlignedInactivePeaks(this.any.mmr.leaves, this.any.inactivityFloor, this.height);
  }

  /** Node of the grafted tree by ops position (commonware `grafting::Storage::get_node`). */
  graftedNode(pos: number): Uint8Array {
    this.refresh();
    const height = nodeHeight(pos);
    if (height < this.height) return this.any.mmr.node(pos);
    return this.virtualNode(pos, height, leftmostLeafLocation(pos, height));
  }

  /**
   * Digest of a node of the grafted (virtual) tree; `firstLeaf` is its leftmost leaf location.
   * Callers outside this class must not have pending bitmap changes (tests call it right after
   * `root()`).
   */
  virtualNode(pos: number, height: number, firstLeaf: number): Uint8Array {
    const mmr = this.any.mmr;
    if (height < this.height) return mmr.digest(height, firstLeaf / 2 ** height);
    const cached = this.graftedCache.get(pos);
    if (cached !== undefined) return cached;
    // Wholly below the pruning boundary every bit is 0, so the grafted digest is the ops digest,
    // which the MMR keeps pinned (the only source after a reopen, when nothing is cached).
    if (firstLeaf + 2 ** height <= mmr.prunedBelow) return mmr.digest(height, firstLeaf / 2 ** height);
    let digest: Uint8Array;
    if (height === this.height) {
      const chunk = this.any.bitmap.chunk(firstLeaf / 2 ** this.height);
      const opsNode = mmr.digest(height, firstLeaf / 2 ** height);
      digest = isZero(chunk) ? opsNode.slice() : hashPair(this.config.hasher, chunk, opsNode);
    } else {
      const [left, right] = children(pos, height);
      digest = nodeDigest(
        this.config.hasher,
        pos,
        this.virtualNode(left, height - 1, firstLeaf),
        this.virtualNode(right, height - 1, firstLeaf + 2 ** (height - 1)),
      );
    }
    this.graftedCache.set(pos, digest);
    return digest;
  }

  /**
   * Prunes the operations and nodes below the inactivity floor (AnyDb.prune). Does nothing until
   * the floor is more than `minStep` past the last pruning (batching the work).
   */
  prune(minStep = 0): void {
    const floor = this.any.inactivityFloor;
    if (floor <= this.any.mmr.prunedBelow + minStep) return;
    const boundary = mmrSize(floor);
    this.any.prune();
    // Grafted nodes wholly below the boundary are served from the MMR's pinned digests
    // (virtualNode); cached entries there are never needed again: sweep them out whenever the
    // cache has doubled since the last sweep.
    if (this.graftedCache.size >= 2 * this.sweptSize + 64) {
      for (const pos of this.graftedCache.keys()) if (pos < boundary) this.graftedCache.delete(pos);
      this.sweptSize = this.graftedCache.size;
    }
  }

  /** Drops the cached grafted node of every changed chunk and all of that node's ancestors. */
  private refresh(): void {
    const size = this.any.mmr.size;
    const g = this.height;
    for (const chunk of this.any.bitmap.takeChangedChunks()) {
      // The height-g node over leaves [chunk·2^g, (chunk+1)·2^g) ends 2^(g+1) − 2 after its first leaf.
      let pos = leafPosition(chunk * 2 ** g) + 2 ** (g + 1) - 2;
      let index = chunk; // the node's index among the nodes of its height
      for (let h = g; pos < size; h++) {
        this.graftedCache.delete(pos);
        // A left child (even index) has its parent 2^(h+1) further on; a right child, right after it.
        pos = index % 2 === 0 ? pos + 2 ** (h + 1) : pos + 1;
        index = Math.floor(index / 2);
      }
    }
  }
}
