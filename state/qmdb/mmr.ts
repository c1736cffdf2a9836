// Merkle Mountain Range exactly as commonware defines it (CIP-4 §5.1; commonware
// storage/src/merkle/{hasher.rs,mmr/mod.rs,mmr/iterator.rs} at dc41a895f069).
//
// Nodes are numbered in post-order over the mountains, tallest first ("positions"); leaves are
// also numbered by insertion order ("locations"). Every digest is position-prefixed:
//   leaf  = H(u64be(pos) || element)
//   node  = H(u64be(pos) || left || right)
//   root  = H(u64be(leaves) || fold(peaks)),  fold = forward left-fold H(acc || peak) over the
//           peaks in decreasing height, starting from the first peak
//   empty = H(u64be(0))
// QMDB roots use the same tree with backward bagging and a count of inactive peaks (`bagPeaks`).
// Positions are plain numbers, far below 2^53.
import { bytesEqual, concatBytes, u64BE } from "../../src/bytes.js";
import { hashParts, type Hasher } from "../../src/crypto/hash.js";
import { MemoryNodeStore } from "./memory.js";
import type { NodeStore, PinnedNode } from "./storage.js";

export function popcount(n: number): number {
  let count = 0;
  while (n > 0) {
    count += n % 2;
    n = Math.floor(n / 2);
  }
  return count;
}

function assertIndex(n: number, what: string): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`${what} ${n} is not a valid index`);
}

/**
 * Largest leaf count handled: positions (< 2·leaves) must stay exact JS integers. commonware's
 * own bound is 2^62; no emulated database or proof comes near 2^52.
 */
export const MAX_LEAVES = 2 ** 52;

/** Position of the leaf at location `loc`: 2·loc − popcount(loc). */
export function leafPosition(loc: number): number {
  assertIndex(loc, "location");
  if (loc > MAX_LEAVES) throw new RangeError(`location ${loc} exceeds ${MAX_LEAVES}`);
  return 2 * loc - popcount(loc);
}

/** Number of nodes of an MMR holding `leaves` leaves. */
export function mmrSize(leaves: number): number {
  return leafPosition(leaves);
}

/** Inverse of `mmrSize`; throws if `size` is not the size of any MMR. */
export function leavesOfSize(size: number): number {
  assertIndex(size, "size");
  // 2n − popcount(n) is strictly increasing, so a short search around size/2 finds n.
  let lo = Math.floor(size / 2);
  let hi = size;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (mmrSize(mid) < size) lo = mid + 1;
    else hi = mid;
  }
  if (mmrSize(lo) !== size) throw new RangeError(`${size} is not a valid MMR size`);
  return lo;
}

export interface Peak {
  pos: number;
  height: number;
}

/** Peaks of an MMR of `size` nodes, tallest (leftmost) first. */
export function peaks(size: number): Peak[] {
  const out: Peak[] = [];
  let start = 0;
  let remaining = size;
  // The tallest perfect tree that fits (2^(h+1) − 1 nodes), then strictly shorter ones.
  let height = 0;
  while (2 ** (height + 2) - 1 <= remaining) height++;
  for (; height >= 0 && remaining > 0; height--) {
    const treeSize = 2 ** (height + 1) - 1;
    if (treeSize > remaining) continue;
    out.push({ pos: start + treeSize - 1, height });
    start += treeSize;
    remaining -= treeSize;
  }
  return out;
}

/** Heights of the peaks of an MMR of `leaves` leaves, tallest first: the set bits of `leaves`. */
export function peakHeights(leaves: number): number[] {
  const out: number[] = [];
  for (let h = Math.floor(Math.log2(Math.max(1, leaves))) + 1; h >= 0; h--) if (Math.floor(leaves / 2 ** h) % 2 === 1) out.push(h);
  return out;
}

/** Children (left, right) of the node at `pos` whose height is `height` ≥ 1. */
export function children(pos: number, height: number): [number, number] {
  return [pos - 2 ** height, pos - 1];
}

// Preimages are handed to hashParts in pieces (the hashing gathers them itself, without a
// concatenation per digest: allocation, not hashing, dominated the commitment's cost).

