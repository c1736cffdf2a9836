// The verifier's two chain sources (src/broker-kit/chain-source.ts) in process. A node source
// (over a stand-in client): the signing context from GET /genesis (CIP-39 §4), a broker-state
// answer as a view of its height (§3), a missing block or stream as such — the stream's absence
// named by the header of that height, genesis's own at 0 — a block the node no longer holds as
// unusable input naming the way out, anything else passed on. A fixture source: replayed with
// every root checked (a fixture that does not replay is unusable input naming the block and
// field), then every block's state answered from genesis on, through the same reader.
import { describe, expect, it } from "vitest";
import { kitFixture } from "../../scripts/gen-broker-kit.js";
import { ChainSourceError, fixtureSource, nodeSource, type ChainSource } from "../../src/broker-kit/chain-source.js";
import { KIT_HEIGHTS, kitStreams } from "../../src/broker-kit/kit.js";
import { label32 } from "../../src/broker-kit/signer.js";
import { toHex } from "../../src/bytes.js";
import { genesisHash } from "../../src/chain/block.js";
import { ClientError, Gone, NotFound, type BrokerState, type Client } from "../../src/client/index.js";
import type { StreamRecordV1 } from "../../src/codec/types.js";

const URL = "http://127.0.0.1:1";
const STREAM = label32("stream");
const GENESIS_HASH = label32("genesis");
const INSTANCE = label32("instance");

const answerAt = (height: bigint): BrokerState =>
  ({
    height,
    blockHash: label32(`block/${height}`),
    view: { chain_instance_id: INSTANCE, height, block_hash: label32(`block/${height}`) },
    stream: { status: "Active" } as unknown as StreamRecordV1,
    provider: null,
    schedule: { active: {}, scheduleDigest: label32("schedule") },
    bounds: { "cbqs.max_grant_ttl_ms": 5n },
    effectiveRentHeight: height - 1n,
  }) as unknown as BrokerState;

/** A client answering GET /genesis, GET /block/<h> and GET /cbqs/broker-state with `brokerState`; the calls it got. */
function stubClient(brokerState: (height: bigint) => BrokerState) {
  const calls: string[] = [];
  const client = {
    url: URL,
    async genesis() {
      calls.push("genesis");
      return { chainId: 7n, chainInstanceId: INSTANCE, blockHash: GENESIS_HASH };
    },
    async block(height: bigint) {
      calls.push(`block ${height}`);
      return { blockHash: label32(`header/${height}`) };
    },
    async brokerState(params: { stream: Uint8Array }, options: { height: bigint }) {
      calls.push(`broker-state ${toHex(params.stream).slice(0, 6)} ${options.height}`);
      return brokerState(options.height);
    },
  } as unknown as Client;
  return { client, calls };
}

const nodeError = (cls: typeof NotFound | typeof Gone, status: number, code: string) => (): never => {
  throw new cls(`${URL}/cbqs/broker-state`, status, code, `the node's ${code}`);
};

async function refusal(source: ChainSource, height: bigint): Promise<unknown> {
  return source.at(STREAM, height).then(
    () => {
      throw new Error("the read succeeded");
    },
    (err: unknown) => err,
  );
}

describe("the node source (§3, §4): the chain read through a running node's client", () => {
  it("names the node, takes the signing context from GET /genesis, and reads a view of the asked height (§3)", async () => {
    const { client, calls } = stubClient(answerAt);
    const source = await nodeSource(URL, client);
    expect([source.name, source.context]).toEqual([`node ${URL}`, { version: 1, chain_id: 7n, chain_instance_id: INSTANCE }]);
    const read = await source.at(STREAM, 12n);
    expect(read).toEqual({
      kind: "view",
      view: { height: 12n, blockHash: label32("block/12"), stream: { status: "Active" }, provider: null, bounds: { "cbqs.max_grant_ttl_ms": 5n }, effectiveRentHeight: 11n },
    });
    expect(calls).toEqual(["genesis", `broker-state ${toHex(STREAM).slice(0, 6)} 12`]);
  });

  it("a height with no block is no-block", async () => {
    const { client } = stubClient(nodeError(NotFound, 404, "block_not_found"));
    expect(await (await nodeSource(URL, client)).at(STREAM, 12n)).toEqual({ kind: "no-block" });
  });

  it("a stream absent at a height is no-stream with that height's header hash; at height 0, genesis's block hash, without a header read", async () => {
    const { client, calls } = stubClient(nodeError(NotFound, 404, "stream_not_found"));
    const source = await nodeSource(URL, client);
    expect(await source.at(STREAM, 12n)).toEqual({ kind: "no-stream", blockHash: label32("header/12") });
    expect(await source.at(STREAM, 0n)).toEqual({ kind: "no-stream", blockHash: GENESIS_HASH });
    expect(calls.filter((c) => c.startsWith("block"))).toEqual(["block 12"]);
  });

  it("a height the node no longer holds (410) is unusable input naming the height, the node's words and the way out", async () => {
    const { client } = stubClient(nodeError(Gone, 410, "pruned"));
    const err = await refusal(await nodeSource(URL, client), 3n);
    expect(err).toBeInstanceOf(ChainSourceError);
    expect(err).toMatchObject({
      name: "ChainSourceError",
      message: `${URL} no longer holds the state of height 3 (the node's pruned): start the node with a larger --retain-blocks, or verify against the chain's fixture (--fixture)`,
    });
  });

  it("any other failure — another 404 code, a transport error — is passed on as the client's", async () => {
    for (const thrown of [new NotFound(URL, 404, "route_not_found", "no route"), new ClientError("refused", URL)]) {
      const { client } = stubClient(() => {
        throw thrown;
      });
      expect(await refusal(await nodeSource(URL, client), 3n)).toBe(thrown);
    }
  });
});

