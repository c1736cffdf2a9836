// Stateless binary Merkle tree, the algorithm of commonware `storage/src/bmt` (CIP-4 §5.2/§5.3
// build tx_root and receipt_root with it). Rules, as commonware defines them:
//  - leaf node i = H(u32 BE i ‖ leaf): position hashing, so equal leaves at different positions differ;
//  - an odd node at the end of a level is paired with itself;
//  - the empty tree has the single node H("") (no position, so no proof can reference it);
//  - the finalized root is H(u32 BE leaf_count ‖ tree_root), binding the size against malleability.
import { concatBytes, bytesEqual, u32BE, u64BE } from "../../src/bytes.js";
import { hashParts, SHA256, sha256, type Hasher } from "../../src/crypto/hash.js";

export class BmtError extends Error {
  override name = "BmtError";
}

const DIGEST_LENGTH = 32;
/** The leaf count is a u32 in the root and in proofs; commonware stops one short of u32::MAX. */
const MAX_LEAVES = 0xffff_fffe;

/** Inclusion proof of one leaf: the tree size and the siblings from the leaf level upwards. */
export interface BmtProof {
  leafCount: number;
  siblings: Uint8Array[];
}

function checkLeaves(leaves: readonly Uint8Array[]): void {
  if (leaves.length > MAX_LEAVES) throw new BmtError(`too many leaves: ${leaves.length}`);
  for (const leaf of leaves) {
    if (leaf.length !== DIGEST_LENGTH) throw new BmtError(`leaf must be ${DIGEST_LENGTH} bytes, got ${leaf.length}`);
  }
}

function positionHashed(hasher: Hasher, position: number, leaf: Uint8Array): Uint8Array {
  return hasher.hash(concatBytes(u32BE(position), leaf));
}

function finalize(hasher: Hasher, leafCount: number, treeRoot: Uint8Array): Uint8Array {
  return hasher.hash(concatBytes(u32BE(leafCount), treeRoot));
}

/** Every level from the position-hashed leaves (level 0) up to the single tree root. */
function buildLevels(hasher: Hasher, leaves: readonly Uint8Array[]): Uint8Array[][] {
  checkLeaves(leaves);
  let level = leaves.length === 0 ? [hasher.hash(new Uint8Array(0))] : leaves.map((l, i) => positionHashed(hasher, i, l));
  const levels = [level];
  while (level.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i < level.length; i += 2) {
      const left = level[i]!;
      const right = level[i + 1] ?? left; // odd node is duplicated
      next.push(hasher.hash(concatBytes(left, right)));
    }
    levels.push(next);
    level = next;
  }
  return levels;
}

// Each level is reduced in place and every preimage is handed to hashParts in pieces (no
// concatenation per node): a block's roots are computed on every replayed block.
const EMPTY = new Uint8Array(0);

/** u32be(value) of a count or index (no BigInt: this is per leaf). */
function u32Bytes(value: number): Uint8Array {
  return Uint8Array.of(value >>> 24, (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff);
}

/** Finalized root H(leaf_count ‖ tree_root) over 32-byte `leaves` (in order). */
export function bmtRoot(hasher: Hasher, leaves: readonly Uint8Array[]): Uint8Array {
  checkLeaves(leaves);
  const n = leaves.length;
  let treeRoot: Uint8Array;
  if (n === 0) treeRoot = hasher.hash(EMPTY);
  else {
    const level = new Array<Uint8Array>(n);
    for (let i = 0; i < n; i++) level[i] = hashParts(hasher, u32Bytes(i), leaves[i]!);
    for (let width = n; width > 1; width = (width + 1) >>> 1) {
      for (let i = 0; i < width; i += 2) {
        level[i >>> 1] = hashParts(hasher, level[i]!, level[i + 1 < width ? i + 1 : i]!); // odd node is duplicated
      }
    }
    treeRoot = level[0]!;
  }
  return hashParts(hasher, u32Bytes(n), treeRoot);
}

/** Proof that `leaves[position]` is in the tree of `leaves`. */
export function bmtProve(hasher: Hasher, leaves: readonly Uint8Array[], position: number): BmtProof {
  if (!Number.isInteger(position) || position < 0 || position >= leaves.length) {
    throw new BmtError(`invalid position: ${position}`);
  }
  const levels = buildLevels(hasher, leaves);
  const siblings: Uint8Array[] = [];
  let index = position;
  for (let l = 0; l < levels.length - 1; l++) {
    const level = levels[l]!;
    const sibling = index % 2 === 0 ? index + 1 : index - 1;
    // The duplicated last node of an odd level needs no sibling in the proof.
    if (sibling < level.length) siblings.push(level[sibling]!);
    index = Math.floor(index / 2);
  }
  return { leafCount: leaves.length, siblings };
}

/**
 * The finalized root that `leaf` at `position` and `proof` rebuild, or null when the proof is not
 * a path of that tree (bad count or position, a missing, extra or wrong-sized sibling). A failed
 * check can then say what the proof does rebuild.
 */
export function bmtRebuild(hasher: Hasher, leaf: Uint8Array, position: number, proof: BmtProof): Uint8Array | null {
  const { leafCount, siblings } = proof;
  if (!Number.isInteger(leafCount) || leafCount < 1 || leafCount > MAX_LEAVES) return null;
  if (!Number.isInteger(position) || position < 0 || position >= leafCount) return null;
  if (leaf.length !== DIGEST_LENGTH) return null;
  let computed = positionHashed(hasher, position, leaf);
  let index = position;
  let levelSize = leafCount;
  let used = 0;
  while (levelSize > 1) {
    let left = computed;
    let right = computed;
    const lastOdd = index % 2 === 0 && index + 1 >= levelSize;
    if (!lastOdd) {
      const sibling = siblings[used++];
      if (sibling === undefined || sibling.length !== DIGEST_LENGTH) return null;
      if (index % 2 === 0) right = sibling;
      else left = sibling;
    }
    computed = hasher.hash(concatBytes(left, right));
    index = Math.floor(index / 2);
    levelSize = Math.ceil(levelSize / 2);
  }
  if (used !== siblings.length) return null; // unconsumed siblings: unaligned proof
  return finalize(hasher, leafCount, computed);
}

/** True when `proof` shows `leaf` at `position` under the finalized `root`. */
export function bmtVerify(hasher: Hasher, leaf: Uint8Array, position: number, proof: BmtProof, root: Uint8Array): boolean {
  const rebuilt = bmtRebuild(hasher, leaf, position, proof);
  return rebuilt !== null && bytesEqual(rebuilt, root);
}

/**
 * commonware's `bmt::tests::conformance::RootConformance` digest (docs/reference/anchors.md): for seed
 * s = 0..nCases-1 build the SHA-256 BMT of leaves SHA-256(u64 BE i), i < s, and feed SHA-256 with
 * (u64 LE root length ‖ root).
 */
export function bmtConformanceDigest(nCases = 200): Uint8Array {
  const parts: Uint8Array[] = [];
  for (let seed = 0; seed < nCases; seed++) {
    const leaves: Uint8Array[] = [];
    for (let i = 0; i < seed; i++) leaves.push(sha256(u64BE(i)));
    const root = bmtRoot(SHA256, leaves);
    const lengthLE = u64BE(root.length).reverse();
    parts.push(lengthLE, root);
  }
  return sha256(concatBytes(...parts));
}
