// The reads behind the explorer page (docs/guides/run-a-devnet.md "The explorer"): GET /block with decoded
// transactions, a stream's history (its §6.1 settled escrow checked against what a real
// settlement left) and events (paged, bounded scan), GET /search, and the page's own files.
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { txHash } from "../../src/chain/envelope.js";
import { ix } from "../../src/gas/builder.js";
import { devAccounts, devnetGenesisSource } from "../../src/harness/devnet.js";
import { readFixture } from "../../src/harness/documents.js";
import { DEFAULT_HISTORY_POINTS, DEFAULT_LATEST_LIMIT, EVENTS_SCAN_BLOCKS, MAX_HISTORY_POINTS, MAX_LATEST_LIMIT } from "../../src/node/explorer-reads.js";
import { EXPLORER_MODULES } from "../../src/node/explorer.js";
import { cbqs } from "../cli/program.js";
import { requireFreshDist } from "../fuzz/dist.js";
import { address, cbqsTx, get, post, startNode, toHex, transferTx, type TestNode } from "./helpers.js";

const OWNER = "0xa05a065ba5d5888cc61c4e5ccfbd57f7bd9bbe99"; // dev0
const PROVIDER = "0x074b21343d43bffcb01084541b4f8dab844fdcaa"; // dev1
const STREAM_KEY = `owner:${OWNER}/nonce:1`;

let n: TestNode;
let streamId = "";
let createTx = "";
/** Heights of the two blocks that settled the stream's rent. */
const settledAt: number[] = [];

async function send(json: string): Promise<string> {
  const r = await cbqs("tx", json, "--node", n.url, "--send");
  expect(r.exitCode, r.err).toBe(0);
  return String((JSON.parse(r.out) as { tx_hash: string }).tx_hash);
}

const mine = async (blocks = 1): Promise<number> => Number((await post(n.url, blocks === 1 ? "/mine" : `/mine?blocks=${blocks}`, "")).body["height"]);

beforeAll(async () => {
  n = await startNode({ kind: "genesis", source: devnetGenesisSource(10) }, { retainBlocks: 64 });
  await send("@fixtures/devnet/register-provider.json");
  await mine(); // 1
  createTx = await send("@fixtures/devnet/create-stream.json");
  await mine(); // 2: created, rent from here
  streamId = String((await get(n.url, `/search?q=${encodeURIComponent(STREAM_KEY)}`)).body["id"]);
  const settle = JSON.stringify({ from: "dev2", cbqs: { SettleStreamRent: { stream_id: streamId } } });
  await mine(2); // 3, 4
  await send(settle);
  settledAt.push(await mine()); // 5
  await mine(); // 6
  await send(settle);
  settledAt.push(await mine()); // 7
  await mine(3); // 8–10
});

afterAll(async () => {
  await n?.close();
});

