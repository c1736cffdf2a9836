// GET /fixture on `cbqs node`: the node's chain as the cbqs-fixture/v1 that
// `cbqs export --db` writes of the same store, byte for byte, for every range and post_state;
// refusals before any byte; streamed one at a time while the node keeps serving and producing
// blocks, ending at the head it was asked at; cut on shutdown; refused (410) for a node started
// from a snapshot; a follower's store exports to what the node serves. Real sockets on
// 127.0.0.1:0, real LMDB stores in a temporary directory; every node started is closed.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { get as httpGet, type IncomingMessage } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readFixture } from "../../src/harness/documents.js";
import { CbqsNode } from "../../src/chain-node/chain-node.js";
import { ExportMismatch, ExportRefused, exportedText, exportSteps, planExport, type ExportPlan, type ExportRequest } from "../../src/chain-node/fixture-export.js";
import { openChainDb } from "../../src/store-tools/store.js";
import { finish } from "../../src/steps.js";
import type { BlockQuery, BlockRecord, ChainDb, GenesisRecord } from "../../state/chain-db/chain-db.js";
import { MemoryChainDb } from "../../state/chain-db/memory.js";
import { cbqs } from "../cli/program.js";
import { address, get, post, startNode, toHex, transferTx, type TestNode } from "./helpers.js";

