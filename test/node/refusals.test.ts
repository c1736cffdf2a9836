// Every refusal of the node's reads and proofs says what was wrong in words a user can
// act on. The codes alone were tested before, so a refusal whose message was lost or garbled
// (or a check that no longer ran, leaving a later one to refuse with another message) passed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_ENVELOPE_BYTES } from "../../src/bounds.js";
import { decodedEvent } from "../../src/node/lookups.js";
import { address, get, post, startNode, toHex, type TestNode } from "./helpers.js";

const FIXTURE = "fixtures/corpus/create-quote.json"; // head at block 6
const S = `0x${"ab".repeat(32)}`;
const KEY = `0x01${"00".repeat(53)}`;
const ABSENT = `0x01${"ee".repeat(53)}`;
const REGISTRY = toHex(address(0x17));
const HEX32 = "must be 0x-prefixed 32-byte hex";

type Case = [method: "GET" | "POST", path: string, body: string | undefined, status: number, code: string, message: string];

const CASES: Case[] = [
  ["GET", "/cbqs/broker-state", undefined, 400, "missing_stream", "broker-state needs ?stream=<0x 32-byte stream id>"],
  ["GET", "/cbqs/broker-state?stream=0x12", undefined, 400, "invalid_stream", `stream ${HEX32}`],
  ["GET", `/cbqs/broker-state?stream=${S}&block=0x12`, undefined, 400, "invalid_block", `block ${HEX32}`],
  ["GET", `/cbqs/broker-state?stream=${S}&block=0x${"zz".repeat(32)}`, undefined, 400, "invalid_block", `block ${HEX32}`],
  ["GET", `/cbqs/broker-state?stream=${S}`, undefined, 404, "stream_not_found", `no stream ${S} at height 6`],
  ["GET", `/cbqs/finalized-view?block=0x${"cd".repeat(32)}`, undefined, 404, "block_not_found", `no committed block has hash 0x${"cd".repeat(32)}`],
  ["GET", "/proof/account/0x12", undefined, 400, "invalid_address", "address must be 0x-prefixed 20-byte hex"],
  ...["0x1", `0x${"00".repeat(1025)}`, "xyz", "12", "ab0x00"].map(
    (k): Case => ["GET", `/proof/storage/${REGISTRY}/${k}`, undefined, 400, "invalid_key", "the storage key must be 0x-prefixed hex of at most 1024 bytes"],
  ),
  ["GET", "/proof/tx/0x12", undefined, 400, "invalid_tx_hash", `tx_hash ${HEX32}`],
  ["GET", `/proof/tx/${S}`, undefined, 404, "tx_not_found", `no committed transaction has hash ${S}`],
  ["GET", `/proof/receipt/${S}`, undefined, 404, "tx_not_found", `no committed transaction has hash ${S}`],
  ["POST", "/proof/multi", JSON.stringify({ keys: [] }), 400, "invalid_body", '"keys" must be a non-empty array of 0x state keys'],
  ["POST", "/proof/multi", JSON.stringify({ keys: [KEY], extra: 1 }), 400, "invalid_body", 'the body must be {"keys": ["0x<54-byte state key>", …]}'],
  ["POST", "/proof/multi", JSON.stringify({ keys: [ABSENT] }), 404, "key_not_found", `${ABSENT} has no value at height 6; batch proofs cover present keys only (prove absence key by key)`],
  ["POST", "/proof/multi", JSON.stringify({ keys: ["0x12"] }), 400, "invalid_key", "keys[0] must be a 0x-prefixed 54-byte hex string"],
  ["POST", "/proof/multi", JSON.stringify({ keys: [KEY, 5] }), 400, "invalid_key", "keys[1] must be a 0x-prefixed 54-byte hex string"],
  ["POST", "/proof/multi", JSON.stringify({ keys: [KEY, `0xff${"00".repeat(53)}`] }), 400, "invalid_key", "keys[1]: unknown state key prefix 0xff (CIP-4 §4.2 prefixes are 0x01–0x1d)"],
  ["POST", "/proof/multi", JSON.stringify({ keys: Array(257).fill(KEY) }), 400, "too_many_keys", "257 keys requested; a batch proof covers at most 256 (CIP-4 §8.2)"],
  ["POST", "/proof/multi", JSON.stringify({ keys: [KEY, KEY] }), 400, "duplicate_key", "every key may appear once in a batch proof"],
  ["GET", "/account/0x12", undefined, 400, "invalid_address", "address must be 0x-prefixed 20-byte hex"],
  ["GET", `/account/${toHex(address(1))}?proof=yes`, undefined, 400, "invalid_proof", 'proof must be true or false (got "yes")'],
  ["GET", "/cbqs/stream/0x12", undefined, 400, "invalid_stream", `stream ${HEX32}`],
  ["GET", "/cbqs/provider/0x12", undefined, 400, "invalid_address", "address must be 0x-prefixed 20-byte hex"],
  ["GET", `/cbqs/provider/${toHex(address(5))}`, undefined, 404, "provider_not_found", `no provider ${toHex(address(5))} at height 6`],
  ["GET", "/tx/0x12", undefined, 400, "invalid_tx_hash", `tx_hash ${HEX32}`],
  ["GET", `/tx/${S}`, undefined, 404, "tx_not_found", `no transaction ${S} is included, queued or recently dropped`],
  ["GET", "/fixture?post_state=some", undefined, 400, "invalid_post_state", 'post_state must be every, final or none (got "some")'],
  ["GET", `/fixture?post_state=${"p".repeat(100)}`, undefined, 400, "invalid_post_state", `post_state must be every, final or none (got "${"p".repeat(40)}")`],
  ["GET", "/fixture?since=5&until=2", undefined, 400, "invalid_range", "since 5 is above until 2"],
  ["GET", `/account/${toHex(address(1))}?height=5&block=${S}`, undefined, 400, "invalid_query", "give ?height= or ?block=, not both: each names the block to read at"],
  ["GET", `/account/${toHex(address(1))}?height=7`, undefined, 404, "block_not_found", "height 7 is above the head, block 6"],
  [
    "GET",
    `/account/${toHex(address(1))}?height=5&proof=true`,
    undefined,
    400,
    "invalid_proof",
    'a state proof is against the head (block 6) only, not block 5: a QMDB "current" database proves current values',
  ],
  ["GET", `/account/${toHex(address(1))}?proof=${"t".repeat(60)}`, undefined, 400, "invalid_proof", `proof must be true or false (got "${"t".repeat(40)}")`],
  ["GET", "/cbqs/stream/%ZZ", undefined, 400, "invalid_stream", "the stream in the path has a malformed percent-encoding"],
  // The server's own refusals (src/node/server.ts), by message.
  ["GET", "/cbqs/stream/owner:nobody", undefined, 400, "invalid_stream", 'stream must be a 0x 32-byte id, "owner:0x<addr>/nonce:<n>" or "key_stream_of:<stream>" (got "owner:nobody")'],
  ["POST", "/mine?blocks=0", "", 400, "invalid_blocks", "blocks must be from 1 to 100000"],
  ["POST", "/mine?blocks=100001", "", 400, "invalid_blocks", "blocks must be a number of blocks of at most 100000 (got 100001)"],
  ["POST", "/devnet/revert", "", 400, "missing_id", "POST /devnet/revert needs ?id=<the id POST /devnet/snapshot answered>"],
  ["POST", "/proof/multi", "{bad json", 400, "invalid_json", "the body is not usable JSON: $: not valid JSON: expected a key or '}', found 'b' at byte 1"],
  ["GET", "/replication?foo=1", undefined, 400, "unknown_parameter", 'unknown query parameter "foo" (this endpoint takes: since, until, limit, order)'],
  ["GET", `/replication?${"f".repeat(100)}=1`, undefined, 400, "unknown_parameter", `unknown query parameter "${"f".repeat(64)}" (this endpoint takes: since, until, limit, order)`],
  ["GET", "/genesis?x=1", undefined, 400, "unknown_parameter", 'unknown query parameter "x" (this endpoint takes: none)'],
  ["GET", "/replication?limit=1&limit=2", undefined, 400, "duplicate_parameter", "query parameter limit is given twice"],
  ["POST", "/mine", "x", 413, "body_too_large", "this endpoint takes no request body"],
  ["POST", "/proof/multi", `{"keys": []}${" ".repeat(65_536)}`, 413, "body_too_large", "the request body exceeds 65536 bytes"],
  ["GET", "/nowhere", undefined, 404, "not_found", 'no endpoint at "/nowhere" (see /.well-known/cbqs)'],
  ["POST", `/account/${toHex(address(1))}`, "", 405, "method_not_allowed", `/account/${toHex(address(1))} takes GET, HEAD, OPTIONS`],
  ["GET", "/mine", undefined, 405, "method_not_allowed", "/mine takes POST, OPTIONS"],
  [
    "GET",
    `/account/${toHex(address(1))}?height=0`,
    undefined,
    410,
    "block_not_retained",
    "block 0 is below the retained window (the head 6 and the 2 blocks before it): its state can no longer be served",
  ],
];