describe("GET /block/{height|hash}", () => {
  it("a block by height or hash: header, each transaction decoded to its instruction, its receipt, its events named", async () => {
    const byHeight = await get(n.url, "/block/2");
    expect(byHeight.status).toBe(200);
    const b = byHeight.body;
    expect(b).toMatchObject({ height: "2", effective_rent_height: "2" });
    const feed = ((await get(n.url, "/replication?since=2&until=2")).body["items"] as Array<Record<string, unknown>>)[0]!;
    for (const f of ["block_hash", "state_root", "parent_hash", "timestamp", "tx_root", "receipt_root", "logs_root"]) expect(b[f], f).toBe(feed[f]);
    const [tx] = b["transactions"] as Array<Record<string, unknown>>;
    expect(tx).toMatchObject({ index: 0, tx_hash: createTx, receipt: { status: "ok", error: null } });
    const decoded = tx!["transaction"] as Record<string, unknown>;
    expect(decoded).toMatchObject({ chain_id: "7", from: OWNER, nonce: "0", kind: "system", opcode: "218" });
    expect(decoded["payload"]).toHaveProperty("CreateStream.provider", PROVIDER);
    expect(tx!["events"]).toEqual([{ emitter: "0x0000000000000000000000000000000000000017", topic: "cbqs.stream.created", payload: streamId, stream_id: streamId }]);
    expect((await get(n.url, `/block/${String(b["block_hash"])}`)).body).toEqual(b);
    expect((await get(n.url, "/block/0")).body).toMatchObject({ height: "0", transactions: [] });
  });

  it("names the stored blocks either side of it: none below genesis, none above the head; heights skipped are stepped over", async () => {
    const sides = async (m: TestNode, h: string) => {
      const b = (await get(m.url, `/block/${h}`)).body;
      return [b["previous_height"], b["next_height"]];
    };
    expect(await sides(n, "0")).toEqual([null, "1"]);
    expect(await sides(n, "2")).toEqual(["1", "3"]);
    expect(await sides(n, "10")).toEqual(["9", null]);
    const m = await startNode({ kind: "genesis", source: devnetGenesisSource(1) });
    try {
      await post(m.url, "/mine?height=5", "");
      await post(m.url, "/mine?height=9", "");
      expect([await sides(m, "0"), await sides(m, "5"), await sides(m, "9")]).toEqual([
        [null, "5"],
        ["0", "9"],
        ["5", null],
      ]);
    } finally {
      await m.close();
    }
  });

  it("refuses an unknown block (404 block_not_found, naming the head) and a malformed one (400 invalid_block)", async () => {
    const missing = await get(n.url, "/block/999");
    expect([missing.status, missing.body["error"]]).toEqual([404, { code: "block_not_found", message: "no committed block 999" }]);
    expect(missing.body["height"]).toBe("10");
    const hash = `0x${"ab".repeat(32)}`;
    expect((await get(n.url, `/block/${hash}`)).body["error"]).toEqual({ code: "block_not_found", message: `no committed block ${hash}` });
    for (const bad of ["01", "-1", "ten", "0x12"]) expect((await get(n.url, `/block/${bad}`)).body, bad).toMatchObject({ error: { code: "invalid_block" } });
    expect((await get(n.url, "/block/ten")).body["error"]).toEqual({ code: "invalid_block", message: 'block must be a block height or a 0x block hash: decimal digits without sign or leading zeros (got "ten")' });
  });

  it("a rejected transaction's receipt carries the engine's message, as GET /tx gives it", async () => {
    // cycle_price 1: 0x11…11 pays the fee of a SetProviderStatus it is not allowed to make.
    const m = await startNode({ kind: "genesis", source: readFixture("fixtures/corpus/fee-insufficient-balance.json").genesis.source });
    try {
      const tx = cbqsTx(7n, address(0x11), 0n, ix.setProviderStatus("Draining"));
      expect((await post(m.url, "/tx", toHex(tx))).status).toBe(200);
      await post(m.url, "/mine", "");
      const [decoded] = (await get(m.url, "/block/1")).body["transactions"] as Array<{ receipt: { status: string; error: Record<string, string> } }>;
      expect(decoded!.receipt.status).toBe("rejected");
      expect(decoded!.receipt.error).toEqual({ code: expect.any(String), name: expect.any(String), message: expect.stringMatching(/\S/) });
      expect(decoded!.receipt).toEqual((await get(m.url, `/tx/${toHex(txHash(tx))}`)).body["receipt"]);
      // Its fee: what the sender's balance lost, its cycles and cells at the genesis prices.
      const fee = ((await get(m.url, "/block/1")).body["transactions"] as Array<{ fee: string }>)[0]!.fee;
      const before = BigInt(String((await get(m.url, `/account/${toHex(address(0x11))}?height=0`)).body["balance"]));
      const after = BigInt(String((await get(m.url, `/account/${toHex(address(0x11))}`)).body["balance"]));
      expect(BigInt(fee)).toBeGreaterThan(0n);
      expect(BigInt(fee)).toBe(before - after);
    } finally {
      await m.close();
    }
  });

  it("a transaction's fee is its cycles and its cells at the genesis prices: what its sender's balance lost", async () => {
    // cycle_price 1 and cell_price 1: a provider's registration writes its record (cells > 0).
    const m = await startNode({ kind: "genesis", source: readFixture("fixtures/corpus/fee-insufficient-balance.json").genesis.source });
    try {
      expect((await post(m.url, "/tx", toHex(cbqsTx(7n, address(0x11), 0n, ix.registerProvider())))).status).toBe(200);
      await post(m.url, "/mine", "");
      const [shown] = (await get(m.url, "/block/1")).body["transactions"] as Array<{ fee: string; receipt: { status: string; cycles: string; cells: string } }>;
      expect(shown!.receipt.status).toBe("ok");
      expect(BigInt(shown!.receipt.cells)).toBeGreaterThan(0n);
      const balance = async (at: string) => BigInt(String((await get(m.url, `/account/${toHex(address(0x11))}${at}`)).body["balance"]));
      expect(BigInt(shown!.fee)).toBe((await balance("?height=0")) - (await balance("")));
      expect(BigInt(shown!.fee)).toBe(BigInt(shown!.receipt.cycles) + BigInt(shown!.receipt.cells));
    } finally {
      await m.close();
    }
  });
});

