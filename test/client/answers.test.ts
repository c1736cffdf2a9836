// The readers of the node's answers (src/client/answers.ts): a real node's answers read as they
// are, then each member altered — not an object, not hex, not a decimal, out of order — refused
// as a MalformedAnswer whose problem names the JSON path (and, for a feed item, the block it
// claims to be), so that a caller can tell what was wrong without the answer at hand.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { brokerStateAnswer, feedPageAnswer, genesisAnswer, member, minedAnswer, reading, sentAnswer } from "../../src/client/answers.js";
import { MalformedAnswer } from "../../src/client/index.js";
import { readFixture } from "../../src/harness/documents.js";
import { JsonError } from "../../src/json/parse.js";
import { address, post, startNode, toHex, transferTx, type TestNode } from "../node/helpers.js";

const U = "http://node.test/x";
type Obj = Record<string, unknown>;
const copy = <T>(o: T): T => JSON.parse(JSON.stringify(o)) as T;

/** The problem of the MalformedAnswer `f` throws. */
function problem(f: () => unknown): string {
  try {
    f();
  } catch (err) {
    expect(err, String(err)).toBeInstanceOf(MalformedAnswer);
    expect((err as MalformedAnswer).url).toBe(U);
    return (err as MalformedAnswer).problem;
  }
  throw new Error("expected a MalformedAnswer, got a value");
}

/** `body` with `edit` applied to a copy. */
const edited = (body: Obj, edit: (b: Obj) => void): Obj => {
  const b = copy(body);
  edit(b);
  return b;
};

let pair: TestNode;
let devnet: TestNode;
const bodies: Record<string, Obj> = {};
beforeAll(async () => {
  pair = await startNode("fixtures/corpus/encrypted-pair-lifecycle.json");
  devnet = await startNode({ kind: "genesis", source: readFixture("fixtures/corpus/transfers.json").genesis.source });
  const get = async (n: TestNode, path: string) => (await (await fetch(n.url + path)).json()) as Obj;
  bodies["genesis"] = await get(pair, "/genesis");
  bodies["page"] = await get(pair, "/replication?since=1&limit=3");
  bodies["main"] = await get(pair, "/cbqs/broker-state?stream=owner:0x1111111111111111111111111111111111111111%2Fnonce:1");
  // A rejected transfer (more than the sender holds) and an accepted one, mined together.
  await post(devnet.url, "/tx", toHex(transferTx(7n, address(0x11), 0n, address(0x22), 2n ** 63n)));
  bodies["sent"] = (await post(devnet.url, "/tx", toHex(transferTx(7n, address(0x11), 1n, address(0x22), 1n)))).body;
  bodies["mined"] = (await post(devnet.url, "/mine", "")).body;
});
afterAll(async () => {
  await pair.close();
  await devnet.close();
});