describe("GET /tx's decoded events (CIP-39 §19: a CBQS event's payload is one identifier, named by its topic)", () => {
  const event = (topic: string, length: number) => ({ topic, payload: new Uint8Array(length).fill(0x5a), emitter: address(0x17) });
  it("a provider topic with 20 bytes names the provider, a stream topic with 32 bytes the stream; anything else is left as it is", () => {
    expect(decodedEvent(event("cbqs.provider.registered", 20))).toMatchObject({ provider: `0x${"5a".repeat(20)}` });
    expect(decodedEvent(event("cbqs.stream.created", 32))).toMatchObject({ stream_id: `0x${"5a".repeat(32)}` });
    for (const [topic, length] of [["cbqs.provider.registered", 32], ["cbqs.stream.created", 20], ["other.topic", 20], ["other.topic", 32]] as const) {
      const decoded = decodedEvent(event(topic, length));
      expect("provider" in decoded || "stream_id" in decoded, `${topic}/${length}`).toBe(false);
      expect(decoded["topic"]).toBe(topic);
    }
  });
});

describe("the node's refusals name what was wrong", () => {
  let n: TestNode;
  beforeAll(async () => {
    n = await startNode(FIXTURE, { retainBlocks: 2 });
  });
  afterAll(() => n.close());

  // Each case is its own test, named by its request (a body by its first 100 characters).
  for (const [method, path, body, status, code, message] of CASES) {
    it(`${method} ${path}${body === undefined ? "" : ` ${body.slice(0, 100)}`}`, async () => {
      const r = method === "GET" ? await get(n.url, path) : await post(n.url, path, body!, "application/json");
      expect([r.status, r.body["error"]]).toEqual([status, { code, message }]);
    });
  }

  it("a binary envelope above the envelope bound is refused as too large, naming the bound; a method not allowed names the allowed ones in Allow too", async () => {
    const big = await post(n.url, "/tx", new Uint8Array(MAX_ENVELOPE_BYTES + 1), "application/cbor");
    expect([big.status, big.body["error"]]).toEqual([413, { code: "tx_too_large", message: `a transaction envelope is at most ${MAX_ENVELOPE_BYTES} bytes (this one has ${MAX_ENVELOPE_BYTES + 1})` }]);
    expect((await get(n.url, "/mine")).headers.get("allow")).toBe("POST, OPTIONS");
  });

  it("a storage key of exactly 1,024 bytes is proven (the bound is inclusive)", async () => {
    const r = await get(n.url, `/proof/storage/${REGISTRY}/0x${"00".repeat(1024)}`);
    expect([r.status, r.body["error"]]).toEqual([200, undefined]);
  });

  it("an exclusion proof of exactly --max-exclusion-ops operations is served; one more than the bound is refused, naming both", async () => {
    const absent = `/proof/account/${toHex(address(0x77))}`;
    const small = await startNode(FIXTURE, { proofLimits: { maxExclusionOps: 1 } });
    let ops: number;
    try {
      const refused = await get(small.url, absent);
      const error = refused.body["error"] as { code: string; message: string };
      expect([refused.status, error.code]).toEqual([422, "exclusion_proof_too_large"]);
      const match = /^0x01(77){20}0{66} has no value; its exclusion proof would list (\d+) operations \(more than 1\)$/.exec(error.message);
      expect(match, error.message).not.toBeNull();
      ops = Number(match![2]);
    } finally {
      await small.close();
    }
    const exact = await startNode(FIXTURE, { proofLimits: { maxExclusionOps: ops } });
    try {
      expect((await get(exact.url, absent)).status).toBe(200);
    } finally {
      await exact.close();
    }
  });
});