describe("GET /latest", () => {
  it("the newest transactions, newest first, each decoded with its outcome, cycles, cells and fee; the newest streams as they stand at the head", async () => {
    const latest = (await get(n.url, "/latest")).body;
    expect(latest["height"]).toBe("10");
    const txs = latest["transactions"] as Array<Record<string, unknown>>;
    // Four transactions in all: the two settlements (blocks 7, 5), the stream's creation (2), the provider's registration (1).
    expect(txs.map((t) => [t["height"], t["index"], (t["transaction"] as Record<string, unknown>)["from"]])).toEqual([
      [String(settledAt[1]), 0, toHex(devAccounts(3)[2]!.address)],
      [String(settledAt[0]), 0, toHex(devAccounts(3)[2]!.address)],
      ["2", 0, OWNER],
      ["1", 0, PROVIDER],
    ]);
    expect(txs[2]).toMatchObject({ tx_hash: createTx, status: "ok", error: null, fee: "0" });
    expect(BigInt(String(txs[2]!["cycles"]))).toBeGreaterThan(0n);
    const head = (await get(n.url, `/cbqs/stream/${streamId}`)).body["stream"] as Record<string, unknown>;
    expect(latest["streams"]).toEqual([
      { stream_id: streamId, created_at: "2", tx_hash: createTx, status: "Active", owner: OWNER, provider: PROVIDER, escrow_balance: head["escrow_balance"], rate_per_block: head["rate_per_block"] },
    ]);
  });

  it(`?limit bounds both lists (default ${DEFAULT_LATEST_LIMIT}, clamped into [1, ${MAX_LATEST_LIMIT}]); a rejected transaction names its error`, async () => {
    const two = (await get(n.url, "/latest?limit=2")).body;
    expect((two["transactions"] as unknown[]).length).toBe(2);
    expect((await get(n.url, "/latest?limit=0")).body["transactions"]).toHaveLength(1);
    expect((await get(n.url, `/latest?limit=${MAX_LATEST_LIMIT + 1}`)).body["transactions"]).toHaveLength(4);
    expect((await get(n.url, "/latest?limit=x")).body["error"]).toEqual({ code: "invalid_limit", message: 'limit must be a number of items: decimal digits without sign or leading zeros (got "x")' });
    const m = await startNode({ kind: "genesis", source: readFixture("fixtures/corpus/fee-insufficient-balance.json").genesis.source });
    try {
      expect((await get(m.url, "/latest")).body).toMatchObject({ transactions: [], streams: [] });
      await post(m.url, "/tx", toHex(cbqsTx(7n, address(0x11), 0n, ix.setProviderStatus("Draining"))));
      for (let i = 0; i < DEFAULT_LATEST_LIMIT + 2; i++) await post(m.url, "/mine", "");
      const [rejected] = (await get(m.url, "/latest")).body["transactions"] as Array<Record<string, unknown>>;
      expect(rejected).toMatchObject({ height: "1", status: "rejected", error: expect.stringMatching(/^[A-Z]\w+$/) });
      expect(BigInt(String(rejected!["fee"]))).toBeGreaterThan(0n);
    } finally {
      await m.close();
    }
  });

  it(`scans at most EVENTS_SCAN_BLOCKS (${EVENTS_SCAN_BLOCKS}) blocks down from the head: older transactions are not listed`, async () => {
    const m = await startNode({ kind: "genesis", source: devnetGenesisSource(1) });
    try {
      await post(m.url, "/tx", toHex(transferTx(7n, devAccounts(1)[0]!.address, 0n, address(0x22), 1n)));
      await post(m.url, "/mine", ""); // 1
      await post(m.url, `/mine?blocks=${EVENTS_SCAN_BLOCKS - 1}`, ""); // the head is block 4,096: block 1 is the lowest scanned
      expect((await get(m.url, "/latest")).body["transactions"]).toHaveLength(1);
      await post(m.url, "/mine", "");
      expect((await get(m.url, "/latest")).body["transactions"]).toEqual([]);
    } finally {
      await m.close();
    }
  });
});