describe("reading the node's answers", () => {
  it("reading() turns a JSON reader's complaint into a MalformedAnswer with its prefix, and lets its own and any other error through as they are", () => {
    expect(problem(() => reading(U, () => { throw new JsonError("$.a", "expected a string"); }, "block 5: "))).toBe("block 5: $.a: expected a string");
    const own = new MalformedAnswer(U, "already said");
    let caught: unknown;
    try {
      reading(U, () => { throw own; }, "block 5: ");
    } catch (err) {
      caught = err;
    }
    expect(caught).toBe(own);
    expect(() => reading(U, () => { throw new TypeError("a bug"); })).toThrow(TypeError);
    expect(reading(U, () => 7)).toBe(7);
  });

  it("member() is a JSON object member: anything else is refused at its path, $ unless given", () => {
    for (const v of [null, [], "x", 5, undefined]) {
      expect(() => member({ m: v }, "m")).toThrow(new JsonError("$.m", "expected a JSON object"));
      expect(() => member({ m: v }, "m", "$.a")).toThrow(new JsonError("$.a.m", "expected a JSON object"));
    }
    expect(member({ m: { k: 1 } }, "m")).toEqual({ k: 1 });
  });

  it("GET /genesis: each member refused at its own path", () => {
    const g = bodies["genesis"]!;
    expect(genesisAnswer(U, g).historyStart.height).toBe(0n);
    const cases: Array<[(b: Obj) => void, RegExp]> = [
      [(b) => (b["history_start"] = []), /^\$\.history_start: expected a JSON object$/],
      [(b) => (b["height"] = "x"), /^\$\.height: /],
      [(b) => (b["block_hash"] = "0x12"), /^\$\.block_hash: /],
      [(b) => (b["state_root"] = 1), /^\$\.state_root: /],
      [(b) => (b["chain_id"] = "-1"), /^\$\.chain_id: /],
      [(b) => (b["chain_instance_id"] = "0x"), /^\$\.chain_instance_id: /],
      [(b) => (b["timestamp"] = null), /^\$\.timestamp: /],
      [(b) => (b["source"] = "nothex"), /^\$\.source: /],
      [(b) => (b["view"] = { height: "0" }), /^\$\.view/],
      [(b) => ((b["history_start"] as Obj)["height"] = "x"), /^\$\.history_start\.height: /],
      [(b) => ((b["history_start"] as Obj)["block_hash"] = "0x1"), /^\$\.history_start\.block_hash: /],
    ];
    for (const [edit, want] of cases) expect(problem(() => genesisAnswer(U, edited(g, edit)))).toMatch(want);
  });

  describe("GET /replication", () => {
    const page = () => copy(bodies["page"]!);
    const items = (b: Obj) => b["items"] as Obj[];

    it("reads the page, its items and cursors", () => {
      const p = feedPageAnswer(U, page(), "asc");
      expect(p.items.map((b) => b.height)).toEqual([1n, 2n, 3n]);
      expect(p).toMatchObject({ url: U, prev: null, next: 4n });
      expect(toHex(p.items[1]!.parentHash)).toBe(toHex(p.items[0]!.blockHash));
    });

    it("items: an array of at most 100", () => {
      const want = '"items" is not an array of at most 100 blocks';
      expect(problem(() => feedPageAnswer(U, { ...page(), items: {} }, "asc"))).toBe(want);
      const many = Array.from({ length: 101 }, () => items(page())[0]);
      expect(problem(() => feedPageAnswer(U, { ...page(), items: many }, "asc"))).toBe(want);
      expect(problem(() => feedPageAnswer(U, { ...page(), items: many.slice(0, 100) }, "asc"))).toMatch(/heights must strictly increase/);
    });

    it("an item's problem is prefixed with the block it claims to be, or its place when its height is no decimal", () => {
      const at = (h: unknown, j = 0) => {
        const b = page();
        items(b)[j]!["height"] = h;
        items(b)[j]!["tx_root"] = "0x12";
        return problem(() => feedPageAnswer(U, b, "asc"));
      };
      expect(at("7")).toBe("block 7: $.items[0].tx_root: expected 32 bytes, got 1");
      expect(at("12345678901234567890")).toMatch(/^block 12345678901234567890: /);
      for (const h of ["", "x7", "7x", "123456789012345678901", 7, null]) expect(at(h)).toMatch(/^the page's first block: \$\.items\[0\]\.height: /);
      expect(at("x", 1)).toMatch(/^the block after block 1: \$\.items\[1\]\.height: /);
      const third = page();
      items(third)[1]!["height"] = "y";
      items(third)[2]!["tx_root"] = 5;
      items(third)[2]!["height"] = "z";
      expect(problem(() => feedPageAnswer(U, third, "asc"))).toMatch(/^the block after block 1: \$\.items\[1\]\.height: /);
      items(third)[1]!["height"] = "2";
      expect(problem(() => feedPageAnswer(U, third, "asc"))).toMatch(/^the block after block 2: \$\.items\[2\]\.height: /);
      const unclaimed = page();
      for (const item of items(unclaimed)) item["height"] = "q";
      expect(problem(() => feedPageAnswer(U, { ...unclaimed, items: items(unclaimed).slice(0, 3) }, "asc"))).toMatch(/^the page's first block: /);
    });

    it("an item that is not an object, or whose parent_hash is not 32 bytes", () => {
      for (const v of [null, [], "block"]) expect(problem(() => feedPageAnswer(U, { ...page(), items: [v] }, "asc"))).toBe("the page's first block: $.items[0]: not an object");
      const b = page();
      items(b)[1]!["parent_hash"] = "0x00";
      expect(problem(() => feedPageAnswer(U, b, "asc"))).toMatch(/^block 2: \$\.items\[1\]\.parent_hash: /);
    });

    it("heights must strictly increase on an ascending page and strictly decrease on a descending one", () => {
      const b = page();
      items(b)[2] = items(b)[1]!;
      expect(problem(() => feedPageAnswer(U, b, "asc"))).toBe("block 2: $.items[2].height: heights must strictly increase (previous 2)");
      const down = page();
      items(down).reverse();
      expect(feedPageAnswer(U, down, "desc").items.map((x) => x.height)).toEqual([3n, 2n, 1n]);
      expect(problem(() => feedPageAnswer(U, down, "asc"))).toBe("block 2: $.items[1].height: heights must strictly increase (previous 3)");
      expect(problem(() => feedPageAnswer(U, page(), "desc"))).toBe("block 2: $.items[1].height: heights must strictly decrease (previous 1)");
      const same = page();
      items(same)[1] = items(same)[0]!;
      expect(problem(() => feedPageAnswer(U, { ...same, items: items(same).slice(0, 2) }, "desc"))).toBe("block 1: $.items[1].height: heights must strictly decrease (previous 1)");
    });

    it("the cursors: a decimal height or null", () => {
      expect(problem(() => feedPageAnswer(U, { ...page(), prev: "x" }, "asc"))).toMatch(/^\$\.prev: /);
      expect(problem(() => feedPageAnswer(U, { ...page(), next: 1 }, "asc"))).toMatch(/^\$\.next: /);
      expect(feedPageAnswer(U, { ...page(), prev: "0", next: null }, "asc")).toMatchObject({ prev: 0n, next: null });
    });
  });

  it("GET /cbqs/broker-state: the linked stream when there is one, no key when there is none; each member refused at its path", () => {
    const main = bodies["main"]!;
    const read = brokerStateAnswer(U, main);
    expect(main["key_stream"]).toBeDefined();
    expect("keyStream" in read).toBe(true);
    expect("mainStream" in read).toBe(false);
    const alone = edited(main, (b) => delete b["key_stream"]);
    expect("keyStream" in brokerStateAnswer(U, alone)).toBe(false);
    const asKey = edited(main, (b) => {
      b["main_stream"] = b["stream"];
      delete b["key_stream"];
    });
    expect(brokerStateAnswer(U, asKey).mainStream).toEqual(read.stream);
    expect(brokerStateAnswer(U, edited(main, (b) => (b["provider"] = null))).provider).toBeNull();
    const name = Object.keys(main["bounds"] as Obj)[0]!;
    const cases: Array<[(b: Obj) => void, string | RegExp]> = [
      [(b) => (b["schedule"] = null), "$.schedule: expected a JSON object"],
      [(b) => (b["bounds"] = []), "$.bounds: expected a JSON object"],
      [(b) => ((b["bounds"] as Obj)[name] = "x"), `$.bounds[${JSON.stringify(name)}]: `],
      [(b) => (b["key_stream"] = {}), /^\$\.key_stream/],
      [(b) => (b["main_stream"] = 5), /^\$\.main_stream/],
      [(b) => (b["view"] = {}), /^\$\.view/],
      [(b) => (b["stream"] = {}), /^\$\.stream/],
      [(b) => (b["provider"] = {}), /^\$\.provider/],
      [(b) => ((b["schedule"] as Obj)["active"] = {}), /^\$\.schedule\.active/],
      [(b) => ((b["schedule"] as Obj)["schedule_digest"] = "0x1"), /^\$\.schedule\.schedule_digest: /],
      [(b) => (b["effective_rent_height"] = "-"), /^\$\.effective_rent_height: /],
      [(b) => (b["height"] = "h"), /^\$\.height: /],
    ];
    for (const [edit, want] of cases) {
      const p = problem(() => brokerStateAnswer(U, edited(main, edit)));
      if (typeof want === "string") expect(p.startsWith(want), p).toBe(true);
      else expect(p).toMatch(want);
    }
  });

  it("POST /tx: each member refused at its path", () => {
    const sent = bodies["sent"]!;
    expect(sentAnswer(U, sent)).toMatchObject({ nonce: 1n, pending: 2, height: 0n });
    expect(problem(() => sentAnswer(U, { ...sent, pending: "2" }))).toMatch(/^\$\.pending: /);
    expect(problem(() => sentAnswer(U, { ...sent, tx_hash: "0x" }))).toMatch(/^\$\.tx_hash: /);
    expect(problem(() => sentAnswer(U, { ...sent, nonce: "one" }))).toMatch(/^\$\.nonce: /);
    expect(problem(() => sentAnswer(U, { ...sent, height: 1 }))).toMatch(/^\$\.height: /);
  });

  it("POST /mine: a rejection keeps the node's message, an accepted receipt has none; each member refused at its path", () => {
    const mined = bodies["mined"]!;
    const m = minedAnswer(U, { ...mined, dropped: [{ tx_hash: `0x${"ab".repeat(32)}`, reason: "nonce already used" }] });
    expect(m.receipts.map((r) => [r.status, r.error?.name ?? null, "message" in r])).toEqual([
      ["rejected", "InsufficientBalance", true],
      ["ok", null, false],
    ]);
    expect(m.receipts[0]!.message).toMatch(/^transfer: 0x1{40} holds \d+, needs 9223372036854775808$/);
    expect(m.dropped).toEqual([{ txHash: new Uint8Array(32).fill(0xab), reason: "nonce already used" }]);
    const rejected = (mined["receipts"] as Obj[])[0]!;
    const receipt = (edit: (r: Obj) => void) => problem(() => minedAnswer(U, { ...mined, receipts: [edited(rejected, edit)] }));
    expect(receipt((r) => (r["extra"] = 1))).toMatch(/^\$\.receipts\[0\]\.extra: unknown field/);
    expect(receipt((r) => ((r["error"] as Obj)["message"] = 7))).toMatch(/^\$\.receipts\[0\]\.error\.message: /);
    expect(receipt((r) => ((r["error"] as Obj)["other"] = "x"))).toMatch(/^\$\.receipts\[0\]\.error/);
    expect(minedAnswer(U, { ...mined, receipts: [edited(rejected, (r) => delete (r["error"] as Obj)["message"])] }).receipts[0]).not.toHaveProperty("message");
    expect(problem(() => minedAnswer(U, { ...mined, receipts: {} }))).toMatch(/^\$\.receipts: /);
    const dropped = (d: unknown) => problem(() => minedAnswer(U, { ...mined, dropped: d }));
    expect(dropped({})).toMatch(/^\$\.dropped: /);
    expect(dropped([{ tx_hash: `0x${"ab".repeat(32)}`, reason: "r", extra: 1 }])).toMatch(/^\$\.dropped\[0\]\.extra: unknown field/);
    expect(dropped([{ tx_hash: `0x${"ab".repeat(32)}` }])).toMatch(/^\$\.dropped\[0\]\.reason: /);
    expect(dropped([{ reason: "r" }])).toMatch(/^\$\.dropped\[0\]\.tx_hash: /);
    expect(dropped([{ tx_hash: "0xab", reason: "r" }])).toMatch(/^\$\.dropped\[0\]\.tx_hash: /);
    expect(dropped([{ tx_hash: `0x${"ab".repeat(32)}`, reason: 5 }])).toMatch(/^\$\.dropped\[0\]\.reason: /);
  });
});
