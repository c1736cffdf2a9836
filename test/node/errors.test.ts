// The chain domain's errors and the one table that answers them over HTTP (src/node/errors.ts
// DOMAIN_ANSWERS): every domain error class has its status and code, a refused transaction's code
// is the word the library's TransactionRefused carries (docs/guides/use-the-library.md), and what is not a refusal
// stays internal (an opaque 500).
import { describe, expect, it } from "vitest";
import * as domain from "../../src/chain-node/errors.js";
import { answerOf, DOMAIN_ANSWERS, RequestError } from "../../src/node/errors.js";

/** One instance of each domain error class, as the domain throws it. */
const instances: Error[] = [
  new domain.InvalidTransaction("not an envelope"),
  new domain.KeylessSender("0x00"),
  new domain.NonceGap(5n, 1n, 1),
  new domain.TransactionTooLarge(10, 5),
  new domain.PoolFull("the pool holds 4096 transactions; mine a block first"),
  new domain.InvalidHeight("height 1 is not above the head 1 (and a u64)"),
  new domain.InvalidBlockCount("blocks must be from 1 to 10"),
  new domain.TimestampBackwards(1n, { height: 2n, timestamp: 5n }),
  new domain.StoreFailed(3n, new Error("disk full")),
  new domain.NotRewindable("snapshots and reverts need the in-memory store"),
  new domain.SnapshotNotFound(7n, 1_024),
  new domain.MineQueueFull("the node has 400000 blocks waiting"),
  new domain.TooManyMineRequests("one client may have at most 16 mining requests"),
  new domain.ShuttingDown("the node is stopping"),
];

describe("domain errors and their HTTP answers", () => {
  it("the table answers every domain error class, and nothing else", () => {
    expect([...DOMAIN_ANSWERS.keys()].map((c) => c.name).sort()).toEqual(domain.DOMAIN_ERRORS.map((c) => c.name).sort());
    expect(instances.map((e) => e.constructor)).toEqual([...domain.DOMAIN_ERRORS]);
  });

  it("each is answered with its status, code and message (the wire answers docs/node.md lists), Retry-After where it passes", () => {
    const answered = instances.map((e) => answerOf(e)!);
    expect(answered.map((a) => [a.status, a.code, a.headers["retry-after"]])).toEqual([
      [400, "invalid_transaction", undefined],
      [400, "not_includable", undefined],
      [400, "invalid_nonce", undefined],
      [413, "tx_too_large", undefined],
      [503, "tx_pool_full", undefined],
      [400, "invalid_height", undefined],
      [400, "invalid_blocks", undefined],
      [400, "invalid_timestamp", undefined],
      [503, "store_failed", undefined],
      [501, "not_supported", undefined],
      [404, "snapshot_not_found", undefined],
      [503, "mine_queue_full", "5"],
      [429, "too_many_mine_requests", "1"],
      [503, "shutting_down", undefined],
    ]);
    for (const e of instances) expect(answerOf(e)!.message).toBe(e.message);
    expect(new domain.NonceGap(5n, 1n, 1).message).toBe("nonce 5 is not the sender's next nonce 1 (account nonce plus 1 queued)");
  });

  it("a refused transaction's code is the one its HTTP answer carries", () => {
    for (const e of instances.filter((x): x is domain.TransactionRefused => x instanceof domain.TransactionRefused)) expect([e.constructor.name, answerOf(e)!.code]).toEqual([e.constructor.name, e.code]);
  });

  it("a RequestError is answered as it is; another error (a bug, a storage error) is no refusal: it stays internal", () => {
    const own = new RequestError(404, "not_found", "no endpoint");
    expect(answerOf(own)).toBe(own);
    expect([answerOf(new Error("bug")), answerOf(new RangeError("bug")), answerOf("thrown string")]).toEqual([undefined, undefined, undefined]);
  });
});