describe("GET /latest: the scan ends once both lists are full, and not before", () => {
  const [owner, provider] = devAccounts(2).map((a) => a.address);
  const createStream = (m: TestNode, ownerNonce: bigint, nonce: bigint) =>
    post(m.url, "/tx", toHex(cbqsTx(7n, owner!, nonce, ix.createStream({ owner_nonce: ownerNonce, initial_escrow: 80_000n, provider: provider! }))));
  const mined = async (m: TestNode): Promise<string> => {
    const body = (await post(m.url, "/mine", "")).body;
    expect((body["receipts"] as Array<{ error: unknown }>).map((r) => r.error)).toEqual((body["receipts"] as unknown[]).map(() => null));
    return String(body["height"]);
  };
  const latest = async (m: TestNode, limit: number) => {
    const body = (await get(m.url, `/latest?limit=${limit}`)).body;
    return { txs: (body["transactions"] as Array<{ height: string }>).map((t) => t.height), streams: (body["streams"] as Array<{ created_at: string; status: string }>).map((t) => [t.created_at, t.status]) };
  };

  it("a stream created more than a page of blocks below transactions that fill their list is still found; two created in one block fill a list of one with the later", async () => {
    const m = await startNode({ kind: "genesis", source: devnetGenesisSource(2) });
    try {
      expect((await post(m.url, "/tx", toHex(cbqsTx(7n, provider!, 0n, ix.registerProvider())))).status).toBe(200);
      await mined(m); // 1
      expect((await createStream(m, 1n, 0n)).status).toBe(200);
      const first = await mined(m); // 2: a stream
      await post(m.url, "/mine?blocks=100", ""); // more than a page of empty blocks
      expect((await post(m.url, "/tx", toHex(transferTx(7n, owner!, 1n, provider!, 1n)))).status).toBe(200);
      const transfer = await mined(m); // a transfer alone
      expect(await latest(m, 1)).toEqual({ txs: [transfer], streams: [[first, "Active"]] });
      // Two streams in the newest block: the list of one takes the later only, read from the newest page alone.
      for (const [i, ownerNonce] of [2n, 3n].entries()) expect((await createStream(m, ownerNonce, 2n + BigInt(i))).status).toBe(200);
      const newest = await mined(m);
      const pages = vi.spyOn(m.node.db, "blocks");
      try {
        const one = (await get(m.url, "/latest?limit=1")).body;
        const [tx] = one["transactions"] as Array<{ tx_hash: string; index: number }>;
        expect(tx!.index).toBe(1);
        expect((one["streams"] as Array<{ created_at: string; tx_hash: string }>).map((x) => [x.created_at, x.tx_hash])).toEqual([[newest, tx!.tx_hash]]);
        expect(pages).toHaveBeenCalledTimes(1);
      } finally {
        pages.mockRestore();
      }
      expect(await latest(m, 3)).toEqual({ txs: [newest, newest, transfer], streams: [[newest, "Active"], [newest, "Active"], [first, "Active"]] });
    } finally {
      await m.close();
    }
  });
});

describe("GET /devnet/names", () => {
  it("each dev account's name and address, nothing secret, to any client; none on a chain that is not a devnet", async () => {
    const names = (await get(n.url, "/devnet/names")).body;
    expect(names["accounts"]).toEqual(devAccounts(10).map((a) => ({ name: a.name, address: toHex(a.address) })));
    expect((names["accounts"] as Array<{ name: string; address: string }>).slice(0, 2)).toEqual([
      { name: "dev0", address: OWNER },
      { name: "dev1", address: PROVIDER },
    ]);
    const m = await startNode({ kind: "genesis", source: readFixture("fixtures/corpus/fee-insufficient-balance.json").genesis.source });
    try {
      expect((await get(m.url, "/devnet/names")).body["accounts"]).toEqual([]);
    } finally {
      await m.close();
    }
  });
});

