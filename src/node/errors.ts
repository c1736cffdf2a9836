// What a request can be refused with (docs/guides/run-a-devnet.md "Errors"): an HTTP status, a stable
// machine-readable code and a one-line message, as `{"error": {"code", "message"}}`. Answers
// that depend on the chain (a stream absent at a height) also name the block they were read at.
// Anything that is not a RequestError is internal: an opaque 500 with an id (CIP-4 §6.4, §10).
// The chain domain's errors (src/chain-node/errors.ts) know no HTTP: DOMAIN_ANSWERS is the one
// table that gives each its status and code, and the server applies it in one place
// (answerOf).
import * as domain from "../chain-node/errors.js";

export class RequestError extends Error {
  override name = "RequestError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Extra top-level fields of the answer (the read point of a not-found answer). */
    readonly extra: Record<string, unknown> = {},
    /** Extra response headers (Retry-After, Allow). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const badRequest = (code: string, message: string): RequestError => new RequestError(400, code, message);
export const notFound = (code: string, message: string, extra: Record<string, unknown> = {}): RequestError =>
  new RequestError(404, code, message, extra);

export function errorBody(code: string, message: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { error: { code, message }, ...extra };
}

type DomainErrorClass = (typeof domain.DOMAIN_ERRORS)[number];

/** How a domain error is answered: its status, its code, and headers (Retry-After) when it passes. */
interface DomainAnswer {
  status: number;
  code: string;
  headers?: Record<string, string>;
}

/** Every domain error's answer (docs/node.md "Limits and errors"). */
export const DOMAIN_ANSWERS: ReadonlyMap<DomainErrorClass, DomainAnswer> = new Map<DomainErrorClass, DomainAnswer>([
  [domain.InvalidTransaction, { status: 400, code: "invalid_transaction" }],
  [domain.KeylessSender, { status: 400, code: "not_includable" }],
  [domain.NonceGap, { status: 400, code: "invalid_nonce" }],
  [domain.TransactionTooLarge, { status: 413, code: "tx_too_large" }],
  [domain.PoolFull, { status: 503, code: "tx_pool_full" }],
  [domain.InvalidHeight, { status: 400, code: "invalid_height" }],
  [domain.InvalidBlockCount, { status: 400, code: "invalid_blocks" }],
  [domain.TimestampBackwards, { status: 400, code: "invalid_timestamp" }],
  [domain.StoreFailed, { status: 503, code: "store_failed" }],
  [domain.NotRewindable, { status: 501, code: "not_supported" }],
  [domain.SnapshotNotFound, { status: 404, code: "snapshot_not_found" }],
  [domain.MineQueueFull, { status: 503, code: "mine_queue_full", headers: { "retry-after": "5" } }],
  [domain.TooManyMineRequests, { status: 429, code: "too_many_mine_requests", headers: { "retry-after": "1" } }],
  [domain.ShuttingDown, { status: 503, code: "shutting_down" }],
]);

/** `err` as it is answered: a RequestError as it is, a domain error by DOMAIN_ANSWERS; anything else is internal (undefined). */
export function answerOf(err: unknown): RequestError | undefined {
  if (err instanceof RequestError) return err;
  if (!(err instanceof Error)) return undefined;
  const answer = DOMAIN_ANSWERS.get(err.constructor as DomainErrorClass);
  return answer === undefined ? undefined : new RequestError(answer.status, answer.code, err.message, {}, answer.headers ?? {});
}
