// What the node's chain and its devnet refuse (docs/node.md "Devnet", docs/guides/use-the-library.md): one class per
// reason, carrying the values the reason is about (bigints, byte counts) and a one-line message.
// They know nothing of HTTP: the server maps each class to its status and code in one table
// (src/node/errors.ts: DOMAIN_ANSWERS), and the library (src/api/) throws them as they are.
//
// A refused transaction is a TransactionRefused, whose `code` names the reason in the words
// docs/guides/use-the-library.md lists (the same words the HTTP answers carry); a height, a batch or a timestamp out
// of range is a RangeError.

/** A transaction no block may take now; `code` names why (docs/guides/use-the-library.md). */
export abstract class TransactionRefused extends Error {
  override name = "TransactionRefused";
  abstract readonly code: "invalid_transaction" | "not_includable" | "invalid_nonce" | "tx_too_large" | "tx_pool_full";
}

/** Not a decodable envelope of this chain (a wrong chain id, bad CBOR…). */
export class InvalidTransaction extends TransactionRefused {
  readonly code = "invalid_transaction";
}

/** Sent by a keyless system account, which no block may contain. */
export class KeylessSender extends TransactionRefused {
  readonly code = "not_includable";
  constructor(readonly sender: string) {
    super(`${sender} is a keyless system account and cannot send transactions`);
  }
}

/** A nonce other than the sender's next one: its account nonce plus its transactions queued. */
export class NonceGap extends TransactionRefused {
  readonly code = "invalid_nonce";
  constructor(
    readonly got: bigint,
    readonly expected: bigint,
    readonly queued: number,
  ) {
    super(`nonce ${got} is not the sender's next nonce ${expected} (account nonce plus ${queued} queued)`);
  }
}

/** An envelope larger than any block this node produces takes. */
export class TransactionTooLarge extends TransactionRefused {
  readonly code = "tx_too_large";
  constructor(
    readonly size: number,
    readonly max: number,
  ) {
    super(`a transaction envelope is at most ${max} bytes (this one has ${size})`);
  }
}

/** The pool has no room for it: by count or by bytes. */
export class PoolFull extends TransactionRefused {
  readonly code = "tx_pool_full";
}

/** A height not above the head, or one whose timestamp would pass u64. */
export class InvalidHeight extends RangeError {
  override name = "InvalidHeight";
}

/** A batch of blocks out of range: too many for this node, or passing the last u64 height or timestamp. */
export class InvalidBlockCount extends RangeError {
  override name = "InvalidBlockCount";
}

/** A given timestamp before the head's: block timestamps never run backwards. */
export class TimestampBackwards extends RangeError {
  override name = "TimestampBackwards";
  constructor(
    readonly given: bigint,
    readonly head: { height: bigint; timestamp: bigint },
  ) {
    super(`timestamp ${given} is before the head's ${head.timestamp} (block ${head.height}): block timestamps never run backwards`);
  }
}

/** The store refused a produced block: block production has stopped for good. */
export class StoreFailed extends Error {
  override name = "StoreFailed";
  constructor(
    readonly height: bigint,
    readonly failure: Error,
  ) {
    super(`block production has stopped: the store refused block ${height} (${failure.message}); restart the node`);
  }
}

/** Snapshots and reverts on a store whose committed blocks are never rewound. */
export class NotRewindable extends Error {
  override name = "NotRewindable";
}

/** A revert to a snapshot id this node does not hold. */
export class SnapshotNotFound extends Error {
  override name = "SnapshotNotFound";
  constructor(
    readonly id: bigint,
    kept: number,
  ) {
    super(`no snapshot ${id}: ids come from POST /devnet/snapshot; a revert forgets the snapshots taken after its own, and only the last ${kept} are kept`);
  }
}

/** The devnet holds its bound of mining in all (blocks waiting or being produced). */
export class MineQueueFull extends Error {
  override name = "MineQueueFull";
}

/** One client holds its bound of mining requests or blocks. */
export class TooManyMineRequests extends Error {
  override name = "TooManyMineRequests";
}

/** The node is stopping: no write runs any more. */
export class ShuttingDown extends Error {
  override name = "ShuttingDown";
}

/** Every domain error class: the server's table maps each (test/node/errors.test.ts checks it covers them all). */
export const DOMAIN_ERRORS = [
  InvalidTransaction,
  KeylessSender,
  NonceGap,
  TransactionTooLarge,
  PoolFull,
  InvalidHeight,
  InvalidBlockCount,
  TimestampBackwards,
  StoreFailed,
  NotRewindable,
  SnapshotNotFound,
  MineQueueFull,
  TooManyMineRequests,
  ShuttingDown,
] as const;