describe("GET /cbqs/stream/{id}/history", () => {
  it("by default every retained height, the stream absent before its creation; the settled escrow is what the next settlement really left", async () => {
    const h = (await get(n.url, `/cbqs/stream/${streamId}/history`)).body;
    expect(h).toMatchObject({ height: "10", stream_id: streamId, from: "0", to: "10" });
    const points = h["points"] as Array<Record<string, string | null>>;
    expect(points.map((p) => p["height"])).toEqual(Array.from({ length: 11 }, (_, i) => String(i)));
    expect(points.slice(0, 2)).toEqual([
      { height: "0", status: null },
      { height: "1", status: null },
    ]);
    expect(points[2]).toEqual({ height: "2", status: "Active", escrow_balance: "80000", settled_escrow: "80000", last_settled_block: "2", rate_per_block: "8000" });
    // A settlement at h leaves exactly what the point before it predicted for h, and records it.
    for (const s of settledAt) {
      const before = points[s - 1]!;
      const at = points[s]!;
      expect(at["last_settled_block"]).toBe(String(s));
      expect(at["escrow_balance"]).toBe(at["settled_escrow"]);
      expect(BigInt(before["settled_escrow"]!) - BigInt(at["escrow_balance"]!)).toBe(8000n);
      expect(BigInt(before["escrow_balance"]!)).toBeGreaterThan(BigInt(at["escrow_balance"]!));
    }
    // Rent accrues block by block: what a settlement would leave falls by the rate each block.
    const settled = points.slice(2).map((p) => BigInt(p["settled_escrow"]!));
    expect(settled.every((v, i) => i === 0 || settled[i - 1]! - v === 8000n)).toBe(true);
  });

  it("?from&to&points samples the range evenly, one point per block, ends included; the stream-key form works as the id", async () => {
    const h = (await get(n.url, `/cbqs/stream/${encodeURIComponent(STREAM_KEY)}/history?from=2&to=10&points=3`)).body;
    expect((h["points"] as Array<{ height: string }>).map((p) => p.height)).toEqual(["2", "6", "10"]);
    expect((await get(n.url, `/cbqs/stream/${streamId}/history?from=4&to=4`)).body["points"]).toHaveLength(1);
    // points is clamped into [2, MAX_HISTORY_POINTS].
    expect(((await get(n.url, `/cbqs/stream/${streamId}/history?points=1`)).body["points"] as unknown[]).length).toBe(2);
    expect(((await get(n.url, `/cbqs/stream/${streamId}/history?points=${"9".repeat(30)}`)).body["points"] as unknown[]).length).toBe(11);
    expect(MAX_HISTORY_POINTS).toBe(256);
  });

  it("a closed stream settles nothing: its settled escrow is its recorded escrow", async () => {
    const c = await startNode({ kind: "genesis", source: devnetGenesisSource(10) });
    try {
      const sendTo = async (json: string): Promise<void> => {
        const r = await cbqs("tx", json, "--node", c.url, "--send");
        expect(r.exitCode, r.err).toBe(0);
      };
      await sendTo("@fixtures/devnet/register-provider.json");
      await post(c.url, "/mine", ""); // 1
      await sendTo("@fixtures/devnet/create-stream.json");
      await post(c.url, "/mine", ""); // 2
      const id = String((await get(c.url, `/search?q=${encodeURIComponent(STREAM_KEY)}`)).body["id"]);
      await sendTo(JSON.stringify({ from: "dev0", cbqs: { CloseStream: { stream_id: id } } }));
      await post(c.url, "/mine?blocks=2", ""); // 3: closed, 4
      const closed = (height: string) => ({ height, status: "Closed", escrow_balance: "0", settled_escrow: "0", last_settled_block: "3", rate_per_block: "8000" });
      expect((await get(c.url, `/cbqs/stream/${id}/history?from=2&to=4`)).body["points"]).toEqual([
        { height: "2", status: "Active", escrow_balance: "80000", settled_escrow: "80000", last_settled_block: "2", rate_per_block: "8000" },
        closed("3"),
        closed("4"),
      ]);
    } finally {
      await c.close();
    }
  });

  it("a height without a block reads the block below it, and each block is one point: no repeats where heights were skipped", async () => {
    const gap = await startNode({ kind: "genesis", source: devnetGenesisSource(10) });
    try {
      await post(gap.url, "/mine", "");
      await post(gap.url, "/mine?height=10", "");
      const id = `0x${"11".repeat(32)}`;
      for (const query of ["", "?from=0&to=10&points=11", "?from=2&to=10&points=5"]) {
        const h = (await get(gap.url, `/cbqs/stream/${id}/history${query}`)).body;
        const expected = query.startsWith("?from=2") ? ["1", "10"] : ["0", "1", "10"];
        expect((h["points"] as Array<{ height: string }>).map((p) => p.height), query).toEqual(expected);
      }
    } finally {
      await gap.close();
    }
  });

  it(`without ?points the range is sampled at ${DEFAULT_HISTORY_POINTS} blocks, and at most ${MAX_HISTORY_POINTS} with it; the default range is the head and the --retain-blocks heights below it`, async () => {
    const long = await startNode({ kind: "genesis", source: devnetGenesisSource(10) }, { retainBlocks: 300 });
    try {
      await post(long.url, "/mine?blocks=400", "");
      const id = `0x${"11".repeat(32)}`;
      const heights = async (query: string): Promise<string[]> => {
        const h = (await get(long.url, `/cbqs/stream/${id}/history${query}`)).body;
        expect([h["from"], h["to"]], query).toEqual(["100", "400"]);
        return (h["points"] as Array<{ height: string }>).map((p) => p.height);
      };
      const byDefault = await heights("");
      expect([byDefault.length, byDefault[0], byDefault[1], byDefault.at(-1)]).toEqual([DEFAULT_HISTORY_POINTS, "100", "102", "400"]);
      const most = await heights(`?points=${MAX_HISTORY_POINTS + 1}`);
      expect([most.length, most[0], most[1], most.at(-1)]).toEqual([MAX_HISTORY_POINTS, "100", "101", "400"]);
      expect(DEFAULT_HISTORY_POINTS).toBe(128);
    } finally {
      await long.close();
    }
  });

  it("refuses a range it cannot serve: from above to (400), to above the head (404), below the retained state (410)", async () => {
    const refused = async (query: string) => {
      const r = await get(n.url, `/cbqs/stream/${streamId}/history?${query}`);
      return [r.status, r.body["error"]];
    };
    expect(await refused("from=5&to=4")).toEqual([400, { code: "invalid_range", message: "from 5 is above to 4" }]);
    expect(await refused("to=11")).toEqual([404, { code: "block_not_found", message: "to 11 is above the head, block 10" }]);
    expect((await get(n.url, `/cbqs/stream/${streamId}/history?from=x`)).body).toMatchObject({ error: { code: "invalid_from" } });
    const short = await startNode({ kind: "genesis", source: devnetGenesisSource(10) }, { retainBlocks: 3 });
    try {
      await post(short.url, "/mine?blocks=10", "");
      const id = `0x${"11".repeat(32)}`;
      const window = (await get(short.url, `/cbqs/stream/${id}/history`)).body;
      expect([window["from"], window["to"], (window["points"] as unknown[]).length]).toEqual(["7", "10", 4]);
      const old = await get(short.url, `/cbqs/stream/${id}/history?from=6`);
      expect([old.status, old.body["error"]]).toEqual([410, expect.objectContaining({ code: "block_not_retained" })]);
    } finally {
      await short.close();
    }
  });
});

