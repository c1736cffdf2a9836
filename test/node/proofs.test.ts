// CIP-4 §5.4 proof endpoints of `cbqs node`: every served proof verifies with the CLI verifiers
// (`cbqs verify-proof`, `cbqs verify-bmt-proof`) against the root the answer names, and against
// no other; /proof/multi shares its nodes (§8.2) and refuses more than 256 keys.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { accountKey, actorStorageKey } from "../../state/kv/keys.js";
import { REGISTRY_ADDRESS, schedulesKey } from "../../src/engine/layout.js";
import { utf8 } from "../../src/bytes.js";
import { cbqs } from "../cli/program.js";
import { flipHex } from "../harness/helpers.js";
import { multiProof } from "../../src/node/proofs.js";
import { MemoryChainDb } from "../../state/chain-db/memory.js";
import { MAX_MULTI_PROOF_KEYS, verifyStateProof } from "../../state/qmdb/proof.js";
import { genesis } from "../state/chain-db/conformance.js";
import { address, get, post, startNode, toHex, transferTx, type TestNode } from "./helpers.js";
import { ProofCache, stateProof } from "../../src/node/proofs.js";

const dir = mkdtempSync(join(tmpdir(), "cbqs-node-proofs-"));
let files = 0;

async function verifies(command: "verify-proof" | "verify-bmt-proof", proof: unknown, root: string): Promise<void> {
  const file = join(dir, `proof-${files++}.json`);
  writeFileSync(file, JSON.stringify(proof));
  const r = await cbqs(command, file, "--root", root);
  expect(r, `${command} ${file}`).toMatchObject({ exitCode: 0, err: "" });
  // verify-proof lists what it checked below its verdict (D-0015, CIP-4 Appendix C).
  expect(r.out, `${command} ${file}`).toMatch(/^valid\n/);
  expect((await cbqs(command, file, "--root", flipHex(root))).exitCode).toBe(1);
}

