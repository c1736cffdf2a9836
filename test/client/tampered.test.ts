// A client never returns what it could not verify. A proxy between the client and a real
// node alters one byte of an answer — a proof digest, a proven value, the block an answer names,
// a header field, the genesis — and the client refuses it with ProofInvalid naming the check.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFixture } from "../../src/harness/documents.js";
import { createClient, ProofInvalid, VerificationError, type ProofInvalid as ProofInvalidType } from "../../src/client/index.js";
import { startNode, toHex, type TestNode } from "../node/helpers.js";
import { flipHex, proxy, rejection, type TestServer } from "./helpers.js";

const FIXTURE = "fixtures/corpus/create-quote.json";
const fixture = readFixture(FIXTURE);
const ALICE = "0x1111111111111111111111111111111111111111";
const BOB = "0x2222222222222222222222222222222222222222";
type Obj = Record<string, unknown>;

describe("tampered answers are refused with ProofInvalid", () => {
  let n: TestNode;
  const proxies: TestServer[] = [];
  beforeAll(async () => {
    n = await startNode(FIXTURE);
  });
  afterAll(async () => {
    for (const p of proxies) await p.close();
    await n.close();
  });

  /** A client behind a proxy applying `edit` to the answers of paths starting with `prefix`. */
  async function tampered(prefix: string, edit: (body: Obj) => void) {
    const p = await proxy(n.url, (path, body) => {
      if (!path.startsWith(prefix)) return undefined;
      edit(body);
      return body;
    });
    proxies.push(p);
    return createClient(p.url);
  }

  async function refused(p: Promise<unknown>, check: string): Promise<ProofInvalidType> {
    const err = await rejection(p);
    expect(err, String(err)).toBeInstanceOf(ProofInvalid);
    expect(err).toBeInstanceOf(VerificationError);
    expect((err as ProofInvalidType).check).toBe(check);
    return err as ProofInvalidType;
  }

  const tx = fixture.blocks[1]!.receipts[3]!.tx_hash;

  it("untouched, the same proxy's answers verify (the tests below differ only by the byte they alter)", async () => {
    const c = await tampered("/nothing", () => {});
    expect((await c.accountProof(ALICE)).account).not.toBeNull();
    expect((await c.txProof(tx)).txIndex).toBe(3);
    expect((await c.receiptProof(tx)).txIndex).toBe(3);
  });

  it("a state proof with one digest altered does not verify against the answer's state_root", async () => {
    const c = await tampered("/proof/account/", (b) => {
      const proof = b["proof"] as { digests: string[] };
      proof.digests[0] = flipHex(proof.digests[0]!);
    });
    const err = await refused(c.accountProof(ALICE), "state_proof");
    expect(err.message).toMatch(/does not verify against state_root 0x[0-9a-f]{64}/);
  });

  it("a proven value altered by one byte does not verify", async () => {
    const c = await tampered("/proof/account/", (b) => {
      const proof = b["proof"] as { value: string };
      proof.value = flipHex(proof.value);
    });
    await refused(c.accountProof(ALICE), "state_proof");
  });

  it("a valid proof of another key is refused (the key is the one asked for)", async () => {
    const bob = (await (await fetch(`${n.url}/proof/account/${BOB}`)).json()) as Obj;
    const c = await tampered("/proof/account/", (b) => Object.assign(b, bob));
    const err = await refused(c.accountProof(ALICE), "key");
    expect(err.expected).toBe(`0x01${ALICE.slice(2)}${"00".repeat(33)}`);
  });

  it("a valid proof whose answer names another block hash fails the header check", async () => {
    const c = await tampered("/proof/account/", (b) => {
      b["block_hash"] = flipHex(b["block_hash"] as string);
    });
    const err = await refused(c.accountProof(ALICE), "block_hash");
    expect(err.height).toBe(n.db.head()!.height);
    expect(err.expected).toBe(toHex(n.db.head()!.block_hash));
  });

  it("a header whose state_root is altered no longer hashes to its block hash", async () => {
    const c = await tampered("/replication", (b) => {
      for (const item of b["items"] as Obj[]) item["state_root"] = flipHex(item["state_root"] as string);
    });
    const err = await refused(c.accountProof(ALICE), "block_hash");
    expect(err.message).toMatch(/the block header's hash: expected 0x[0-9a-f]{64}, got 0x/);
  });

  it("a batch proof with one entry's value altered does not verify", async () => {
    const keys = [`0x01${ALICE.slice(2)}${"00".repeat(33)}`, `0x01${BOB.slice(2)}${"00".repeat(33)}`];
    const c = await tampered("/proof/multi", (b) => {
      const entry = (b["proof"] as { entries: Array<{ value: string }> }).entries[1]!;
      entry.value = flipHex(entry.value);
    });
    await refused(c.multiProof(keys), "state_proof");
  });

  it("a transaction proof with a sibling altered, or another transaction served, is refused", async () => {
    const sibling = await tampered("/proof/tx/", (b) => {
      const proof = b["proof"] as { siblings: string[] };
      proof.siblings[0] = flipHex(proof.siblings[0]!);
    });
    await refused(sibling.txProof(tx), "tx_root");
    const other = await tampered("/proof/tx/", (b) => {
      b["transaction"] = toHex(fixture.blocks[1]!.transactions[0]!);
    });
    await refused(other.txProof(tx), "transaction");
  });

  it("a receipt altered by one field no longer hashes to the proven leaf", async () => {
    const c = await tampered("/proof/receipt/", (b) => {
      (b["receipt"] as Obj)["cycles"] = "1";
    });
    await refused(c.receiptProof(tx), "leaf_hash");
  });

  it("a genesis whose chain_instance_id is not its source's fingerprint is refused, and so is every proof tied to it", async () => {
    const c = await tampered("/genesis", (b) => {
      b["chain_instance_id"] = flipHex(b["chain_instance_id"] as string);
    });
    await refused(c.genesis(), "chain_instance_id");
    await refused(c.accountProof(ALICE), "chain_instance_id");
  });

  it("broker-state answered at another block than the pinned one, or with a wrong schedule digest, is refused", async () => {
    const head = n.db.head()!;
    const streamId = "owner:0x1111111111111111111111111111111111111111/nonce:1";
    const digest = await tampered("/cbqs/broker-state", (b) => {
      const schedule = b["schedule"] as Obj;
      schedule["schedule_digest"] = flipHex(schedule["schedule_digest"] as string);
    });
    await refused(digest.brokerState({ stream: streamId }), "schedule_digest");
    const moved = await tampered("/cbqs/broker-state", (b) => {
      b["block_hash"] = flipHex(b["block_hash"] as string);
      (b["view"] as Obj)["block_hash"] = b["block_hash"];
    });
    await refused(moved.brokerState({ stream: streamId }, { block: head.block_hash }), "block_hash");
    await refused(moved.brokerState({ stream: streamId }, { height: head.height }), "block_hash");
  });
});