describe("GET /cbqs/stream/{id}/events", () => {
  it("the stream's events newest first, each with its block and transaction; ?limit pages with next", async () => {
    const all = (await get(n.url, `/cbqs/stream/${streamId}/events`)).body;
    expect(all).toMatchObject({ stream_id: streamId, until: "10", next: null });
    const events = all["events"] as Array<Record<string, unknown>>;
    expect(events.map((e) => [e["height"], e["topic"]])).toEqual([
      [String(settledAt[1]), "cbqs.stream.rent_settled"],
      [String(settledAt[0]), "cbqs.stream.rent_settled"],
      ["2", "cbqs.stream.created"],
    ]);
    expect(events[2]).toMatchObject({ tx_hash: createTx, index: 0, stream_id: streamId });
    const first = (await get(n.url, `/cbqs/stream/${streamId}/events?limit=1`)).body;
    expect((first["events"] as unknown[]).length).toBe(1);
    expect(first["next"]).toBe(String(settledAt[1]! - 1));
    const rest = (await get(n.url, `/cbqs/stream/${streamId}/events?until=${String(first["next"])}`)).body;
    expect((rest["events"] as Array<{ height: string }>).map((e) => e.height)).toEqual([String(settledAt[0]), "2"]);
  });

  it("?limit=0 is taken as 1, the least", async () => {
    const one = (await get(n.url, `/cbqs/stream/${streamId}/events?limit=0`)).body;
    expect([(one["events"] as Array<{ height: string }>).map((e) => e.height), one["next"]]).toEqual([[String(settledAt[1])], String(settledAt[1]! - 1)]);
  });

  it("scans at most EVENTS_SCAN_BLOCKS blocks per answer: next continues below them", async () => {
    const many = await startNode({ kind: "genesis", source: devnetGenesisSource(10) });
    try {
      await post(many.url, `/mine?blocks=${EVENTS_SCAN_BLOCKS + 10}`, "");
      const id = `0x${"22".repeat(32)}`;
      const page = (await get(many.url, `/cbqs/stream/${id}/events`)).body;
      expect(page["events"]).toEqual([]);
      expect(page["next"]).toBe("10");
      expect((await get(many.url, `/cbqs/stream/${id}/events?until=${String(page["next"])}`)).body["next"]).toBe(null);
      // A full scan that ends at genesis has nothing below it; one that ends at block 1 has genesis.
      const next = async (until: number) => (await get(many.url, `/cbqs/stream/${id}/events?until=${until}`)).body["next"];
      expect([await next(EVENTS_SCAN_BLOCKS - 1), await next(EVENTS_SCAN_BLOCKS), await next(0)]).toEqual([null, "0", null]);
    } finally {
      await many.close();
    }
  });
});

