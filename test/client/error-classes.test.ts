// The client's errors (src/client/errors.ts) as a caller reads them: each one's name, the fields it
// carries, its message, and the classes it is an instance of — a caller tells them apart with
// instanceof and by name, and logs the message.
import { describe, expect, it } from "vitest";
import {
  ClientError,
  ConnectionFailed,
  FeedBroken,
  Gone,
  InvalidArgument,
  MalformedAnswer,
  NodeError,
  NotFound,
  ProofInvalid,
  RateLimited,
  RequestAborted,
  RequestTimeout,
  VerificationError,
  WaitTimeout,
} from "../../src/client/index.js";

const U = "http://127.0.0.1:8545/x";

describe("the client's errors", () => {
  it("each has its own name and message, and is a ClientError naming the URL", () => {
    const cases: Array<[Error, string, string, Array<abstract new (...a: never[]) => Error>]> = [
      [new ClientError("m", U), "ClientError", "m", []],
      [new InvalidArgument("height must be …", U), "InvalidArgument", "height must be …", []],
      [new NodeError(U, 503, "tx_pool_full", "full"), "NodeError", `${U}: HTTP 503 tx_pool_full: full`, []],
      [new NotFound(U, 404, "tx_not_found", "no such"), "NotFound", `${U}: HTTP 404 tx_not_found: no such`, [NodeError]],
      [new Gone(U, 410, "block_not_retained", "old"), "Gone", `${U}: HTTP 410 block_not_retained: old`, [NodeError]],
      [new RequestTimeout(U, 2500), "RequestTimeout", `${U}: no answer within 2.5 s`, []],
      [new ConnectionFailed(U, "ECONNRESET"), "ConnectionFailed", `cannot reach ${U}: ECONNRESET`, []],
      [new RequestAborted(U), "RequestAborted", `${U}: aborted`, []],
      [new MalformedAnswer(U, "$.height: expected …"), "MalformedAnswer", `${U}: $.height: expected …`, []],
      [new VerificationError("v", U), "VerificationError", "v", []],
      [new ProofInvalid(U, "key", "the requested key: …"), "ProofInvalid", `${U}: key: the requested key: …`, [VerificationError]],
      [new ProofInvalid(U, "tx_root", "differs", 7n), "ProofInvalid", `${U}: block 7: tx_root: differs`, [VerificationError]],
      [new ProofInvalid(U, "tx_root", "differs", 0n), "ProofInvalid", `${U}: block 0: tx_root: differs`, [VerificationError]],
      [new FeedBroken(U, 5n, "0xaa", 3n, "0xbb"), "FeedBroken", `${U}: block 5: parent_hash 0xaa is not the hash of block 3 (0xbb)`, [VerificationError]],
      [new WaitTimeout(U, "0xcc", 3000), "WaitTimeout", `${U}: transaction 0xcc has no receipt after 3000 ms`, []],
    ];
    for (const [err, name, message, also] of cases) {
      expect(err.name, name).toBe(name);
      expect(err.message, name).toBe(message);
      expect(err).toBeInstanceOf(ClientError);
      expect((err as ClientError).url).toBe(U);
      for (const c of also) expect(err, name).toBeInstanceOf(c);
    }
    expect(new InvalidArgument("x", U)).not.toBeInstanceOf(NodeError);
    expect(new MalformedAnswer(U, "p")).toMatchObject({ problem: "p" });
    expect(new FeedBroken(U, 5n, "0xaa", 3n, "0xbb")).toMatchObject({ height: 5n, parentHash: "0xaa", previousHeight: 3n, previousHash: "0xbb" });
  });

  it("RateLimited says how many attempts it gave up after and the last Retry-After, or that there was none", () => {
    const once = new RateLimited(U, "rate_limited", "slow down", 2, 1);
    expect(once).toBeInstanceOf(NodeError);
    expect([once.name, once.status, once.retryAfter, once.attempts]).toEqual(["RateLimited", 429, 2, 1]);
    expect(once.message).toBe(`${U}: HTTP 429 rate_limited: slow down (gave up after 1 attempt; Retry-After 2 s)`);
    expect(new RateLimited(U, "rate_limited", "m", undefined, 3).message).toBe(`${U}: HTTP 429 rate_limited: m (gave up after 3 attempts; Retry-After absent)`);
    expect(new RateLimited(U, "rate_limited", "m", 0, 2).message).toBe(`${U}: HTTP 429 rate_limited: m (gave up after 2 attempts; Retry-After 0 s)`);
  });
});
