// Every failure the client reports is one of these, so a caller tells them apart with instanceof
// and reads what failed from fields rather than from message text. Each names the request URL
// it happened at (`url`), because a caller may talk to several nodes.

/** The base of every error the client throws. */
export class ClientError extends Error {
  override name = "ClientError";
  constructor(
    message: string,
    /** The request URL (with its query), or the node's base URL for a check spanning requests. */
    readonly url: string,
  ) {
    super(message);
  }
}

/** An argument the client refuses before sending anything (a malformed address, a negative height). */
export class InvalidArgument extends ClientError {
  override name = "InvalidArgument";
}

/** The node answered with an error status; `code` and `nodeMessage` are its `{"error": {code, message}}`. */
export class NodeError extends ClientError {
  override name = "NodeError";
  constructor(
    url: string,
    readonly status: number,
    readonly code: string,
    readonly nodeMessage: string,
  ) {
    super(`${url}: HTTP ${status} ${code}: ${nodeMessage}`, url);
  }
}

/** 404: no such block, stream, transaction, key or route. */
export class NotFound extends NodeError {
  override name = "NotFound";
}

/** 410: the node no longer holds what was asked (a pinned block below --retain-blocks, history below a snapshot). */
export class Gone extends NodeError {
  override name = "Gone";
}

/** 429 after the retries the client allows (ClientOptions.maxRetries / maxRetryWaitMs). */
export class RateLimited extends NodeError {
  override name = "RateLimited";
  constructor(
    url: string,
    code: string,
    nodeMessage: string,
    /** The last Retry-After, in seconds (undefined when the node sent none or an unreadable one). */
    readonly retryAfter: number | undefined,
    /** Requests the node answered 429: the first one and every retry. */
    readonly attempts: number,
  ) {
    super(url, 429, code, nodeMessage);
    this.message += ` (gave up after ${attempts} attempt${attempts === 1 ? "" : "s"}; Retry-After ${retryAfter === undefined ? "absent" : `${retryAfter} s`})`;
  }
}

/** Nothing arrived from the node for `timeoutMs` (no answer, or an answer that stalled). */
export class RequestTimeout extends ClientError {
  override name = "RequestTimeout";
  constructor(
    url: string,
    readonly timeoutMs: number,
    /** The whole answer took longer than `timeoutMs` (it kept arriving too slowly), not a silence. */
    readonly whole = false,
  ) {
    super(whole ? `${url}: the answer did not arrive whole within ${timeoutMs / 1000} s` : `${url}: no answer within ${timeoutMs / 1000} s`, url);
  }
}

/** The connection failed (refused, reset, unknown host); `code` is the system error code when there is one. */
export class ConnectionFailed extends ClientError {
  override name = "ConnectionFailed";
  constructor(
    url: string,
    readonly code: string,
  ) {
    super(`cannot reach ${url}: ${code}`, url);
  }
}

/** The caller's AbortSignal (ClientOptions.signal) ended the request or the wait. */
export class RequestAborted extends ClientError {
  override name = "RequestAborted";
  constructor(url: string) {
    super(`${url}: aborted`, url);
  }
}

/** The node's answer is not what the endpoint answers: not JSON, a missing or ill-typed field, too large. */
export class MalformedAnswer extends ClientError {
  override name = "MalformedAnswer";
  constructor(
    url: string,
    /** What is wrong, with the JSON path in the answer when there is one. */
    readonly problem: string,
  ) {
    super(`${url}: ${problem}`, url);
  }
}

/** Something the node served failed a check the client recomputes: never returned as a value. */
export class VerificationError extends ClientError {
  override name = "VerificationError";
}

/**
 * A proof, or the block header it is tied to, does not verify. `check` names the check that
 * failed ("state_proof", "key", "block_hash", "state_root", "tx_root", "receipt_root", …); when
 * two values were compared, `expected` is the recomputed or requested one and `actual` the served one.
 */
export class ProofInvalid extends VerificationError {
  override name = "ProofInvalid";
  constructor(
    url: string,
    readonly check: string,
    readonly reason: string,
    readonly height?: bigint,
    readonly expected?: string,
    readonly actual?: string,
  ) {
    super(`${url}: ${height === undefined ? "" : `block ${height}: `}${check}: ${reason}`, url);
  }
}

/** A feed item whose parent_hash is not the hash of the block before it. */
export class FeedBroken extends VerificationError {
  override name = "FeedBroken";
  constructor(
    url: string,
    readonly height: bigint,
    readonly parentHash: string,
    readonly previousHeight: bigint,
    readonly previousHash: string,
  ) {
    super(`${url}: block ${height}: parent_hash ${parentHash} is not the hash of block ${previousHeight} (${previousHash})`, url);
  }
}

/** waitForReceipt gave up: the transaction was not included within its timeout. */
export class WaitTimeout extends ClientError {
  override name = "WaitTimeout";
  constructor(
    url: string,
    readonly txHash: string,
    readonly timeoutMs: number,
  ) {
    super(`${url}: transaction ${txHash} has no receipt after ${timeoutMs} ms`, url);
  }
}