describe("the explorer reads' parameters, refused by name and message, and the sampling's edges", () => {
  const digits = (name: string, what: string, got: string) => ({ code: `invalid_${name}`, message: `${name} must be ${what}: decimal digits without sign or leading zeros (got "${got}")` });

  it("history's from, to and points, and events' until and limit, each named with what it must be", async () => {
    const refusal = async (path: string) => (await get(n.url, path)).body["error"];
    for (const [name, what] of [
      ["from", "a block height"],
      ["to", "a block height"],
      ["points", "a number of points"],
    ] as const) expect(await refusal(`/cbqs/stream/${streamId}/history?${name}=x`), name).toEqual(digits(name, what, "x"));
    for (const [name, what] of [
      ["until", "a block height"],
      ["limit", "a number of events"],
    ] as const) expect(await refusal(`/cbqs/stream/${streamId}/events?${name}=x`), name).toEqual(digits(name, what, "x"));
    expect(await refusal(`/search?q=${"9".repeat(21)}`)).toEqual({ code: "invalid_q", message: `q must be a block height of at most 18446744073709551615 (got ${"9".repeat(21)})` });
  });

  it("history samples at most `points` heights, none above `to`: 4 of the 5 heights 0–4, 3 of 0–4 on a chain of 10", async () => {
    const heights = async (query: string) => ((await get(n.url, `/cbqs/stream/${streamId}/history?${query}`)).body["points"] as Array<{ height: string }>).map((p) => Number(p.height));
    expect(await heights("from=0&to=4&points=4")).toEqual([0, 1, 2, 4]);
    expect(await heights("from=0&to=4&points=5")).toEqual([0, 1, 2, 3, 4]);
    expect(await heights("from=0&to=4&points=3")).toEqual([0, 2, 4]);
  });

  it("search: a text that only contains an address, a hash or a stream key's prefix names nothing; the text echoed is cut at 80 characters", async () => {
    const invalidQ = "q must be a block height, a 0x 32-byte hash or id, a 0x 20-byte address, a dev account name or a stream key (owner:0x<addr>/nonce:<n>)";
    for (const q of [`a${OWNER}`, `${OWNER}a`, `x0x${"cd".repeat(32)}`, `0x${"cd".repeat(32)}ab`, `x${STREAM_KEY}`]) {
      const r = await get(n.url, `/search?q=${encodeURIComponent(q)}`);
      expect([r.status, r.body["error"]], q).toEqual([400, { code: "invalid_q", message: `${invalidQ} (got ${JSON.stringify(q)})` }]);
    }
    const long = "z".repeat(100);
    expect((await get(n.url, `/search?q=${long}`)).body["error"]).toEqual({ code: "invalid_q", message: `${invalidQ} (got "${"z".repeat(80)}")` });
  });
});