/** u64be(pos); pos < 2^53 (MAX_LEAVES), split into two 32-bit halves (no BigInt). */
function positionBytes(pos: number): Uint8Array {
  const out = new Uint8Array(8);
  const high = Math.floor(pos / 2 ** 32);
  const low = pos >>> 0;
  out[0] = high >>> 24;
  out[1] = (high >>> 16) & 0xff;
  out[2] = (high >>> 8) & 0xff;
  out[3] = high & 0xff;
  out[4] = low >>> 24;
  out[5] = (low >>> 16) & 0xff;
  out[6] = (low >>> 8) & 0xff;
  out[7] = low & 0xff;
  return out;
}

export function leafDigest(hasher: Hasher, pos: number, element: Uint8Array): Uint8Array {
  return hashParts(hasher, positionBytes(pos), element);
}

export function nodeDigest(hasher: Hasher, pos: number, left: Uint8Array, right: Uint8Array): Uint8Array {
  return hashParts(hasher, positionBytes(pos), left, right);
}

/** H(a ‖ b). */
export function hashPair(hasher: Hasher, a: Uint8Array, b: Uint8Array): Uint8Array {
  return hashParts(hasher, a, b);
}

/** How peaks are folded into the root (commonware `merkle::Bagging`). */
export type Bagging = "forward" | "backward";

/**
 * commonware `Hasher::root`: the first `inactive` peaks are folded forward into one accumulator,
 * then the accumulator and the remaining peaks are bagged — forward: acc = H(acc || peak) left
 * to right; backward: acc = H(peak || acc) from the right. The root commits to the leaf count
 * and, when nonzero, to the inactive peak count:
 *   H(u64be(leaves) [|| u64be(inactive)] || bagged);  no peaks: H(u64be(leaves)).
 */
export function bagPeaks(
  hasher: Hasher,
  leaves: number,
  peakDigests: readonly Uint8Array[],
  bagging: Bagging = "forward",
  inactive = 0,
): Uint8Array {
  const root = rootWithFoldedPeaks(hasher, leaves, inactive, inactive, peakDigests, bagging);
  if (root === undefined) throw new RangeError(`${inactive} inactive peaks of ${peakDigests.length}`);
  return root;
}

/**
 * commonware `Hasher::root_with_folded_peaks`: like `bagPeaks`, but the peak list may start with
 * an accumulator that already folds some inactive peaks, so the count folded here (`toFold`) can
 * differ from the count committed into the root (`committed`). Undefined when inconsistent.
 */
export function rootWithFoldedPeaks(
  hasher: Hasher,
  leaves: number,
  toFold: number,
  committed: number,
  peakDigests: readonly Uint8Array[],
  bagging: Bagging,
): Uint8Array | undefined {
  if (peakDigests.length === 0) return toFold === 0 && committed === 0 ? hasher.hash(u64BE(leaves)) : undefined;
  if (toFold > peakDigests.length) return undefined;
  const fold = (acc: Uint8Array, peak: Uint8Array): Uint8Array => hashPair(hasher, acc, peak);
  let acc = peakDigests[0]!;
  let next = 1;
  for (; next < toFold; next++) acc = fold(acc, peakDigests[next]!);
  const active = [acc, ...peakDigests.slice(next)];
  let bagged: Uint8Array;
  if (bagging === "forward") {
    bagged = active.reduce((a, p) => fold(a, p));
  } else {
    bagged = active[active.length - 1]!;
    for (let i = active.length - 2; i >= 0; i--) bagged = fold(active[i]!, bagged);
  }
  return committed === 0
    ? hasher.hash(concatBytes(u64BE(leaves), bagged))
    : hasher.hash(concatBytes(u64BE(leaves), u64BE(committed), bagged));
}

/**
 * commonware `Family::inactive_peaks`: how many leading peaks cover only leaves strictly
 * before `floor`.
 */
export function inactivePeaks(leaves: number, floor: number): number {
  let count = 0;
  let covered = 0;
  for (const height of peakHeights(leaves)) {
    covered += 2 ** height;
    if (covered > floor) break;
    count++;
  }
  return count;
}

/** Where the MMR reads its elements back (the QMDB operation log, or its own copies). */
export interface ElementSource {
  read(loc: number): Uint8Array;
}

class ElementList implements ElementSource {
  readonly items: Uint8Array[] = [];
  read(loc: number): Uint8Array {
    const item = this.items[loc];
    if (item === undefined) throw new RangeError(`element ${loc} out of range`);
    return item;
  }
}