const FIXTURE = "fixtures/corpus/create-quote.json"; // genesis and blocks 1, 5, 6; 0x11…11's next nonce is 16
const CHAIN = 7n;
const root = mkdtempSync(join(tmpdir(), "cbqs-fixture-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const tmp = (name: string): string => join(root, `${name}-${dirs++}`);

/** GET `path` as text, with its status and headers. */
async function getText(base: string, path: string, method = "GET"): Promise<{ status: number; text: string; headers: Headers }> {
  const res = await fetch(base + path, { method });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

/** The refusal of `path`: status, code and message. */
async function refusal(base: string, path: string): Promise<[number, string, string]> {
  const r = await get(base, path);
  const e = r.body["error"] as { code: string; message: string };
  return [r.status, e.code, e.message];
}

/** Blocks through `to` mined on `n` directly (no HTTP round trip per block). */
function mineTo(n: TestNode, to: bigint): void {
  while (n.node.head().height < to) n.node.mine();
}

/** The query of GET /fixture and the same request as `cbqs export` options. */
const RANGES: ReadonlyArray<[string, string[]]> = [
  ["", []],
  ["?since=7", ["--from", "7"]],
  ["?since=0&until=6", ["--from", "0", "--to", "6"]],
  ["?until=5&post_state=final", ["--to", "5", "--post-state", "final"]],
  ["?post_state=none", ["--post-state", "none"]],
  ["?since=5&until=7", ["--from", "5", "--to", "7"]],
  ["?until=0", ["--to", "0"]],
];

describe("GET /fixture is cbqs export of the node's store", () => {
  it("a node on an LMDB store (a fixture's chain, then devnet blocks with a transfer and a skipped height): GET /fixture is byte for byte what cbqs export --db writes of that store, for every range and post_state; its replay passes", async () => {
    const dir = tmp("store");
    const n = await startNode(FIXTURE, { db: openChainDb(dir, { snapshotInterval: 0n }) });
    const served = new Map<string, string>();
    try {
      expect((await post(n.url, "/tx", toHex(transferTx(CHAIN, address(0x11), 16n, address(0x22), 5n)))).status).toBe(200);
      expect((await post(n.url, "/mine", "")).body).toMatchObject({ height: "7", receipts: [{ status: "ok" }] });
      expect((await post(n.url, "/mine?height=9", "")).status).toBe(200);
      for (const [query] of RANGES) {
        const r = await getText(n.url, `/fixture${query}`);
        expect([r.status, r.headers.get("content-type"), r.headers.get("access-control-allow-origin")], query).toEqual([200, "application/json; charset=utf-8", null]);
        served.set(query, r.text);
      }
      expect(n.logs.filter((e) => e["msg"] === "fixture written")).toHaveLength(RANGES.length);
    } finally {
      await n.close();
    }
    for (const [query, args] of RANGES) {
      const r = await cbqs("export", "--db", dir, "--quiet", ...args);
      expect([r.exitCode, r.out === served.get(query)], query).toEqual([0, true]);
    }
    const whole = JSON.parse(served.get("")!) as { blocks: Array<{ height: string; post_state?: unknown }> };
    expect(whole.blocks.map((b) => [b.height, b.post_state !== undefined])).toEqual([
      ["1", true],
      ["5", true],
      ["6", true],
      ["7", true],
      ["9", true],
    ]);
    const file = join(root, "node-export.json");
    writeFileSync(file, served.get("")!);
    const replayed = await cbqs("replay", file, "--quiet");
    expect([replayed.exitCode, replayed.out]).toEqual([0, expect.stringMatching(/^replay: 1 fixture: 1 ok, 0 mismatches, 0 unusable; 5 blocks, 19 txs in /)]);
  });

  it("bad parameters are 400 with the code of the parameter, the chain's refusals name the block they were decided at; HEAD is the GET's status and headers without running it", async () => {
    const n = await startNode(FIXTURE);
    try {
      const bad = "decimal digits without sign or leading zeros";
      expect(await refusal(n.url, "/fixture?since=5&until=1")).toEqual([400, "invalid_range", "since 5 is above until 1"]);
      expect(await refusal(n.url, "/fixture?until=7")).toEqual([400, "invalid_range", "until 7 is above the chain's head, block 6"]);
      expect(await refusal(n.url, "/fixture?since=7")).toEqual([400, "invalid_range", "since 7 is above the chain's head, block 6"]);
      expect(await refusal(n.url, "/fixture?since=1&post_state=none")).toEqual([400, "invalid_range", "since chooses the first block that carries a post_state: it needs post_state every (got none, which writes none)"]);
      expect(await refusal(n.url, "/fixture?until=x")).toEqual([400, "invalid_until", `until must be a block height: ${bad} (got "x")`]);
      expect(await refusal(n.url, "/fixture?since=-1")).toEqual([400, "invalid_since", `since must be a block height: ${bad} (got "-1")`]);
      expect(await refusal(n.url, "/fixture?since=01")).toEqual([400, "invalid_since", `since must be a block height: ${bad} (got "01")`]);
      expect(await refusal(n.url, "/fixture?until=1.5")).toEqual([400, "invalid_until", `until must be a block height: ${bad} (got "1.5")`]);
      expect(await refusal(n.url, "/fixture?until=18446744073709551616")).toEqual([400, "invalid_until", "until must be a block height of at most 18446744073709551615 (got 18446744073709551616)"]);
      expect(await refusal(n.url, "/fixture?post_state=every%20")).toEqual([400, "invalid_post_state", 'post_state must be every, final or none (got "every ")']);
      expect((await refusal(n.url, "/fixture?limit=1"))[1]).toBe("unknown_parameter");
      expect((await refusal(n.url, "/fixture?until=1&until=2"))[1]).toBe("duplicate_parameter");
      expect((await get(n.url, "/fixture?until=7")).body).toMatchObject({ height: "6", block_hash: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
      const postRefused = await getText(n.url, "/fixture", "POST");
      expect([postRefused.status, postRefused.headers.get("allow")]).toEqual([405, "GET, HEAD, OPTIONS"]);
      const head = await getText(n.url, "/fixture", "HEAD");
      expect([head.status, head.text, head.headers.get("content-type")]).toEqual([200, "", "application/json; charset=utf-8"]);
      expect([(await getText(n.url, "/fixture?until=9", "HEAD")).status]).toEqual([400]);
      expect(n.logs.filter((e) => e["msg"] === "fixture written")).toEqual([]);
    } finally {
      await n.close();
    }
  });
});

/** A GET whose body is not read until `resume`: the node's socket fills and its streamed answer waits. */
function pausedGet(url: string): Promise<{ res: IncomingMessage; body: () => Promise<{ text: string; complete: boolean }> }> {
  return new Promise((resolve, reject) => {
    const req = httpGet(url, (res) => {
      res.pause();
      resolve({
        res,
        body: () =>
          new Promise((done) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            const end = () => done({ text: Buffer.concat(chunks).toString("utf8"), complete: res.complete });
            res.on("end", end);
            res.on("error", end);
            res.on("aborted", end);
            res.resume();
          }),
      });
    });
    req.on("error", reject);
  });
}

describe("a streamed fixture, one at a time", () => {
  it("while one client reads a long fixture slowly the node refuses a second (503 fixture_in_progress, Retry-After) but answers every other request and mines; the first ends at the head it was asked at; a shutdown cuts a streamed answer at once", async () => {
    const n = await startNode(FIXTURE);
    try {
      // Some 1,500 blocks of about 10 KB of post_state each: far more than loopback socket buffers hold.
      mineTo(n, 1_500n);
      const first = await pausedGet(`${n.url}/fixture`);
      expect(first.res.statusCode).toBe(200);
      const busy = await get(n.url, "/fixture?post_state=none");
      expect([busy.status, busy.body["error"], busy.headers.get("retry-after")]).toEqual([
        503,
        { code: "fixture_in_progress", message: "the node writes one fixture at a time and is writing one now; try again when it is done" },
        "5",
      ]);
      expect((await get(n.url, "/genesis")).status).toBe(200);
      expect((await post(n.url, "/mine", "")).body).toMatchObject({ height: "1501" });
      const { text, complete } = await first.body();
      expect(complete).toBe(true);
      const doc = JSON.parse(text) as { blocks: Array<{ height: string }> };
      expect(doc.blocks.at(-1)!.height).toBe("1500");
      // The same range asked again now (the head is 1501) gives the same bytes.
      expect((await getText(n.url, "/fixture?until=1500")).text === text).toBe(true);
      expect((await getText(n.url, "/fixture?post_state=none")).status).toBe(200);

      const cut = await pausedGet(`${n.url}/fixture`);
      const started = performance.now();
      await n.close();
      expect(performance.now() - started).toBeLessThan(1_500); // not the 2 s grace for lingering connections
      const partial = await cut.body();
      expect(partial.complete).toBe(false);
      expect(() => JSON.parse(partial.text)).toThrow();
    } finally {
      await n.close();
    }
    expect(n.logs.filter((e) => e["level"] === "error")).toEqual([]);
  }, 120_000);
});

describe("other stores", () => {
  it("a node started from a snapshot (history_start above genesis) answers 410 history_not_held naming it, as cbqs export refuses its store, and so do pinned reads below it (CIP-4 §8.1); a stream's history starts at it by default", async () => {
    const source = tmp("source");
    const snap = join(root, "h6.cbqs");
    const dir = tmp("snapshot-store");
    expect((await cbqs("replay", FIXTURE, "--db", source, "--quiet")).exitCode).toBe(0);
    expect((await cbqs("snapshot", "export", "--db", source, "-o", snap)).exitCode).toBe(0);
    expect((await cbqs("snapshot", "import", snap, "--db", dir)).exitCode).toBe(0);
    const n = await startNode({ kind: "store" }, { db: openChainDb(dir, { snapshotInterval: 0n }) });
    try {
      expect((await get(n.url, "/genesis")).body["history_start"]).toMatchObject({ height: "6" });
      const [status, code, message] = await refusal(n.url, "/fixture");
      expect([status, code]).toEqual([410, "history_not_held"]);
      expect(message).toMatch(/^the store's history starts at block 6 \(history_start: .*\) and holds no block between genesis and it; a cbqs-fixture\/v1 is replayed from genesis/);
      // A read pinned between genesis and the snapshot's block: the node cannot know the last block
      // at or below it (not genesis), and says so; genesis itself is held but not its state.
      const account = "/account/0x0101010101010101010101010101010101010101";
      for (const h of [1, 5]) {
        expect(await refusal(n.url, `${account}?height=${h}`)).toEqual([
          410,
          "history_not_held",
          `the node holds no block between genesis and block 6 (its history starts at a snapshot of that block): the state at height ${h} is not held`,
        ]);
      }
      expect((await refusal(n.url, `${account}?height=0`)).slice(0, 2)).toEqual([410, "block_not_retained"]);
      expect((await get(n.url, `${account}?height=6`)).status).toBe(200);
      // The explorer's stream history starts by default at the first block held, not below it.
      expect((await get(n.url, `/cbqs/stream/0x${"ab".repeat(32)}/history`)).body).toMatchObject({ from: "6", to: "6", points: [{ height: "6", status: null }] });
    } finally {
      await n.close();
    }
    expect(await cbqs("export", "--db", dir)).toMatchObject({ exitCode: 2, out: "" });
  });

  it("a devnet followed into a store with cbqs follow --db: cbqs export of the follower's store is the node's GET /fixture", async () => {
    const genesis = readFixture("fixtures/corpus/transfers.json").genesis.source;
    const n = await startNode({ kind: "genesis", source: genesis });
    const follower = tmp("follower");
    let served: string;
    try {
      for (let i = 0; i < 3; i++) {
        await post(n.url, "/tx", toHex(transferTx(CHAIN, address(0x11), BigInt(i), address(0x22), 1n)));
        await post(n.url, "/mine", "");
      }
      await post(n.url, "/mine?height=10", "");
      const followed = await cbqs("follow", n.url, "--db", follower, "--quiet");
      expect(followed.exitCode, followed.err).toBe(0);
      served = (await getText(n.url, "/fixture?since=3")).text;
    } finally {
      await n.close();
    }
    const r = await cbqs("export", "--db", follower, "--from", "3", "--quiet");
    expect([r.exitCode, r.out === served]).toEqual([0, true]);
    expect((JSON.parse(r.out) as { blocks: Array<{ height: string }> }).blocks.map((b) => b.height)).toEqual(["1", "2", "3", "10"]);
  });
});

describe("the store is re-executed, not trusted: what it recorded against what executing it gives", () => {
  const REQUEST: ExportRequest = { postState: "every", names: { from: "since", to: "until", postState: "post_state" } };
  const db = new MemoryChainDb(128);
  CbqsNode.open(db, { kind: "fixture", fixture: readFixture(FIXTURE) });
  afterAll(() => db.close());

  /** `db` as a store whose genesis record or block records were altered by `edit`. */
  function altered(edit: { genesis?: (g: GenesisRecord) => GenesisRecord; block?: (b: BlockRecord) => BlockRecord }): ChainDb {
    return Object.assign(Object.create(db) as ChainDb, {
      genesis: () => (edit.genesis ?? ((g: GenesisRecord) => g))(db.genesis()!),
      blocks: (q: BlockQuery) => db.blocks(q).map(edit.block ?? ((b) => b)),
    });
  }
  /** The ExportMismatch that planning, then writing, the export of `store` throws. */
  function mismatch(store: ChainDb): ExportMismatch {
    try {
      finish(exportSteps(store, planExport(store, REQUEST), { write: () => {} }));
    } catch (err) {
      if (err instanceof ExportMismatch) return err;
      throw err;
    }
    throw new Error("no mismatch");
  }
  const flipped = (bytes: Uint8Array): Uint8Array => bytes.map((b, i) => (i === bytes.length - 1 ? b ^ 1 : b));

  it("the unaltered store exports, reporting its progress after each block written (blocks and txs so far, the height, the last height)", () => {
    const parts: string[] = [];
    const progress: unknown[] = [];
    expect(finish(exportSteps(db, planExport(db, REQUEST), { write: (t) => parts.push(t) }, (p) => progress.push(p)))).toEqual({ blocks: 3, txs: 18, postStates: 3 });
    expect(JSON.parse(parts.join(""))).toMatchObject({ blocks: [{ height: "1" }, { height: "5" }, { height: "6" }] });
    const txs = [1n, 5n, 6n].map((h) => db.blockByHeight(h)!.transactions.length);
    expect(progress).toEqual([
      { blocks: 1, txs: txs[0], height: 1n, last: 6n },
      { blocks: 2, txs: txs[0]! + txs[1]!, height: 5n, last: 6n },
      { blocks: 3, txs: 18, height: 6n, last: 6n },
    ]);
  });

  it("a stored genesis source that is no genesis, one the engine refuses, or a genesis state_root that is not what it gives, is a mismatch of genesis", () => {
    const g = db.genesis()!;
    const withSource = (source: Uint8Array) => altered({ genesis: (x) => ({ ...x, source }) });
    const cases: Array<[ChainDb, string]> = [
      [withSource(new TextEncoder().encode("{")), "genesis: the stored genesis source is not a valid genesis: genesis source: $: not valid JSON: unexpected end of input"],
      [withSource(new TextEncoder().encode(JSON.stringify({ ...JSON.parse(new TextDecoder().decode(g.source)), accounts: { [toHex(address(0x44))]: { balance: "18446744073709551615" }, [toHex(address(0x45))]: { balance: "1" } } }))), "genesis: invalid genesis: accounts: total balance exceeds u64"],
      [
        altered({ genesis: (x) => ({ ...x, block: { ...x.block, state_root: flipped(g.block.state_root) } }) }),
        `genesis: genesis state_root: stored ${toHex(flipped(g.block.state_root))}, re-executed from genesis ${toHex(g.block.state_root)}`,
      ],
    ];
    for (const [store, message] of cases) {
      const m = mismatch(store);
      expect([m.height, m.message]).toEqual([0n, message]);
    }
  });

  it("a block whose hash is not what executing it gives, or holding a transaction that does not decode, is a mismatch of that block", () => {
    const block5 = db.blockByHeight(5n)!;
    const hash = mismatch(altered({ block: (b) => (b.height === 5n ? { ...b, block_hash: flipped(b.block_hash) } : b) }));
    expect([hash.height, hash.message]).toEqual([5n, `block 5: block_hash: stored ${toHex(flipped(block5.block_hash))}, re-executed from genesis ${toHex(block5.block_hash)}`]);
    const tx = mismatch(altered({ block: (b) => (b.height === 5n ? { ...b, transactions: [new Uint8Array([0xff]), ...b.transactions.slice(1)] } : b) }));
    expect([tx.height, tx.message]).toEqual([5n, "block 5: transactions[0]: invalid transaction envelope: Unsupported at offset 0: envelope: expected CBOR major type 5, got 7"]);
  });
});

describe("the export's words and error names", () => {
  it("one block and one transaction are said in the singular; several in the plural; genesis alone is named so", () => {
    const through = (height: bigint) => ({ last: { height } }) as unknown as ExportPlan;
    expect(exportedText({ blocks: 1, txs: 1, postStates: 1 }, through(4n))).toBe("1 block (genesis through height 4; 1 tx), post_state on 1 block");
    expect(exportedText({ blocks: 2, txs: 3, postStates: 0 }, through(4n))).toBe("2 blocks (genesis through height 4; 3 txs), post_state on 0 blocks");
    expect(exportedText({ blocks: 0, txs: 0, postStates: 0 }, { last: undefined } as unknown as ExportPlan)).toBe("0 blocks (genesis only; 0 txs), post_state on 0 blocks");
  });

  it("its errors carry their names (the CLI's one-line errors and the node's logs show them)", () => {
    expect(new ExportRefused("range", "m").name).toBe("ExportRefused");
    expect(new ExportMismatch(1n, "m").name).toBe("ExportMismatch");
  });
});