describe("GET /search?q=", () => {
  it("says what a height, a transaction, block or stream id, a stream key, an address or a dev account's name is", async () => {
    const block5 = String((await get(n.url, "/block/5")).body["block_hash"]);
    const cases: Array<[string, string, string]> = [
      ["7", "block", "7"],
      [createTx, "tx", createTx],
      [block5, "block", "5"],
      [streamId, "stream", streamId],
      [STREAM_KEY, "stream", streamId],
      ["dev1", "provider", PROVIDER],
      [PROVIDER.toUpperCase().replace("0X", "0x"), "provider", PROVIDER],
      ["dev0", "account", OWNER],
      [` ${OWNER} `, "account", OWNER],
    ];
    for (const [q, kind, id] of cases) {
      const r = await get(n.url, `/search?q=${encodeURIComponent(q)}`);
      expect([r.status, r.body["kind"], r.body["id"]], q).toEqual([200, kind, id]);
    }
  });

  it("a transaction still queued, or dropped from its block, is found by its hash too", async () => {
    // cycle_price 1: 0x33…33 holds nothing, so its RegisterProvider is dropped at mining.
    const m = await startNode({ kind: "genesis", source: readFixture("fixtures/corpus/fee-insufficient-balance.json").genesis.source });
    try {
      const queued = toHex(txHash(transferTx(7n, address(0x11), 0n, address(0x22), 5n)));
      const dropped = toHex(txHash(cbqsTx(7n, address(0x33), 0n, ix.registerProvider())));
      expect((await post(m.url, "/tx", toHex(cbqsTx(7n, address(0x33), 0n, ix.registerProvider())))).status).toBe(200);
      await post(m.url, "/mine", "");
      expect((await get(m.url, `/tx/${dropped}`)).body["status"]).toBe("dropped");
      expect((await post(m.url, "/tx", toHex(transferTx(7n, address(0x11), 0n, address(0x22), 5n)))).status).toBe(200);
      for (const hash of [queued, dropped]) {
        const r = await get(m.url, `/search?q=${hash}`);
        expect([r.status, r.body["kind"], r.body["id"], r.body["height"]], hash).toEqual([200, "tx", hash, "1"]);
      }
    } finally {
      await m.close();
    }
  });

  it("404 not_found when nothing has it; 400 for text that names nothing, or none (absent or blank)", async () => {
    const missingQ = "search needs ?q=<a block height, a 0x hash or id, an address or a dev account name>";
    const invalidQ = "q must be a block height, a 0x 32-byte hash or id, a 0x 20-byte address, a dev account name or a stream key (owner:0x<addr>/nonce:<n>)";
    for (const [q, status, code, message] of [
      ["99", 404, "not_found", "no block at height 99"],
      [`0x${"cd".repeat(32)}`, 404, "not_found", `no transaction, block or stream (at height 10) has id 0x${"cd".repeat(32)}`],
      [`owner:${OWNER}/nonce:7`, 404, "not_found", `no stream owner:${OWNER}/nonce:7 at height 10`],
      [" hello ", 400, "invalid_q", `${invalidQ} (got "hello")`],
      [" ", 400, "missing_q", missingQ],
    ] as const) {
      const r = await get(n.url, `/search?q=${encodeURIComponent(q)}`);
      expect([r.status, r.body["error"]], q).toEqual([status, { code, message }]);
    }
    expect((await get(n.url, "/search")).body["error"]).toEqual({ code: "missing_q", message: missingQ });
  });
});

describe("the page's files", () => {
  it("/ is the page, with a Content-Security-Policy allowing the node's own files only; every module, the style sheet and uPlot are served; nothing else under /explorer/", async () => {
    requireFreshDist();
    const page = await fetch(`${n.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-security-policy")).toMatch(/^default-src 'self';/);
    const html = await page.text();
    expect(html).toContain('<script type="module" src="/explorer/main.js"></script>');
    for (const file of [...EXPLORER_MODULES.map((m) => `${m}.js`), "style.css", "uPlot.iife.min.js", "uPlot.min.css"]) {
      const r = await fetch(`${n.url}/explorer/${file}`);
      expect(r.status, file).toBe(200);
      expect(r.headers.get("content-type"), file).toMatch(file.endsWith(".js") ? /^text\/javascript/ : /^text\/css/);
    }
    for (const path of ["/explorer/", "/explorer/../package.json", "/explorer/main.ts", "/explorer/uPlot.cjs.js"]) expect((await fetch(n.url + path)).status, path).toBe(404);
  });

  it("an unchanged file is 304 to a conditional request; HEAD has the headers only", async () => {
    requireFreshDist();
    const first = await fetch(`${n.url}/explorer/main.js`);
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect((await fetch(`${n.url}/explorer/main.js`, { headers: { "if-none-match": etag } })).status).toBe(304);
    const head = await fetch(`${n.url}/`, { method: "HEAD" });
    expect([head.status, await head.text()]).toEqual([200, ""]);
  });

  it("discovery lists the explorer's reads", async () => {
    expect((await get(n.url, "/.well-known/cbqs")).body["endpoints"]).toMatchObject({
      "cbqs.block": "/block/{height_or_hash}",
      "cbqs.stream.history": "/cbqs/stream/{stream_id}/history{?from,to,points}",
      "cbqs.stream.events": "/cbqs/stream/{stream_id}/events{?until,limit}",
      "cbqs.latest": "/latest{?limit}",
      "cbqs.devnet.names": "/devnet/names",
      "cbqs.search": "/search{?q}",
      "cbqs.subscribe": "/subscribe{?stream}",
    });
  });
});