/** Nodes below this height are not stored but rehashed from the elements when asked for. */
export const STORED_FROM_HEIGHT = 4;

interface PeakNode {
  height: number;
  index: number;
  digest: Uint8Array;
}

/** Position of node (height, index): `height` positions after the leaf that completes it. */
export function nodePosition(height: number, index: number): number {
  return leafPosition((index + 1) * 2 ** height - 1) + height;
}

/**
 * An append-only MMR over a NodeStore (state/qmdb/storage.ts). Only nodes of height ≥
 * STORED_FROM_HEIGHT are stored (one node per eight leaves): a lower node is rehashed from its
 * leaves' elements when a proof asks for it (at most 2^(STORED_FROM_HEIGHT+1) − 1 hashes), and
 * the current peaks are kept aside, so appending and rooting never rehash anything.
 *
 * It can be pruned below a leaf: the store then keeps only the peaks of the pruned prefix
 * (commonware `nodes_to_pin`), which is every digest below the boundary that a later append,
 * root or proof of a retained leaf uses; elements below the boundary are no longer read.
 */
export class Mmr {
  private leafCount: number;
  /** Current peaks, tallest first. */
  private readonly frontier: PeakNode[] = [];
  private readonly elements: ElementSource;
  private readonly ownElements: ElementList | undefined;
  private prunedLoc = 0;

  /**
   * Without `elements` the MMR keeps its own copy of every element; with them it reads them
   * back from there (and `leaves` says how many there already are, for a reopened store).
   */
  constructor(
    readonly hasher: Hasher,
    private readonly nodes: NodeStore = new MemoryNodeStore(),
    elements?: { source: ElementSource; leaves: number; prunedBelow: number },
  ) {
    if (elements === undefined) {
      this.ownElements = new ElementList();
      this.elements = this.ownElements;
      this.leafCount = 0;
    } else {
      this.ownElements = undefined;
      this.elements = elements.source;
      this.leafCount = elements.leaves;
      this.prunedLoc = elements.prunedBelow;
      let first = 0;
      for (const height of peakHeights(this.leafCount)) {
        const index = first / 2 ** height;
        this.frontier.push({ height, index, digest: this.digest(height, index) });
        first += 2 ** height;
      }
    }
  }

  get size(): number {
    return mmrSize(this.leafCount);
  }

  get leaves(): number {
    return this.leafCount;
  }

  /** First leaf location still readable; nodes wholly below it are pruned, except pinned peaks. */
  get prunedBelow(): number {
    return this.prunedLoc;
  }

  /** Appends one element (hashed as a leaf) and its new parents; returns the leaf position. */
  append(element: Uint8Array): number {
    const loc = this.leafCount;
    const leafPos = leafPosition(loc);
    this.ownElements?.items.push(element.slice());
    const frontier = this.frontier;
    let node: PeakNode = { height: 0, index: loc, digest: leafDigest(this.hasher, leafPos, element) };
    let pos = leafPos;
    // A new leaf completes one parent per trailing one bit of loc: merge with equal-height peaks.
    while (frontier.length > 0 && frontier[frontier.length - 1]!.height === node.height) {
      const left = frontier.pop()!;
      pos++;
      const height = node.height + 1;
      node = { height, index: left.index / 2, digest: nodeDigest(this.hasher, pos, left.digest, node.digest) };
      if (height >= STORED_FROM_HEIGHT) this.nodes.put(height, node.index, node.digest);
    }
    frontier.push(node);
    this.leafCount++;
    return leafPos;
  }

  /**
   * Digest of node (height, index): a current peak, a stored or pinned node, or rehashed from
   * the elements below it. Throws RangeError for a node that does not exist or was pruned.
   */
  digest(height: number, index: number): Uint8Array {
    if (!Number.isSafeInteger(index) || index < 0 || (index + 1) * 2 ** height > this.leafCount) {
      throw new RangeError(`MMR node (${height}, ${index}) out of range (${this.leafCount} leaves)`);
    }
    for (const peak of this.frontier) if (peak.height === height && peak.index === index) return peak.digest;
    const held = this.nodes.get(height, index);
    if (held !== undefined) return held;
    // Not held: rehash it, unless it lies wholly below the pruning boundary (then it is gone).
    // A node straddling the boundary rehashes from a pinned left part and retained leaves.
    if (height >= STORED_FROM_HEIGHT || (index + 1) * 2 ** height <= this.prunedLoc) {
      throw new RangeError(`MMR node (${height}, ${index}) was pruned (below leaf ${this.prunedLoc})`);
    }
    if (height === 0) return leafDigest(this.hasher, leafPosition(index), this.elements.read(index));
    return nodeDigest(this.hasher, nodePosition(height, index), this.digest(height - 1, 2 * index), this.digest(height - 1, 2 * index + 1));
  }

