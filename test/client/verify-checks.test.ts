// Every check of the client's proof verifier (src/client/verify.ts), each reached alone: a real
// node's answer altered so that it fails that one check and passes every other — a verifier
// without the check would return it as verified — and refused with that check's own error.
// docs/engineering/testing.md "The client's checks, each reached alone" lists them; feed-checks.test.ts does
// the same for the feed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fromHex, toHex } from "../../src/bytes.js";
import { headerHash } from "../../src/chain/block.js";
import { txHash } from "../../src/chain/envelope.js";
import { committedReceipt } from "../../src/chain/receipts.js";
import { genesisAnswer } from "../../src/client/answers.js";
import { createClient, MalformedAnswer, ProofInvalid, type Block, type Client, type ReadPoint } from "../../src/client/index.js";
import { tieToHeader, verifyBlock, verifyGenesis, verifyMultiAnswer, verifyReceiptAnswer, verifyStateAnswer, verifyTxAnswer } from "../../src/client/verify.js";
import { readFixture } from "../../src/harness/documents.js";
import { accountKey } from "../../state/kv/keys.js";
import { blockRoots } from "../../state/roots/roots.js";
import { address, post, startNode, transferTx, type TestNode } from "../node/helpers.js";
import { flipHex, proxy } from "./helpers.js";

const FIXTURE = "fixtures/corpus/create-quote.json";
const fixture = readFixture(FIXTURE);
const CHAIN = fixture.genesis.chain_instance_id;
const ALICE = "0x1111111111111111111111111111111111111111";
const BOB = "0x2222222222222222222222222222222222222222";
const CAROL = "0x3333333333333333333333333333333333333333";
const key = (a: string) => accountKey(fromHex(a));
const URL_ = "http://node.test/answer";
type Obj = Record<string, unknown>;

/** A deep copy of a JSON answer, to alter. */
const copy = <T>(o: T): T => JSON.parse(JSON.stringify(o)) as T;

