// The Cowboy state commitment (CIP-4 §5.1): commonware QMDB "current", unordered keys,
// variable-size values, Blake3, 54-byte keys, 32-byte activity-bitmap chunks. One block's
// net changes are one batch followed by one commit; `state_root` is the "current" root.
import type { Hasher } from "../../src/crypto/hash.js";
import { BLAKE3 } from "../../src/crypto/hash.js";
import type { KeyChange, StateCommitment } from "../kv/commitment.js";
import { STATE_KEY_LENGTH } from "../kv/interface.js";
import type { QmdbConfig } from "./any.js";
import { CurrentDb } from "./current.js";
import { byteVecValue, variableCodec } from "./operation.js";
import type { QmdbStorage } from "./storage.js";

export { AnyDb, type BatchTrace, type QmdbConfig, type Write } from "./any.js";
export { memoryStorage } from "./memory.js";
export type { QmdbStorage };
export { CurrentDb, type CurrentRootParts } from "./current.js";

/** Pruning waits for this many newly inactive operations, so its fixed cost is spread out. */
const PRUNE_STEP = 1024;

/** Bitmap chunk size of the Cowboy state database (grafting height 8). */
export const STATE_CHUNK_BYTES = 32;

/** QMDB configuration of `state_db`; `hasher` is swappable so tools can run it with SHA-256. */
export function stateDbConfig(hasher: Hasher = BLAKE3): QmdbConfig {
  return {
    hasher,
    // Values are `Vec<u8>`: varint length then the raw value bytes (D-0044).
    codec: variableCodec(STATE_KEY_LENGTH, byteVecValue),
    chunkBytes: STATE_CHUNK_BYTES,
    keyLength: STATE_KEY_LENGTH,
  };
}

export class QmdbStateCommitment implements StateCommitment {
  readonly db: CurrentDb;

  /** `storage`: where the database lives (default: in memory; state/lmdb/ keeps it on disk). */
  constructor(hasher: Hasher = BLAKE3, storage?: QmdbStorage) {
    this.db = new CurrentDb(stateDbConfig(hasher), storage);
  }

  /**
   * Applies the batch, computes the root, then prunes below the new inactivity floor once it has
   * moved PRUNE_STEP operations past the last pruning.
   */
  commitBatch(changes: Iterable<KeyChange>): Uint8Array {
    this.db.applyBatch(changes);
    const root = this.db.root();
    this.db.prune(PRUNE_STEP);
    return root;
  }

  get(key: Uint8Array): Uint8Array | undefined {
    return this.db.get(key);
  }

  entries(): Iterable<[Uint8Array, Uint8Array]> {
    return this.db.any.entries();
  }

  /** Before the first block: the root of a fresh database (its bootstrap commit only). */
  root(): Uint8Array {
    return this.db.root();
  }
}

export function createStateCommitment(hasher: Hasher = BLAKE3, storage?: QmdbStorage): QmdbStateCommitment {
  return new QmdbStateCommitment(hasher, storage);
}