describe("cbqs node: CIP-4 §5.4 proofs", () => {
  let n: TestNode;
  beforeAll(async () => {
    n = await startNode("fixtures/corpus/create-quote.json");
  });
  afterAll(() => n.close());

  it("§5.4 /proof/account, /proof/actor, /proof/storage verify against the answer's state_root (the head's)", async () => {
    const head = n.db.head()!;
    const paths = [
      "/proof/account/0x1111111111111111111111111111111111111111", // present
      "/proof/account/0x9999999999999999999999999999999999999999", // absent: exclusion proof
      `/proof/actor/${toHex(REGISTRY_ADDRESS)}`, // no Actor records in CBQS: exclusion proof
      `/proof/storage/${toHex(REGISTRY_ADDRESS)}/${toHex(utf8("base-rate-schedules"))}`,
    ];
    for (const path of paths) {
      const r = await get(n.url, path);
      expect(r.status, path).toBe(200);
      expect(r.body).toMatchObject({ height: head.height.toString(), block_hash: toHex(head.block_hash), state_root: toHex(head.state_root) });
      await verifies("verify-proof", r.body["proof"], r.body["state_root"] as string);
    }
    const storage = await get(n.url, paths[3]!);
    expect(storage.body["key"]).toBe(toHex(schedulesKey()));
    expect((storage.body["proof"] as { value: string }).value).toBe(toHex(n.db.state.read(schedulesKey())!));
    expect(((await get(n.url, paths[1]!)).body["proof"] as { value: unknown }).value).toBeNull();
  });

  it("§5.4 /proof/tx and /proof/receipt of every transaction verify against the tx_root / receipt_root of its block", async () => {
    for (const b of n.db.blocks({ from: 1n, to: 100n, order: "asc", limit: 100 })) {
      for (const [i, receipt] of b.receipts.entries()) {
        const hash = toHex(receipt.tx_hash);
        const tx = await get(n.url, `/proof/tx/${hash}`);
        expect(tx.body).toMatchObject({ height: b.height.toString(), block_hash: toHex(b.block_hash), tx_root: toHex(b.tx_root), tx_index: i, transaction: toHex(b.transactions[i]!) });
        await verifies("verify-bmt-proof", tx.body["proof"], tx.body["tx_root"] as string);
        const rc = await get(n.url, `/proof/receipt/${hash}`);
        expect(rc.body).toMatchObject({ receipt_root: toHex(b.receipt_root), tx_index: i, receipt: { tx_hash: hash, status: receipt.status } });
        await verifies("verify-bmt-proof", rc.body["proof"], rc.body["receipt_root"] as string);
      }
    }
    expect((await get(n.url, `/proof/tx/0x${"ab".repeat(32)}`)).body).toMatchObject({ error: { code: "tx_not_found" } });
  });

  it("the verifiers read a node's answer as saved; a /proof/tx answer's transaction must hash to the proven leaf", async () => {
    const account = await get(n.url, "/proof/account/0x1111111111111111111111111111111111111111");
    const saved = join(dir, "account-answer.json");
    writeFileSync(saved, JSON.stringify(account.body));
    const verified = await cbqs("verify-proof", saved, "--root", account.body["state_root"] as string);
    expect(verified).toMatchObject({ exitCode: 0, err: "" });
    const proof = account.body["proof"] as { key: string; value: string };
    expect(verified.out).toContain(`\n  proved: key ${proof.key} = ${proof.value}\n`);
    // The answer names another key than the one proven: refused.
    const other = "0x01" + "22".repeat(20) + "00".repeat(33);
    writeFileSync(saved, JSON.stringify({ ...account.body, key: other }));
    const swappedKey = await cbqs("verify-proof", saved, "--root", account.body["state_root"] as string);
    expect(swappedKey.exitCode).toBe(1);
    expect(swappedKey.out).toMatch(new RegExp(`^invalid: the answer's key ${other} is not the proven key ${proof.key}`));
    // An absence proof says so.
    const absent = await get(n.url, "/proof/account/0x9999999999999999999999999999999999999999");
    writeFileSync(saved, JSON.stringify(absent.body));
    expect((await cbqs("verify-proof", saved, "--root", absent.body["state_root"] as string)).out).toContain(`\n  proved: key 0x01${"99".repeat(20)}${"00".repeat(33)} has no value at this root\n`);
    const b = n.db.blocks({ from: 1n, to: 100n, order: "asc", limit: 100 }).find((x) => x.receipts.length > 1)!;
    const tx = await get(n.url, `/proof/tx/${toHex(b.receipts[0]!.tx_hash)}`);
    const txFile = join(dir, "tx-answer.json");
    writeFileSync(txFile, JSON.stringify(tx.body));
    const ok = await cbqs("verify-bmt-proof", txFile, "--root", tx.body["tx_root"] as string);
    expect(ok).toMatchObject({ exitCode: 0, err: "" });
    expect(ok.out).toMatch(/^valid\n  checked: leaf .* rebuild the root .*\n  checked: the answer's transaction hashes to the proven leaf\n$/);
    // Another transaction of the same block in the answer: the path still verifies, the leaf is not that transaction's.
    writeFileSync(txFile, JSON.stringify({ ...tx.body, transaction: toHex(b.transactions[1]!) }));
    const swapped = await cbqs("verify-bmt-proof", txFile, "--root", tx.body["tx_root"] as string);
    expect(swapped.exitCode).toBe(1);
    expect(swapped.out).toMatch(/^invalid: the answer's transaction does not hash to the proven leaf\n.*\n  checked: the answer's transaction does not hash to the proven leaf\n$/);
    // A /proof/receipt answer: its receipt must be the proven leaf; a forged status is caught.
    const rc = await get(n.url, `/proof/receipt/${toHex(b.receipts[0]!.tx_hash)}`);
    const rcFile = join(dir, "receipt-answer.json");
    writeFileSync(rcFile, JSON.stringify(rc.body));
    const real = await cbqs("verify-bmt-proof", rcFile, "--root", rc.body["receipt_root"] as string);
    expect(real.exitCode).toBe(0);
    expect(real.out).toMatch(/\n  checked: the answer's receipt \(status, error code, cycles, cells, events\) hashes to the proven leaf\n  note: the receipt's tx_hash is not part of its leaf/);
    const receipt = rc.body["receipt"] as Record<string, unknown>;
    expect(receipt["status"]).toBe("ok");
    writeFileSync(rcFile, JSON.stringify({ ...rc.body, receipt: { ...receipt, cycles: String(BigInt(receipt["cycles"] as string) + 1n) } }));
    const forged = await cbqs("verify-bmt-proof", rcFile, "--root", rc.body["receipt_root"] as string);
    expect(forged.exitCode).toBe(1);
    expect(forged.out).toMatch(/^invalid: the answer's receipt .* does not hash to the proven leaf\n.*\n  checked: the answer's receipt .* does not hash to the proven leaf\n/);
  });

  it("§8.2 /proof/multi: one proof for many keys, shared digests once, verifying against the head's state_root", async () => {
    const keys = [...n.db.state.entries()].map(([k]) => toHex(k));
    expect(keys.length).toBeGreaterThan(20);
    const r = await post(n.url, "/proof/multi", JSON.stringify({ keys }), "application/json");
    expect(r.status).toBe(200);
    const proof = r.body["proof"] as { entries: Array<{ key: string }>; digests: string[] };
    expect(proof.entries.map((e) => e.key)).toEqual(keys);
    await verifies("verify-proof", proof, r.body["state_root"] as string);
    // Deduplicated: fewer digests than the single proofs together.
    let single = 0;
    for (const key of keys.slice(0, 5)) single += (n.db.proveKey(Uint8Array.from(Buffer.from(key.slice(2), "hex"))) as { digests: string[] }).digests.length;
    const five = await post(n.url, "/proof/multi", JSON.stringify({ keys: keys.slice(0, 5) }), "application/json");
    expect((five.body["proof"] as { digests: string[] }).digests.length).toBeLessThan(single);
  });

  it("§8.2 more than 256 keys, duplicates, absent keys and malformed bodies are refused with a code", async () => {
    const key = (i: number) => toHex(accountKey(new Uint8Array(20).fill(i % 256).map((x, j) => (j === 0 ? i >> 8 : x))));
    const many = Array.from({ length: 257 }, (_, i) => key(i));
    const present = toHex(accountKey(new Uint8Array(20).fill(0x11)));
    const cases: Array<[string, number, string]> = [
      [JSON.stringify({ keys: many }), 400, "too_many_keys"],
      [JSON.stringify({ keys: [present, present] }), 400, "duplicate_key"],
      [JSON.stringify({ keys: [present, toHex(actorStorageKey(REGISTRY_ADDRESS, utf8("nothing")))] }), 404, "key_not_found"],
      [JSON.stringify({ keys: [] }), 400, "invalid_body"],
      [JSON.stringify({ keys: ["0x01"] }), 400, "invalid_key"],
      [JSON.stringify({ keys: [present], extra: 1 }), 400, "invalid_body"],
      ["{not json", 400, "invalid_json"],
      [JSON.stringify({ keys: Array(3000).fill(present) }), 413, "body_too_large"],
    ];
    for (const [body, status, code] of cases) {
      const r = await post(n.url, "/proof/multi", body, "application/json");
      expect([r.status, (r.body["error"] as { code: string }).code], body.slice(0, 60)).toEqual([status, code]);
    }
  });

  it("/proof/multi keys of an unknown prefix (0x00, 0x1e–0xff) or a wrong length are 400 invalid_key naming the index, never 500 (CIP-4 §4.2)", async () => {
    const present = toHex(accountKey(new Uint8Array(20).fill(0x11)));
    const withPrefix = (b: number) => "0x" + b.toString(16).padStart(2, "0") + present.slice(4);
    const unknown = [0x00, ...Array.from({ length: 0xff - 0x1e + 1 }, (_, i) => 0x1e + i)];
    for (const b of unknown) {
      const r = await post(n.url, "/proof/multi", JSON.stringify({ keys: [present, withPrefix(b)] }), "application/json");
      expect([r.status, r.body["error"]], withPrefix(b)).toEqual([
        400,
        { code: "invalid_key", message: `keys[1]: unknown state key prefix 0x${b.toString(16).padStart(2, "0")} (CIP-4 §4.2 prefixes are 0x01–0x1d)` },
      ]);
    }
    for (const bytes of [0, 1, 20, 53, 55, 108]) {
      const r = await post(n.url, "/proof/multi", JSON.stringify({ keys: ["0x" + "01".repeat(bytes), present] }), "application/json");
      expect([r.status, r.body["error"]], `${bytes} bytes`).toEqual([400, { code: "invalid_key", message: "keys[0] must be a 0x-prefixed 54-byte hex string" }]);
    }
    const notHex = await post(n.url, "/proof/multi", JSON.stringify({ keys: [present, present, "0x" + "zz".repeat(54)] }), "application/json");
    expect(notHex.body["error"]).toEqual({ code: "invalid_key", message: "keys[2] must be a 0x-prefixed 54-byte hex string" });
    // The single-key routes build their keys from an address (prefixes 0x01, 0x02, 0x03): only its form can be wrong.
    const single: Array<[string, string]> = [
      ["/proof/account/0x" + "11".repeat(19), "invalid_address"],
      ["/proof/actor/0x" + "11".repeat(21), "invalid_address"],
      ["/proof/storage/0x00/0x00", "invalid_address"],
      ["/proof/storage/0x" + "1e".repeat(20) + "/0x0", "invalid_key"],
    ];
    for (const [path, code] of single) {
      const r = await get(n.url, path);
      expect([r.status, (r.body["error"] as { code: string }).code], path).toEqual([400, code]);
    }
    expect(n.logs.filter((e) => e["level"] === "error")).toEqual([]);
  });

  it("an absent key whose exclusion proof would be too large is refused (422), a present key is still proven", async () => {
    const small = await startNode("fixtures/corpus/create-quote.json", { proofLimits: { maxExclusionOps: 2 } });
    try {
      const absent = await get(small.url, "/proof/account/0x9999999999999999999999999999999999999999");
      expect(absent.status).toBe(422);
      expect(absent.body).toMatchObject({ error: { code: "exclusion_proof_too_large" }, height: small.db.head()!.height.toString() });
      expect((await get(small.url, "/proof/account/0x1111111111111111111111111111111111111111")).status).toBe(200);
    } finally {
      await small.close();
    }
  });
});

describe("/proof/multi bound", () => {
  it("/proof/multi proves exactly 256 keys (the bound is inclusive) and refuses 257 (CIP-4 §8.2)", () => {
    const db = new MemoryChainDb(4);
    const keyOf = (i: number) => accountKey(Uint8Array.from({ length: 20 }, (_, j) => (j === 0 ? i >> 8 : j === 1 ? i & 255 : 0x42)));
    const g = genesis(db, Array.from({ length: 300 }, (_, i): [Uint8Array, Uint8Array] => [keyOf(i), Uint8Array.of(1, i & 255)]));
    const keys = (count: number) => Array.from({ length: count }, (_, i) => toHex(keyOf(i)));
    expect(MAX_MULTI_PROOF_KEYS).toBe(256);
    const answer = multiProof(db, { keys: keys(256) });
    expect(verifyStateProof(answer["proof"], g.state_root)).toEqual({ valid: true });
    expect(() => multiProof(db, { keys: keys(257) })).toThrow(expect.objectContaining({ status: 400, code: "too_many_keys" }));
    db.close();
  });
});

describe("single-key proofs are kept per head block", () => {
  it("a kept answer is byte for byte the one built afresh; a new head is never answered from the old one's (each answer verifies against the root it names)", async () => {
    const n = await startNode("fixtures/corpus/create-quote.json");
    try {
      const path = "/proof/account/0x1111111111111111111111111111111111111111";
      const first = await fetch(n.url + path).then((r) => r.text());
      expect(await fetch(n.url + path).then((r) => r.text())).toBe(first);
      expect(JSON.parse(first)).toEqual(JSON.parse(JSON.stringify(stateProof(n.db, accountKey(address(0x11)), { maxExclusionOps: 4096 }))));
      // A block that changes the account: the next answer is the new head's.
      const nonce = BigInt(((await get(n.url, "/account/0x1111111111111111111111111111111111111111")).body["next_nonce"]) as string);
      expect((await post(n.url, "/tx", toHex(transferTx(7n, address(0x11), nonce, address(0x77), 5n)))).status).toBe(200);
      await post(n.url, "/mine", "");
      const head = n.db.head()!;
      const after = (await get(n.url, path)).body;
      expect(after).toMatchObject({ height: head.height.toString(), block_hash: toHex(head.block_hash), state_root: toHex(head.state_root) });
      expect(JSON.stringify(after)).not.toBe(first);
      await verifies("verify-proof", after["proof"], after["state_root"] as string);
    } finally {
      await n.close();
    }
  });

  it("the cache holds at most its size, dropping the oldest answer first", () => {
    const db = new MemoryChainDb();
    genesis(db);
    const cache = new ProofCache(2);
    let built = 0;
    const make = () => ({ n: ++built });
    const keys = [1, 2, 3].map((b) => accountKey(address(b)));
    for (const k of keys) cache.get(db, k, make);
    expect(built).toBe(3);
    cache.get(db, keys[2]!, make); // kept
    cache.get(db, keys[1]!, make); // kept
    expect(built).toBe(3);
    cache.get(db, keys[0]!, make); // dropped when the third came in
    expect(built).toBe(4);
  });
});
