// The state half of a ChainDb's commit protocol (state/chain-db/chain-db.ts), shared by the in-memory and
// the LMDB ChainDb: the StateStore the engine sees, whose `commitBlock(batch)` computes the new
// root and hands the ChainDb a *staged* block — its root and its reverse diff (every key the
// block changed → its value before the block) — that the ChainDb's own `commitBlock(record)`
// then makes visible. The reverse diff serves pinned reads of retained blocks, and reads at the
// head while a block is staged.
import { bytesEqual } from "../../src/bytes.js";
import { ChainDbError } from "./chain-db.js";
import { ForwardingBatch, ForwardingStore } from "../store/forwarding.js";
import type { BlockBatch, CommitResult, StateStore } from "../kv/interface.js";

/** Map key of a state key or hash (latin1 of its bytes; `keyOfId` inverts it). */
export const keyId = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
export const keyOfId = (id: string): Uint8Array => new Uint8Array(Buffer.from(id, "latin1"));

/** Values of the keys one block changed, before it (undefined = absent). */
export type ReverseDiff = Map<string, Uint8Array | undefined>;

export interface Staged {
  height: bigint;
  stateRoot: Uint8Array;
  undo: ReverseDiff;
}

/** What the staging store needs from its ChainDb. */
export interface Stager {
  /** Throws unless a block may begin (open, nothing staged). */
  checkWritable(): void;
  stage(staged: Staged): void;
}

/** Records every key a batch writes, so the commit can keep the values it replaces. */
class RecordingBatch extends ForwardingBatch {
  readonly written = new Map<string, Uint8Array>();
  override put(key: Uint8Array, value: Uint8Array): void {
    super.put(key, value);
    this.written.set(keyId(key), key.slice());
  }
  override delete(key: Uint8Array): void {
    super.delete(key);
    this.written.set(keyId(key), key.slice());
  }
}

/** The StateStore the engine sees: commits compute the root and stage the block in the db. */
export class StagingStore extends ForwardingStore {
  constructor(
    inner: StateStore,
    private readonly db: Stager,
  ) {
    super(inner);
  }

  override beginBlock(height: bigint): BlockBatch {
    this.db.checkWritable();
    return new RecordingBatch(this.inner.beginBlock(height));
  }

  override commitBlock(batch: BlockBatch): CommitResult {
    this.db.checkWritable();
    if (!(batch instanceof RecordingBatch)) throw new ChainDbError("batch was not begun by this ChainDb's state");
    const before = new Map<string, [Uint8Array, Uint8Array | undefined]>();
    for (const [k, key] of batch.written) before.set(k, [key, this.inner.read(key)]);
    const result = this.inner.commitBlock(batch.inner);
    const undo: ReverseDiff = new Map();
    for (const [k, [key, value]] of before) {
      const after = this.inner.read(key);
      const same = value === undefined ? after === undefined : after !== undefined && bytesEqual(value, after);
      if (!same) undo.set(k, value);
    }
    this.db.stage({ height: result.height, stateRoot: result.stateRoot, undo });
    return result;
  }
}