  /** The digest at position `pos`. */
  node(pos: number): Uint8Array {
    const height = nodeHeight(pos);
    return this.digest(height, leftmostLeafLocation(pos, height) / 2 ** height);
  }

  peakDigests(): Uint8Array[] {
    return this.frontier.map((p) => p.digest);
  }

  root(bagging: Bagging = "forward", inactive = 0): Uint8Array {
    return bagPeaks(this.hasher, this.leafCount, this.peakDigests(), bagging, inactive);
  }

  /**
   * Prunes every node of the leaves before location `loc`, pinning that prefix's peaks. The
   * elements below `loc` must still be readable during the call (pinned peaks are computed
   * from them when they were not stored).
   */
  prune(loc: number): void {
    if (loc > this.leafCount) throw new RangeError(`cannot prune to ${loc} beyond ${this.leafCount} leaves`);
    if (loc <= this.prunedLoc) return;
    const pinned: PinnedNode[] = [];
    let first = 0;
    for (const height of peakHeights(loc)) {
      const index = first / 2 ** height;
      pinned.push({ height, index, digest: this.digest(height, index) });
      first += 2 ** height;
    }
    this.nodes.prune(loc, pinned);
    if (this.ownElements !== undefined) for (let i = this.prunedLoc; i < loc; i++) delete this.ownElements.items[i];
    this.prunedLoc = loc;
  }

  /** Inclusion proof of the elements at locations [start, end). */
  rangeProof(start: number, end: number, bagging: Bagging = "forward", inactive = 0): MmrProof {
    return buildRangeProof(this.hasher, this.leafCount, inactive, bagging, start, end, (pos) => this.node(pos));
  }

  /** Inclusion proof of the element at `loc`. */
  proof(loc: number, bagging: Bagging = "forward", inactive = 0): MmrProof {
    return this.rangeProof(loc, loc + 1, bagging, inactive);
  }

  /** One proof for several (not necessarily adjacent) locations, shared nodes once. */
  multiProof(locations: readonly number[], bagging: Bagging = "forward", inactive = 0): MmrProof {
    return buildMultiProof(this.leafCount, inactive, bagging, locations, (pos) => this.node(pos));
  }
}

// ---- Inclusion proofs (commonware merkle/proof.rs `Proof`, `Blueprint`, `Subtree`).

/** commonware `Proof`: leaf count, committed inactive peaks, and the digests in layout order. */
export interface MmrProof {
  leaves: number;
  inactivePeaks: number;
  digests: Uint8Array[];
}

/** A perfect subtree: root position, height and the first leaf location it covers. */
export interface Subtree {
  pos: number;
  height: number;
  leafStart: number;
}

/**
 * How a verifier hashes leaves and inner nodes. The plain MMR uses position-prefixed hashing;
 * the "current" verifier overrides `node` at the grafting height to fold in bitmap chunks.
 */
export interface ProofHasher {
  hasher: Hasher;
  leaf(pos: number, element: Uint8Array): Uint8Array;
  node(subtree: Subtree, left: Uint8Array, right: Uint8Array): Uint8Array;
}

export function standardProofHasher(hasher: Hasher): ProofHasher {
  return {
    hasher,
    leaf: (pos, element) => leafDigest(hasher, pos, element),
    node: (sub, left, right) => nodeDigest(hasher, sub.pos, left, right),
  };
}

/** Maximum digests a proof needs per proven element (commonware MAX_PROOF_DIGESTS_PER_ELEMENT). */
export const MAX_PROOF_DIGESTS_PER_ELEMENT = 122;

export class ProofError extends Error {
  override name = "ProofError";
}