/** The error `f` throws (fails the test when it returns). */
function thrown(f: () => unknown): Error {
  try {
    f();
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected a refusal, got a value");
}

async function rejected(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected a refusal, got a value");
}

/** A ProofInvalid of `check` whose message says `reason` (a regular expression source). */
function expectRefusal(err: Error, check: string, reason: RegExp, fields: Partial<Record<"height" | "expected" | "actual", unknown>> = {}): void {
  expect(err, String(err)).toBeInstanceOf(ProofInvalid);
  expect((err as ProofInvalid).check).toBe(check);
  expect((err as ProofInvalid).reason).toMatch(reason);
  expect(err.message).toBe(`${(err as ProofInvalid).url}: ${(err as ProofInvalid).height === undefined ? "" : `block ${(err as ProofInvalid).height}: `}${check}: ${(err as ProofInvalid).reason}`);
  expect(err).toMatchObject(fields);
}

function expectMalformed(err: Error, problem: string | RegExp): void {
  expect(err, String(err)).toBeInstanceOf(MalformedAnswer);
  if (typeof problem === "string") expect((err as MalformedAnswer).problem).toBe(problem);
  else expect((err as MalformedAnswer).problem).toMatch(problem);
}

/** `block` with its roots and header hash recomputed from its envelopes and receipts, so that only what a test alters differs. */
function rehash(block: Block): Block {
  const roots = blockRoots(
    block.transactions.map(txHash),
    block.receipts.map((r) => committedReceipt({ tx_hash: r.txHash, status: r.status, error: r.error, events: r.events, cycles: r.cycles, cells: r.cells })),
  );
  return {
    ...block,
    txRoot: roots.tx_root,
    receiptRoot: roots.receipt_root,
    logsRoot: roots.logs_root,
    blockHash: headerHash(CHAIN, block.height, block.timestamp, block.parentHash, block.stateRoot, roots),
  };
}

let n: TestNode;
let client: Client;
const answers: Record<string, Obj> = {};
const blocks = new Map<bigint, Block>();
const B5 = fixture.blocks[1]!; // height 5: 14 transactions, one receipt with an event
const B1 = fixture.blocks[0]!;
const tx = (b: typeof B5, i: number) => toHex(b.receipts[i]!.tx_hash);

beforeAll(async () => {
  n = await startNode(FIXTURE);
  client = createClient(n.url);
  const get = async (path: string, init?: RequestInit) => (await (await fetch(n.url + path, init)).json()) as Obj;
  answers["genesis"] = await get("/genesis");
  answers["alice"] = await get(`/proof/account/${ALICE}`);
  answers["bob"] = await get(`/proof/account/${BOB}`);
  answers["multi"] = await get("/proof/multi", { method: "POST", body: JSON.stringify({ keys: [toHex(key(ALICE)), toHex(key(BOB))] }), headers: { "content-type": "application/json" } });
  for (const [name, b, i] of [["tx3", B5, 3], ["tx0", B5, 0], ["tx1of1", B1, 1]] as const) {
    answers[name] = await get(`/proof/tx/${tx(b, i)}`);
    answers[`receipt${name.slice(2)}`] = await get(`/proof/receipt/${tx(b, i)}`);
  }
  for (const b of fixture.blocks) blocks.set(b.height, await client.block(b.height));
});
afterAll(() => n.close());

/** The verified block at a height, as the client's inclusion answers look it up. */
const header = async (at: ReadPoint): Promise<Block> => blocks.get(at.height)!;

describe("each check of the client's proof verifier, reached alone", () => {
  it("the unaltered answers pass every check (each test below alters one thing)", async () => {
    const g = genesisAnswer(URL_, answers["genesis"]!);
    verifyGenesis(URL_, g);
    expect(verifyStateAnswer(URL_, answers["alice"]!, key(ALICE)).value).not.toBeNull();
    expect(verifyMultiAnswer(URL_, answers["multi"]!, [key(ALICE), key(BOB)]).entries).toHaveLength(2);
    expect((await verifyTxAnswer(URL_, answers["tx3"]!, fromHex(tx(B5, 3)), header)).txIndex).toBe(3);
    expect((await verifyReceiptAnswer(URL_, answers["receipt3"]!, fromHex(tx(B5, 3)), header)).txIndex).toBe(3);
    for (const b of blocks.values()) {
      verifyBlock(URL_, b, CHAIN);
      verifyBlock(URL_, rehash(b), CHAIN);
      tieToHeader(URL_, b, b);
    }
  });

  describe("the genesis and its view (verifyGenesis, checkView)", () => {
    const genesis = (edit: (g: Obj) => void) => {
      const body = copy(answers["genesis"]!);
      edit(body);
      return thrown(() => verifyGenesis(URL_, genesisAnswer(URL_, body)));
    };

    it("height: a genesis answer at another height (its view naming the same)", () => {
      const err = genesis((g) => {
        g["height"] = "1";
        (g["view"] as Obj)["height"] = "1";
      });
      expectRefusal(err, "height", /^the genesis block is at height 1, not 0$/, { height: 1n });
    });

    it("chain_instance_id: a source that is not the one the chain instance is the fingerprint of", () => {
      const err = genesis((g) => {
        g["source"] = flipHex(g["source"] as string);
      });
      expectRefusal(err, "chain_instance_id", /^the fingerprint of the genesis source: expected 0x[0-9a-f]{64}, got 0x[0-9a-f]{64}$/, { height: 0n, actual: toHex(CHAIN) });
    });

    it("block_hash: a timestamp that is not the one the genesis header was hashed with", () => {
      const err = genesis((g) => {
        g["timestamp"] = String(BigInt(g["timestamp"] as string) + 1n);
      });
      expectRefusal(err, "block_hash", /^the genesis header's hash: expected 0x[0-9a-f]{64}, got /, { height: 0n, actual: answers["genesis"]!["block_hash"] });
    });

    it("view.chain_instance_id, view.height, view.block_hash: a view naming another chain, height or block", () => {
      const chain = flipHex(toHex(CHAIN));
      expectRefusal(
        genesis((g) => {
          (g["view"] as Obj)["chain_instance_id"] = chain;
        }),
        "view.chain_instance_id",
        /^the view's chain instance: /,
        { height: 0n, expected: toHex(CHAIN), actual: chain },
      );
      expectRefusal(
        genesis((g) => {
          (g["view"] as Obj)["height"] = "2";
        }),
        "view.height",
        /^the view names height 2, the answer 0$/,
        { height: 0n },
      );
      const hash = flipHex(answers["genesis"]!["block_hash"] as string);
      expectRefusal(
        genesis((g) => {
          (g["view"] as Obj)["block_hash"] = hash;
        }),
        "view.block_hash",
        /^the view's block hash: /,
        { height: 0n, expected: answers["genesis"]!["block_hash"], actual: hash },
      );
    });
  });

  describe("a block (verifyBlock): its receipts, roots and hash recomputed", () => {
    const b5 = () => blocks.get(B5.height)!;
    const refused = (block: Block) => thrown(() => verifyBlock(URL_, block, CHAIN));

    it("receipts: fewer receipts than transactions, every root and the hash consistent with them", () => {
      const block = rehash({ ...b5(), receipts: b5().receipts.slice(0, -1) });
      expectRefusal(refused(block), "receipts", /^13 receipts for 14 transactions$/, { height: 5n });
    });

    it("receipts[i].tx_hash: a receipt naming another transaction, every root and the hash consistent with it", () => {
      const receipts = b5().receipts.map((r, i) => (i === 2 ? { ...r, txHash: b5().receipts[1]!.txHash } : r));
      const err = refused(rehash({ ...b5(), receipts }));
      expectRefusal(err, "receipts[2].tx_hash", /^the hash of transactions\[2\]: /, { height: 5n, expected: tx(B5, 2), actual: tx(B5, 1) });
    });

    it("receipts: a receipt with no canonical encoding (an accepted one carrying an error code)", () => {
      const receipts = b5().receipts.map((r, i) => (i === 12 ? { ...r, error: { code: 3, name: "X" } } : r));
      expectRefusal(refused({ ...b5(), receipts }), "receipts", /^the receipts have no canonical encoding \(ok receipt with an error code\)$/, { height: 5n });
    });

    it("tx_root, receipt_root, logs_root: a served root that is not the one recomputed (the header hash is over the recomputed ones)", () => {
      for (const [field, check, what] of [
        ["txRoot", "tx_root", "the root of the block's transactions"],
        ["receiptRoot", "receipt_root", "the root of the block's receipts"],
        ["logsRoot", "logs_root", "the root of the block's events"],
      ] as const) {
        const served = fromHex(flipHex(toHex(b5()[field])));
        const err = refused({ ...b5(), [field]: served });
        expectRefusal(err, check, new RegExp(`^${what}: expected 0x`), { height: 5n, expected: toHex(b5()[field]), actual: toHex(served) });
      }
    });

    it("block_hash: a header field the hash does not cover as served (its parent hash)", () => {
      const parent = fromHex(flipHex(toHex(b5().parentHash)));
      const err = refused({ ...b5(), parentHash: parent });
      expectRefusal(err, "block_hash", /^the block header's hash: expected 0x/, { height: 5n, actual: toHex(b5().blockHash) });
    });
  });

  describe("an answer tied to its header (tieToHeader)", () => {
    it("block_hash and state_root: an answer naming another block hash, or the header's block hash with another state root", () => {
      const h = blocks.get(B5.height)!;
      const hash = fromHex(flipHex(toHex(h.blockHash)));
      expectRefusal(
        thrown(() => tieToHeader(URL_, { ...h, blockHash: hash }, h)),
        "block_hash",
        /^the hash of the header at height 5: /,
        { height: 5n, expected: toHex(h.blockHash), actual: toHex(hash) },
      );
      const root = blocks.get(B1.height)!.stateRoot;
      expectRefusal(
        thrown(() => tieToHeader(URL_, { ...h, stateRoot: root }, h)),
        "state_root",
        /^the state root in the header at height 5: /,
        { height: 5n, expected: toHex(h.stateRoot), actual: toHex(root) },
      );
    });
  });

  describe("a state proof (verifyStateAnswer)", () => {
    const refused = (body: Obj, k = key(ALICE)) => thrown(() => verifyStateAnswer(URL_, body, k));

    it("key: an answer naming another key than the one asked for (its proof of the key asked for)", () => {
      const body = copy(answers["alice"]!);
      body["key"] = toHex(key(BOB));
      expectRefusal(refused(body), "key", /^the requested key: /, { expected: toHex(key(ALICE)), actual: toHex(key(BOB)) });
    });

    it("key: a valid proof of another key, in an answer naming the key asked for", () => {
      const body = copy(answers["bob"]!);
      body["key"] = toHex(key(ALICE));
      expectRefusal(refused(body), "key", /^the requested key: /, { expected: toHex(key(ALICE)), actual: toHex(key(BOB)) });
    });

    it("state_proof: a proof that does not verify against the answer's state root, or is malformed", () => {
      const body = copy(answers["alice"]!);
      const proof = body["proof"] as { digests: string[] };
      proof.digests[0] = flipHex(proof.digests[0]!);
      const root = answers["alice"]!["state_root"] as string;
      expectRefusal(refused(body), "state_proof", new RegExp(`^does not verify against state_root ${root}: `));
      const malformed = copy(answers["alice"]!);
      (malformed["proof"] as Obj)["digests"] = "none";
      expectRefusal(refused(malformed), "state_proof", new RegExp(`^does not verify against state_root ${root}: \\$\\.digests: `));
    });

    it("a proof that is not a JSON object, and a key that is not 54 bytes of hex, are MalformedAnswers naming the path", () => {
      const body = copy(answers["alice"]!);
      body["proof"] = [];
      expectMalformed(refused(body), "$.proof: expected a JSON object");
      const short = copy(answers["alice"]!);
      short["key"] = "0x01";
      expectMalformed(refused(short), /^\$\.key: /);
      const proofKey = copy(answers["alice"]!);
      (proofKey["proof"] as Obj)["key"] = 7;
      expectMalformed(refused(proofKey), /^\$\.proof\.key: /);
    });
  });

  describe("a batch proof (verifyMultiAnswer)", () => {
    const refused = (body: Obj, keys: Uint8Array[]) => thrown(() => verifyMultiAnswer(URL_, body, keys));

    it("state_proof: an entry's value altered", () => {
      const body = copy(answers["multi"]!);
      const entry = (body["proof"] as { entries: Array<{ value: string }> }).entries[1]!;
      entry.value = flipHex(entry.value);
      expectRefusal(refused(body, [key(ALICE), key(BOB)]), "state_proof", /^does not verify against state_root /);
    });

    it("entries: a valid proof of more keys than asked for", () => {
      expectRefusal(refused(answers["multi"]!, [key(ALICE)]), "entries", /^the proof has 2 entries for 1 requested keys$/);
    });

    it("entries: a valid proof of as many keys, one of them not asked for", () => {
      const err = refused(answers["multi"]!, [key(ALICE), key(CAROL)]);
      expectRefusal(err, "entries", new RegExp(`^keys\\[1\\] ${toHex(key(CAROL))} is not in the proof$`));
    });

    it("a proof that is not a JSON object is a MalformedAnswer", () => {
      const body = copy(answers["multi"]!);
      body["proof"] = null;
      expectMalformed(refused(body, [key(ALICE), key(BOB)]), "$.proof: expected a JSON object");
    });
  });

  describe("a transaction proof (verifyTxAnswer)", () => {
    const refused = (body: Obj, requested: string) => rejected(Promise.resolve().then(() => verifyTxAnswer(URL_, body, fromHex(requested), header)));

    it("transaction: the valid proof of another transaction of the block, for the one asked for", async () => {
      const err = await refused(answers["tx0"]!, tx(B5, 3));
      expectRefusal(err, "transaction", /^the hash of the served transaction: /, { height: 5n, expected: tx(B5, 3), actual: tx(B5, 0) });
    });

    it("leaf_hash: the transaction asked for, with the valid proof of another leaf and that leaf's index", async () => {
      const body = copy(answers["tx0"]!);
      body["transaction"] = answers["tx3"]!["transaction"];
      expectRefusal(await refused(body, tx(B5, 3)), "leaf_hash", /^the proof's leaf: /, { height: 5n, expected: tx(B5, 3), actual: tx(B5, 0) });
    });

    it("leaf_index: a tx_index that is not the proven leaf's", async () => {
      const body = copy(answers["tx3"]!);
      body["tx_index"] = 2;
      expectRefusal(await refused(body, tx(B5, 3)), "leaf_index", /^the proof is of leaf 3, the answer names tx_index 2$/, { height: 5n });
    });

    it("proof: an inclusion proof that is not one", async () => {
      const body = copy(answers["tx3"]!);
      (body["proof"] as Obj)["leaf_index"] = -1;
      expectRefusal(await refused(body, tx(B5, 3)), "proof", /^inclusion proof: "leaf_index" must be an integer in 0\.\.2\^32-1$/, { height: 5n });
    });

    it("tx_root: a proof with a sibling altered does not verify against the answer's tx_root", async () => {
      const body = copy(answers["tx3"]!);
      const proof = body["proof"] as { siblings: string[] };
      proof.siblings[0] = flipHex(proof.siblings[0]!);
      const err = await refused(body, tx(B5, 3));
      expectRefusal(err, "tx_root", new RegExp(`^the inclusion proof does not verify against ${toHex(B5.tx_root)}$`), { height: 5n });
    });

    it("tx_root: a valid proof against another block's tx_root, in an answer naming this block", async () => {
      const body = copy(answers["tx1of1"]!);
      for (const f of ["height", "block_hash", "state_root"]) body[f] = answers["tx3"]![f];
      const err = await refused(body, tx(B1, 1));
      expectRefusal(err, "tx_root", /^the tx_root in the header at height 5: /, { height: 5n, expected: toHex(B5.tx_root), actual: toHex(B1.tx_root) });
    });

    it("a tx_root, transaction or tx_index that is not what it must be is a MalformedAnswer naming it", async () => {
      for (const [field, value, problem] of [
        ["tx_root", "0x12", /^\$\.tx_root: /],
        ["transaction", 5, /^\$\.transaction: /],
        ["tx_index", "three", /^\$\.tx_index: /],
        ["proof", "none", /^\$\.proof: expected a JSON object$/],
      ] as const) {
        const body = copy(answers["tx3"]!);
        body[field] = value;
        expectMalformed(await refused(body, tx(B5, 3)), problem);
      }
    });
  });

  describe("a receipt proof (verifyReceiptAnswer)", () => {
    const refused = (body: Obj, requested: string) => rejected(Promise.resolve().then(() => verifyReceiptAnswer(URL_, body, fromHex(requested), header)));

    it("receipt.tx_hash: the valid proof of another transaction's receipt, for the one asked for", async () => {
      const err = await refused(answers["receipt0"]!, tx(B5, 3));
      expectRefusal(err, "receipt.tx_hash", /^the transaction the receipt names: /, { height: 5n, expected: tx(B5, 3), actual: tx(B5, 0) });
    });

    it("leaf_hash: the receipt asked for, with the valid proof of another receipt and its index", async () => {
      const body = copy(answers["receipt0"]!);
      body["receipt"] = answers["receipt3"]!["receipt"];
      expectRefusal(await refused(body, tx(B5, 3)), "leaf_hash", /^the proof's leaf: /, { height: 5n });
    });

    it("leaf_index: a tx_index that is not the proven leaf's", async () => {
      const body = copy(answers["receipt3"]!);
      body["tx_index"] = 4;
      expectRefusal(await refused(body, tx(B5, 3)), "leaf_index", /^the proof is of leaf 3, the answer names tx_index 4$/, { height: 5n });
    });

    it("receipt_root: a proof with a sibling altered does not verify against the answer's receipt_root", async () => {
      const body = copy(answers["receipt3"]!);
      const proof = body["proof"] as { siblings: string[] };
      proof.siblings[0] = flipHex(proof.siblings[0]!);
      expectRefusal(await refused(body, tx(B5, 3)), "receipt_root", new RegExp(`^the inclusion proof does not verify against ${toHex(B5.receipt_root)}$`), { height: 5n });
    });

    it("receipt_root: a valid proof against another block's receipt_root, in an answer naming this block", async () => {
      const body = copy(answers["receipt1of1"]!);
      for (const f of ["height", "block_hash", "state_root"]) body[f] = answers["receipt3"]![f];
      const err = await refused(body, tx(B1, 1));
      expectRefusal(err, "receipt_root", /^the receipt_root in the header at height 5: /, { height: 5n, expected: toHex(B5.receipt_root), actual: toHex(B1.receipt_root) });
    });

    it("a receipt_root or receipt that is not what it must be is a MalformedAnswer naming it", async () => {
      for (const [field, value, problem] of [
        ["receipt_root", "0x12", /^\$\.receipt_root: /],
        ["receipt", { status: "ok" }, /^\$\.receipt/],
      ] as const) {
        const body = copy(answers["receipt3"]!);
        body[field] = value;
        expectMalformed(await refused(body, tx(B5, 3)), problem);
      }
    });
  });

  describe("through the client: an answer is tied to the header of the block it names", () => {
    it("height: block(h) answered with the block of another height (whole, and on the chain) is refused", async () => {
      const first = (await (await fetch(`${n.url}/replication?since=1&until=1`)).json()) as Obj;
      const p = await proxy(n.url, (path, body) => (path.startsWith("/replication?since=5&") ? { ...body, items: first["items"] } : undefined));
      try {
        const c = createClient(p.url);
        const err = await rejected(c.block(5n));
        expectRefusal(err, "height", /^the node answered block 1 for height 5$/, { height: 5n });
        expect((err as ProofInvalid).url).toBe(`${p.url}/replication?since=5&limit=1&until=5`);
        expect((await c.block(1n)).height).toBe(1n);
      } finally {
        await p.close();
      }
    });

    it("block_hash, schedule_digest: broker-state read at another block than the pinned one, or with a digest that is not its schedule's", async () => {
      const head = n.db.head()!;
      const stream = "owner:0x1111111111111111111111111111111111111111/nonce:1";
      const other = toHex(fixture.blocks[0]!.block_hash);
      const p = await proxy(n.url, (path, body) => {
        if (!path.startsWith("/cbqs/broker-state")) return undefined;
        if (path.includes("&block=")) return { ...body, block_hash: other, view: { ...(body["view"] as Obj), block_hash: other } };
        const schedule = body["schedule"] as Obj;
        return { ...body, schedule: { ...schedule, schedule_digest: flipHex(schedule["schedule_digest"] as string) } };
      });
      try {
        const c = createClient(p.url);
        const moved = await rejected(c.brokerState({ stream }, { block: head.block_hash }));
        expectRefusal(moved, "block_hash", new RegExp(`^the answer is read at ${other}, not the pinned block ${toHex(head.block_hash)}$`), { expected: toHex(head.block_hash), actual: other });
        const digest = await rejected(c.brokerState({ stream }));
        expectRefusal(digest, "schedule_digest", /^the active schedule's digest is 0x[0-9a-f]{64}, the answer says 0x[0-9a-f]{64}$/, { height: head.height });
      } finally {
        await p.close();
      }
    });

    it("state_root: a valid proof of an older state, in an answer naming the head's height and block hash, is refused", async () => {
      const devnet = await startNode({ kind: "genesis", source: readFixture("fixtures/corpus/transfers.json").genesis.source });
      const sender = toHex(address(0x11));
      const p = await proxy(devnet.url, (path, body) => {
        if (!path.startsWith("/proof/account/")) return undefined;
        return { ...older, height: body["height"], block_hash: body["block_hash"] };
      });
      const older = (await (await fetch(`${devnet.url}/proof/account/${sender}`)).json()) as Obj;
      try {
        // A block that changes the sender's account: the proof above is of the state before it.
        await post(devnet.url, "/tx", toHex(transferTx(7n, address(0x11), 0n, address(0x22), 1n)));
        await post(devnet.url, "/mine", "");
        const head = devnet.db.head()!;
        expect(toHex(head.state_root)).not.toBe(older["state_root"]);
        const err = await rejected(createClient(p.url).accountProof(sender));
        expectRefusal(err, "state_root", new RegExp(`^the state root in the header at height ${head.height}: `), { height: head.height, expected: toHex(head.state_root), actual: older["state_root"] });
      } finally {
        await p.close();
        await devnet.close();
      }
    });
  });
});