describe("the fixture source (§3): the fixture replayed here, every block's state kept", () => {
  const fixture = kitFixture();
  const g = fixture.genesis;
  const streams = kitStreams(g.config.chain_id, g.chain_instance_id);
  // Built in each test, not once for the file: a mutation test activates its mutant per test.
  const kitSource = (): Promise<ChainSource> => fixtureSource(fixture, "kit-chain.json");

  it("names the fixture and takes the signing context from its genesis (§4)", async () => {
    const source = await kitSource();
    expect([source.name, source.context]).toEqual(["fixture kit-chain.json", { version: 1, chain_id: g.config.chain_id, chain_instance_id: g.chain_instance_id }]);
  });

  it("a stream's view at a block: its height, block hash, record, provider, live bounds and effective_rent_height", async () => {
    const source = await kitSource();
    const block = fixture.blocks.find((b) => b.height === KIT_HEIGHTS.bump)!;
    const read = await source.at(streams.standard, KIT_HEIGHTS.bump);
    if (read.kind !== "view") throw new Error(`expected a view, got ${read.kind}`);
    const v = read.view;
    expect([v.height, toHex(v.blockHash), v.effectiveRentHeight]).toEqual([KIT_HEIGHTS.bump, toHex(block.block_hash), block.effective_rent_height]);
    expect([v.stream.delivery_class, v.stream.authorization_generation, v.provider?.status]).toEqual(["Standard", 2n, "Active"]);
    expect(typeof v.bounds["cbqs.max_grant_ttl_ms"]).toBe("bigint");
    expect(Object.keys(v).sort()).toEqual(["blockHash", "bounds", "effectiveRentHeight", "height", "provider", "stream"]);
    // The view before the bump: the state of that block, not the head's.
    const before = await source.at(streams.standard, KIT_HEIGHTS.bump - 1n);
    expect(before.kind === "view" && before.view.stream.authorization_generation).toBe(1n);
  });

  it("every block's state is kept from genesis on: a stream absent at genesis and at block 1 is no-stream with that block's hash", async () => {
    const source = await kitSource();
    expect(await source.at(streams.standard, 0n)).toEqual({ kind: "no-stream", blockHash: genesisHash(g.chain_instance_id, g.config.timestamp, g.state_root) });
    expect(await source.at(streams.standard, KIT_HEIGHTS.provider)).toEqual({ kind: "no-stream", blockHash: fixture.blocks[0]!.block_hash });
    expect(await source.at(label32("no such stream"), KIT_HEIGHTS.last)).toEqual({ kind: "no-stream", blockHash: fixture.blocks.find((b) => b.height === KIT_HEIGHTS.last)!.block_hash });
  });

  it("a height without a block — between blocks or past the head — is no-block", async () => {
    const source = await kitSource();
    expect(await source.at(streams.standard, KIT_HEIGHTS.last + 1n)).toEqual({ kind: "no-block" });
    expect(await source.at(streams.standard, KIT_HEIGHTS.pastGrace + 1n)).toEqual({ kind: "no-block" });
  });

  it("a fixture that does not replay is unusable input naming the file, the block, the field and both values", async () => {
    const broken = kitFixture();
    const b = broken.blocks[2]!;
    const good = toHex(b.state_root);
    b.state_root = label32("not the root");
    const err = await fixtureSource(broken, "broken.json").then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ChainSourceError);
    expect((err as Error).message).toBe(`broken.json: the fixture does not replay: block ${b.height}: state_root: expected ${toHex(b.state_root)}, got ${good}`);
  });
});