function subtreeChildren(sub: Subtree): [Subtree, Subtree] {
  const [left, right] = children(sub.pos, sub.height);
  const half = 2 ** (sub.height - 1);
  return [
    { pos: left, height: sub.height - 1, leafStart: sub.leafStart },
    { pos: right, height: sub.height - 1, leafStart: sub.leafStart + half },
  ];
}

const leafEnd = (sub: Subtree): number => sub.leafStart + 2 ** sub.height;

/** Which nodes a range proof carries, in commonware's digest layout. */
export class Blueprint {
  /** Peaks before the range folded into one leading accumulator. */
  readonly foldPrefix: Subtree[] = [];
  /** Active peaks before the range (backward bagging only), listed individually. */
  readonly prefixActive: Subtree[] = [];
  /** Peaks after the range listed individually. */
  readonly afterPeaks: number[] = [];
  /** Active peaks after the range collapsed into one suffix accumulator (backward bagging). */
  readonly suffixPeaks: number[] = [];
  /** Peaks overlapping the range. */
  readonly rangePeaks: Subtree[] = [];
  /** prefixActive, afterPeaks, then the DFS siblings of every range peak. */
  readonly fetchNodes: number[] = [];

  constructor(
    readonly leaves: number,
    readonly inactivePeaks: number,
    readonly bagging: Bagging,
    readonly start: number,
    readonly end: number,
  ) {
    if (!(Number.isSafeInteger(start) && Number.isSafeInteger(end) && start >= 0 && start < end)) {
      throw new ProofError(`empty or invalid range [${start}, ${end})`);
    }
    if (!Number.isSafeInteger(leaves) || end > leaves) throw new ProofError(`range end ${end} beyond ${leaves} leaves`);
    let cursor = 0;
    const all = peaks(mmrSize(leaves));
    all.forEach((peak, index) => {
      const sub: Subtree = { pos: peak.pos, height: peak.height, leafStart: cursor };
      if (leafEnd(sub) <= start) {
        if (index < inactivePeaks || bagging === "forward") this.foldPrefix.push(sub);
        else this.prefixActive.push(sub);
      } else if (sub.leafStart >= end) {
        if (bagging === "backward" && index >= inactivePeaks) this.suffixPeaks.push(sub.pos);
        else this.afterPeaks.push(sub.pos);
      } else {
        this.rangePeaks.push(sub);
      }
      cursor = leafEnd(sub);
    });
    if (!Number.isSafeInteger(inactivePeaks) || inactivePeaks < 0 || inactivePeaks > all.length) {
      throw new ProofError(`${inactivePeaks} inactive peaks of ${all.length}`);
    }
    this.fetchNodes.push(...this.prefixActive.map((s) => s.pos), ...this.afterPeaks);
    for (const peak of this.rangePeaks) this.collectSiblings(peak);
  }

  private collectSiblings(sub: Subtree): void {
    if (leafEnd(sub) <= this.start || sub.leafStart >= this.end) {
      this.fetchNodes.push(sub.pos);
      return;
    }
    if (sub.leafStart >= this.start && leafEnd(sub) <= this.end) return;
    for (const child of subtreeChildren(sub)) this.collectSiblings(child);
  }

  get siblingStart(): number {
    return this.prefixActive.length + this.afterPeaks.length;
  }

  /** Every node position the proof draws on (fold-prefix peaks, fetched nodes, suffix peaks). */
  requiredPositions(): number[] {
    return [...this.foldPrefix.map((s) => s.pos), ...this.fetchNodes, ...this.suffixPeaks];
  }

  /** `[fold_acc? | prefix_active | after_peaks | suffix_acc? | siblings]` from raw node digests. */
  buildProof(hasher: Hasher, getNode: (pos: number) => Uint8Array): MmrProof {
    const fold = (acc: Uint8Array, d: Uint8Array): Uint8Array => hasher.hash(concatBytes(acc, d));
    const digests: Uint8Array[] = [];
    if (this.foldPrefix.length > 0) {
      digests.push(this.foldPrefix.slice(1).reduce((acc, s) => fold(acc, getNode(s.pos)), getNode(this.foldPrefix[0]!.pos)));
    }
    const siblingStart = this.siblingStart;
    for (const pos of this.fetchNodes.slice(0, siblingStart)) digests.push(getNode(pos));
    if (this.suffixPeaks.length > 0) {
      let acc = getNode(this.suffixPeaks[this.suffixPeaks.length - 1]!);
      for (let i = this.suffixPeaks.length - 2; i >= 0; i--) acc = fold(getNode(this.suffixPeaks[i]!), acc);
      digests.push(acc);
    }
    for (const pos of this.fetchNodes.slice(siblingStart)) digests.push(getNode(pos));
    return { leaves: this.leaves, inactivePeaks: this.inactivePeaks, digests };
  }

