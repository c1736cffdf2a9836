// What each transaction of a fuzz block saw of the registry: the stream records it read or wrote
// and the 0x17 pause record and provider rent share it read, in the engine's own execution (the
// census, src/fuzz/census.ts, tells §6.1 transitions from them). Watching the reference chain's
// batch costs a key test per access; the alternative — a dry run per transaction to learn the
// state between transactions of one block — would double the builder's work.
import { bytesEqual } from "../bytes.js";
import type { Address } from "../codec/types.js";
import { paramKey, REGISTRY_ADDRESS } from "../engine/layout.js";
import { pauseRecordKey } from "../engine/pause.js";
import type { BlockBatch, StateAccess, StateStore } from "../../state/kv/interface.js";
import { ForwardingStore, TxWatchingBatch } from "../../state/store/forwarding.js";
import { StatePrefix } from "../../state/kv/keys.js";

/** A stream record as one transaction found it and left it (state values; undefined: absent). */
export interface RecordTouch {
  before: Uint8Array | undefined;
  /** The last value the transaction wrote — rolled back if it was rejected: read only for an accepted one. */
  after: Uint8Array | undefined;
}

/** One executed transaction's view of the registry. */
export interface TxTouch {
  /** Stream records (main and key streams) by state key (latin1), in first-access order. */
  streams: Map<string, RecordTouch>;
  /** The 0x17 pause-accounting record at its first read (a transfer reads none). */
  pause: Uint8Array | undefined;
  /** cbqs.rent.provider_bps at its first read (only instructions that may pay rent read it). */
  providerBps: Uint8Array | undefined;
}

const PROVIDER_BPS_KEY = paramKey("cbqs.rent.provider_bps");

/** An 0x17 storage key whose slot is a verbatim 32-byte user key: a stream record (src/engine/layout.ts). */
function isStreamKey(key: Uint8Array): boolean {
  if (key[0] !== StatePrefix.ActorStorage || key[53] !== 32) return false;
  for (let i = 0; i < 20; i++) if (key[1 + i] !== REGISTRY_ADDRESS[i]) return false;
  return true;
}

const keyId = (key: Uint8Array): string => Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString("latin1");

class TouchBatch extends TxWatchingBatch {
  private current: TxTouch | null = null;

  constructor(
    inner: BlockBatch,
    private readonly pauseKey: Uint8Array,
    private readonly txs: TxTouch[],
  ) {
    super(inner);
  }

  protected seen(a: StateAccess): void {
    const tx = this.current;
    if (tx === null) return;
    const key = a.key;
    if (key[0] === StatePrefix.ActorStorage) {
      if (isStreamKey(key)) {
        const id = keyId(key);
        const known = tx.streams.get(id);
        if (a.op === "read") {
          if (known === undefined) {
            const value = a.value?.slice(); // the batch's own array: kept, so copied (state/kv/interface.ts)
            tx.streams.set(id, { before: value, after: value });
          }
        } else {
          const after = a.after?.slice();
          if (known === undefined) tx.streams.set(id, { before: a.before, after });
          else known.after = after;
        }
      } else if (a.op === "read" && a.value !== undefined && tx.pause === undefined && bytesEqual(key, this.pauseKey)) {
        tx.pause = a.value.slice();
      }
    } else if (key[0] === StatePrefix.SystemState && a.op === "read" && tx.providerBps === undefined && bytesEqual(key, PROVIDER_BPS_KEY)) {
      tx.providerBps = a.value?.slice();
    }
  }

  protected txStart(): void {
    this.current = { streams: new Map(), pause: undefined, providerBps: undefined };
    this.txs.push(this.current);
  }
  protected txEnd(): void {
    this.current = null;
  }
}

/** A store whose batches record each transaction's TxTouch; `take()` hands over the last block's. */
export class TouchStore extends ForwardingStore {
  private readonly pauseKey: Uint8Array;
  private txs: TxTouch[] = [];

  constructor(inner: StateStore, governance: Address) {
    super(inner);
    this.pauseKey = pauseRecordKey(governance, REGISTRY_ADDRESS);
  }

  override beginBlock(height: bigint): BlockBatch {
    this.txs = [];
    return new TouchBatch(this.inner.beginBlock(height), this.pauseKey, this.txs);
  }

  /** The touches of the block executed last, one per executed transaction. */
  take(): TxTouch[] {
    const txs = this.txs;
    this.txs = [];
    return txs;
  }
}