  /** The inactive count left to fold once the fold prefix is one accumulator. */
  inactiveAfterPrefixFold(): number {
    if (this.foldPrefix.length === 0) return this.inactivePeaks;
    return Math.max(0, this.inactivePeaks - this.foldPrefix.length) + 1;
  }
}

/** Range proof for leaves [start, end) from a node getter. */
export function buildRangeProof(
  hasher: Hasher,
  leaves: number,
  inactivePeaks: number,
  bagging: Bagging,
  start: number,
  end: number,
  getNode: (pos: number) => Uint8Array,
): MmrProof {
  return new Blueprint(leaves, inactivePeaks, bagging, start, end).buildProof(hasher, getNode);
}

/**
 * Root implied by a range proof and the consecutive `elements` starting at `start`
 * (commonware `reconstruct_root_inner`); throws ProofError on malformed input.
 */
export function reconstructRangeRoot(
  ph: ProofHasher,
  proof: MmrProof,
  elements: readonly Uint8Array[],
  start: number,
  bagging: Bagging,
): Uint8Array {
  if (elements.length === 0) {
    if (start === 0 && proof.inactivePeaks === 0 && proof.leaves === 0 && proof.digests.length === 0) {
      return ph.hasher.hash(u64BE(0));
    }
    throw new ProofError("no elements");
  }
  const bp = new Blueprint(proof.leaves, proof.inactivePeaks, bagging, start, start + elements.length);
  const foldCount = bp.foldPrefix.length > 0 ? 1 : 0;
  const suffixCount = bp.suffixPeaks.length > 0 ? 1 : 0;
  const required = foldCount + bp.fetchNodes.length + suffixCount;
  if (proof.digests.length !== required) {
    throw new ProofError(`proof has ${proof.digests.length} digests, ${required} required`);
  }
  const digests = proof.digests;
  const afterStart = foldCount + bp.prefixActive.length;
  const suffixStart = afterStart + bp.afterPeaks.length;
  const siblings = digests.slice(suffixStart + suffixCount);

  const peakDigests: Uint8Array[] = digests.slice(0, afterStart);
  let cursor = 0;
  let next = 0;
  const reconstruct = (sub: Subtree): Uint8Array => {
    if (leafEnd(sub) <= bp.start || sub.leafStart >= bp.end) {
      const d = siblings[cursor++];
      if (d === undefined) throw new ProofError("missing sibling digests");
      return d;
    }
    if (sub.height === 0) return ph.leaf(sub.pos, elements[next++]!);
    const [left, right] = subtreeChildren(sub);
    const l = reconstruct(left);
    const r = reconstruct(right);
    return ph.node(sub, l, r);
  };
  for (const peak of bp.rangePeaks) peakDigests.push(reconstruct(peak));
  peakDigests.push(...digests.slice(afterStart, suffixStart));
  if (suffixCount === 1) peakDigests.push(digests[suffixStart]!);
  if (next !== elements.length || cursor !== siblings.length) throw new ProofError("unconsumed proof input");
  const root = rootWithFoldedPeaks(
    ph.hasher,
    proof.leaves,
    bp.inactiveAfterPrefixFold(),
    proof.inactivePeaks,
    peakDigests,
    bagging,
  );
  if (root === undefined) throw new ProofError("inconsistent inactive peaks");
  return root;
}

/** True if `proof` shows `elements` at [start, start+n) under `root`. */
export function verifyRangeProof(
  ph: ProofHasher,
  proof: MmrProof,
  elements: readonly Uint8Array[],
  start: number,
  root: Uint8Array,
  bagging: Bagging,
): boolean {
  try {
    return bytesEqual(reconstructRangeRoot(ph, proof, elements, start, bagging), root);
  } catch (err) {
    if (err instanceof ProofError || err instanceof RangeError) return false;
    throw err;
  }
}

/** Positions (ascending, deduplicated) a multi-proof of `locations` carries. */
export function multiProofPositions(
  leaves: number,
  inactivePeaks: number,
  bagging: Bagging,
  locations: readonly number[],
): number[] {
  if (locations.length === 0) throw new ProofError("no locations");
  const set = new Set<number>();
  for (const loc of locations) {
    for (const pos of new Blueprint(leaves, inactivePeaks, bagging, loc, loc + 1).requiredPositions()) set.add(pos);
  }
  return [...set].sort((a, b) => a - b);
}

/**
 * commonware multi-proof: the digests of `multiProofPositions`, in ascending position order,
 * shared nodes carried once.
 */
export function buildMultiProof(
  leaves: number,
  inactivePeaks: number,
  bagging: Bagging,
  locations: readonly number[],
  getNode: (pos: number) => Uint8Array,
): MmrProof {
  return {
    leaves,
    inactivePeaks,
    digests: multiProofPositions(leaves, inactivePeaks, bagging, locations).map(getNode),
  };
}

/**
 * Root implied by a multi-proof (commonware `verify_multi_inclusion`): every element's single
 * proof is rebuilt from the position-keyed digests; all must imply the same root. `ph` per
 * element lets the "current" verifier bind each element's bitmap chunk. Throws ProofError.
 */
export function reconstructMultiRoot(
  proof: MmrProof,
  elements: readonly { element: Uint8Array; loc: number; ph: ProofHasher }[],
  bagging: Bagging,
): Uint8Array {
  if (elements.length === 0) throw new ProofError("no elements");
  const positions = multiProofPositions(
    proof.leaves,
    proof.inactivePeaks,
    bagging,
    elements.map((e) => e.loc),
  );
  if (positions.length !== proof.digests.length) {
    throw new ProofError(`multi-proof has ${proof.digests.length} digests, ${positions.length} required`);
  }
  const byPos = new Map<number, Uint8Array>();
  positions.forEach((pos, i) => byPos.set(pos, proof.digests[i]!));
  let root: Uint8Array | undefined;
  for (const { element, loc, ph } of elements) {
    const single = new Blueprint(proof.leaves, proof.inactivePeaks, bagging, loc, loc + 1).buildProof(
      ph.hasher,
      (pos) => byPos.get(pos)!,
    );
    const r = reconstructRangeRoot(ph, single, [element], loc, bagging);
    if (root !== undefined && !bytesEqual(root, r)) throw new ProofError("elements imply different roots");
    root = r;
  }
  return root!;
}

export function verifyMultiProof(
  proof: MmrProof,
  elements: readonly { element: Uint8Array; loc: number; ph: ProofHasher }[],
  root: Uint8Array,
  bagging: Bagging,
): boolean {
  try {
    return bytesEqual(reconstructMultiRoot(proof, elements, bagging), root);
  } catch (err) {
    if (err instanceof ProofError || err instanceof RangeError) return false;
    throw err;
  }
}

/** Height of the node at `pos` (commonware `pos_to_height`). */
export function nodeHeight(pos: number): number {
  assertIndex(pos, "position");
  // In 1-based post-order numbering a node is a peak-shaped root iff its number is 2^k − 1;
  // otherwise jump left by the size of the preceding perfect tree.
  let p = pos + 1;
  for (;;) {
    const bits = bitLength(p);
    if (p === 2 ** bits - 1) return bits - 1;
    p -= 2 ** (bits - 1) - 1;
  }
}

/**
 * Bits of `n` ≥ 1 (the least `bits` with 2^bits > n): one instruction below 2^31, where every
 * proof's positions are (nodeHeight runs for each node of every proof: docs/engineering/performance.md
 * "Node"); counted up above it.
 */
export function bitLength(n: number): number {
  if (n < 2 ** 31) return 32 - Math.clz32(n);
  let bits = 31;
  while (2 ** bits <= n) bits++;
  return bits;
}

/** Location of the leftmost leaf below the node at `pos` of height `height`. */
export function leftmostLeafLocation(pos: number, height: number): number {
  const leafPos = pos + 2 - 2 ** (height + 1);
  let lo = Math.floor(leafPos / 2);
  let hi = leafPos;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    if (leafPosition(mid) < leafPos) lo = mid + 1;
    else hi = mid;
  }
  if (leafPosition(lo) !== leafPos) throw new RangeError(`${pos} is not a node of height ${height}`);
  return lo;
}
