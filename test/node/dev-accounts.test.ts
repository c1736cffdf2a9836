// `cbqs node` with no arguments is a devnet — the default genesis config plus ten
// funded dev accounts whose keys follow a published rule — printed at start as anvil prints its
// accounts; --accounts, --balance; --print-genesis writes the genesis that reproduces the chain.
// The rule is checked against independent implementations (node:crypto's SHA-256 and Ed25519,
// @noble/hashes' keccak), and the default devnet's chain instance is pinned.
import { createHash, createPrivateKey, createPublicKey } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { afterAll, describe, expect, it } from "vitest";
import { chainInstanceId } from "../../src/codec/derive.js";
import { DEFAULT_DEV_BALANCE, devAccount, devAccountIndex, devnetGenesis, devnetGenesisSource, devnetOf, DEVNET_MNEMONIC } from "../../src/harness/devnet.js";
import { DEFAULT_GENESIS, DEFAULT_GENESIS_SOURCE } from "../../src/harness/genesis.js";
import { genesisFromSource } from "../../src/harness/genesis.js";
import { cbqs, unusableInput } from "../cli/program.js";
import { withNodeCommand } from "./command.js";
import { get, post, startNode, toHex, transferTx } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "cbqs-dev-accounts-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The default devnet's chain instance (10 dev accounts of 10^18): pinned, documented in docs/guides/run-a-devnet.md. */
const DEVNET_ID = "0x412b3b5430d4fa6f9d8e2ced01f155c3181289dda3fcab8d3622a3e07a1b95a9";
const DEV0 = { address: "0xa05a065ba5d5888cc61c4e5ccfbd57f7bd9bbe99", seed: "0x22fce39fcf73234ad75577d2f289c61973a9a7587ef89aa0e77e07bf689ff760" };

function independent(i: number): { seed: string; publicKey: string; address: string } {
  const seed = createHash("sha256").update(`cbqs-devnet-v1:${DEVNET_MNEMONIC}:${i}`, "utf8").digest();
  const pkcs8 = Buffer.concat([Buffer.from("302e020100300506032b657004220420", "hex"), seed]);
  const publicKey = createPublicKey(createPrivateKey({ key: pkcs8, format: "der", type: "pkcs8" })).export({ format: "der", type: "spki" }).subarray(12);
  return { seed: toHex(seed), publicKey: toHex(publicKey), address: toHex(keccak_256(publicKey).slice(12)) };
}

describe("dev accounts", () => {
  it("seed_i = SHA-256(\"cbqs-devnet-v1:\" ‖ mnemonic ‖ \":\" ‖ i), the RFC 8032 key of it, address = keccak256(public key)[12..]: as an independent implementation computes them", () => {
    expect(DEVNET_MNEMONIC).toBe("test test test test test test test test test test test junk");
    for (const i of [0, 1, 9, 10, 999]) {
      const a = devAccount(i);
      expect({ seed: toHex(a.seed), publicKey: toHex(a.publicKey), address: toHex(a.address) }, `dev${i}`).toEqual(independent(i));
      expect(a.name).toBe(`dev${i}`);
    }
    expect({ address: toHex(devAccount(0).address), seed: toHex(devAccount(0).seed) }).toEqual(DEV0);
    expect(() => devAccount(1000)).toThrow(RangeError);
    // Names are exact: the spelling the banner prints.
    expect([devAccountIndex("dev0"), devAccountIndex("dev999"), devAccountIndex("dev07"), devAccountIndex("dev1000"), devAccountIndex("Dev1"), devAccountIndex("dev")]).toEqual([0, 999, undefined, undefined, undefined, undefined]);
  });

  it("the devnet genesis is the default genesis config with the dev accounts added, and nothing else: --accounts 0 is the default genesis, byte for byte; the default devnet's chain instance is pinned", () => {
    const g = devnetGenesis(10);
    expect({ ...g, accounts: undefined }).toEqual({ ...DEFAULT_GENESIS, accounts: undefined });
    const accounts = g["accounts"] as Record<string, { balance: string }>;
    expect(Object.keys(accounts)).toHaveLength(13);
    for (const [address, entry] of Object.entries(DEFAULT_GENESIS["accounts"] as Record<string, unknown>)) expect(accounts[address]).toEqual(entry);
    for (let i = 0; i < 10; i++) expect(accounts[toHex(devAccount(i).address)]).toEqual({ balance: DEFAULT_DEV_BALANCE.toString() });
    expect(devnetGenesisSource(0)).toEqual(DEFAULT_GENESIS_SOURCE);
    expect(toHex(chainInstanceId(devnetGenesisSource(10)))).toBe(DEVNET_ID);
    // Another count or balance is another genesis, another chain instance (CIP-39 §3).
    const ids = new Set([devnetGenesisSource(10), devnetGenesisSource(9), devnetGenesisSource(10, 5n), DEFAULT_GENESIS_SOURCE].map((s) => toHex(chainInstanceId(s))));
    expect(ids.size).toBe(4);
    // Recognised by its bytes: the same accounts in a hand-written (non-canonical) genesis are not announced as a devnet.
    const source = devnetGenesisSource(3, 7n);
    expect(devnetOf(source, genesisFromSource(source).accounts)).toMatchObject({ balance: 7n, accounts: [{ name: "dev0" }, { name: "dev1" }, { name: "dev2" }] });
    const spaced = new TextEncoder().encode(JSON.stringify(devnetGenesis(3, 7n), null, 1));
    expect(devnetOf(spaced, genesisFromSource(spaced).accounts)).toBeUndefined();
    expect(devnetOf(DEFAULT_GENESIS_SOURCE, genesisFromSource(DEFAULT_GENESIS_SOURCE).accounts)).toBeUndefined();
  });

  it("`cbqs node` with no arguments prints the chain and every dev account with its balance and seed before its URL; GET /genesis and /devnet/accounts agree", async () => {
    let genesis: Record<string, unknown> = {};
    let listed: Array<Record<string, unknown>> = [];
    const r = await withNodeCommand(["--port", "0"], async (url) => {
      genesis = (await get(url, "/genesis")).body;
      listed = (await get(url, "/devnet/accounts")).body["accounts"] as Array<Record<string, unknown>>;
    });
    expect(r.exitCode).toBe(0);
    expect(genesis["chain_instance_id"]).toBe(DEVNET_ID);
    expect(genesis["source"]).toBe(toHex(devnetGenesisSource(10)));
    const lines = r.out.split("\n");
    expect(lines[0]).toBe(`cbqs devnet: chain_id 7, chain_instance_id ${DEVNET_ID}, head 0`);
    expect(lines).toContain(`(0) dev0 ${DEV0.address} 1000000000000000000 0`);
    expect(lines).toContain(`(0) dev0 ${DEV0.seed}`);
    expect(lines).toContain(`Mnemonic: ${DEVNET_MNEMONIC}`);
    expect(lines.filter((l) => /^\(\d+\) dev\d+ 0x[0-9a-f]{40} /.test(l))).toHaveLength(10);
    expect(lines.at(-2)).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+$/);
    expect(r.err).toMatch(new RegExp(`"msg":"serving","url":"[^"]+","chain_instance_id":"${DEVNET_ID}","height":"0","genesis":"devnet","dev_accounts":10,"mining":"manual"`));
    expect(listed).toHaveLength(10);
    expect(listed[0]).toEqual({
      name: "dev0",
      address: DEV0.address,
      seed: DEV0.seed,
      public_key: toHex(devAccount(0).publicKey),
      balance: "1000000000000000000",
      nonce: "0",
      pending: 0,
      next_nonce: "0",
    });
    // --quiet: the URL line only.
    const quiet = await withNodeCommand(["--port", "0", "--quiet"], async () => undefined);
    expect(quiet.out).toMatch(/^listening on \S+\n$/);
  });

  it("--print-genesis writes the genesis source; cbqs node --genesis <it> is the same chain (and announced as a devnet); --accounts/--balance make another", async () => {
    const file = join(dir, "devnet.json");
    const printed = await cbqs("node", "--print-genesis");
    expect([printed.exitCode, printed.err]).toEqual([0, ""]);
    expect(printed.out).toBe(new TextDecoder().decode(devnetGenesisSource(10)));
    writeFileSync(file, printed.out);
    // The same bytes are kept in the repository: the devnet's genesis file (docs/guides/run-a-devnet.md "Dev accounts").
    expect(readFileSync("fixtures/devnet/genesis.json", "utf8")).toBe(printed.out);
    expect(await cbqs("derive", "chain-instance-id", "--genesis", file)).toEqual({ exitCode: 0, out: DEVNET_ID + "\n", err: "" });
    let instance = "";
    const r = await withNodeCommand(["--genesis", file, "--port", "0"], async (url) => {
      instance = (await get(url, "/genesis")).body["chain_instance_id"] as string;
    });
    expect(instance).toBe(DEVNET_ID);
    expect(r.out).toContain(`(9) dev9 ${toHex(devAccount(9).address)} 1000000000000000000 0`);

    const three = await cbqs("node", "--print-genesis", "--accounts", "3", "--balance", "5");
    expect(three.out).toBe(new TextDecoder().decode(devnetGenesisSource(3, 5n)));
    const r3 = await withNodeCommand(["--accounts", "3", "--balance", "5", "--port", "0", "--quiet"], async (url) => {
      instance = (await get(url, "/genesis")).body["chain_instance_id"] as string;
      expect(((await get(url, "/devnet/accounts")).body["accounts"] as unknown[]).length).toBe(3);
      expect((await get(url, "/account/dev2")).body).toMatchObject({ address: toHex(devAccount(2).address), balance: "5", nonce: "0" });
      expect((await get(url, "/account/dev3")).body).toMatchObject({ error: { code: "invalid_address" } });
    });
    expect(r3.exitCode).toBe(0);
    expect(instance).toBe(toHex(chainInstanceId(devnetGenesisSource(3, 5n))));
  });

  it("a devnet in --db is continued by a bare restart (the banner shows the balances at the head); --accounts naming another devnet is refused like another --genesis", async () => {
    const store = join(dir, "db");
    await withNodeCommand(["--port", "0", "--db", store, "--quiet"], async (url) => {
      const tx = await cbqs("tx", '{"from":"dev0","transfer":{"to":"dev1","amount":"5"}}', "--node", url, "--send");
      expect(tx.exitCode, tx.err).toBe(0);
      await fetch(url + "/mine", { method: "POST", headers: { "x-cbqs-client": "test" } }).then((x) => x.text());
    });
    const again = await withNodeCommand(["--port", "0", "--db", store], async () => undefined);
    expect(again.out).toContain(`cbqs devnet: chain_id 7, chain_instance_id ${DEVNET_ID}, head 1`);
    expect(again.out).toContain(`(0) dev0 ${DEV0.address} 999999999999999995 1`);
    expect(again.out).toContain(`(1) dev1 ${toHex(devAccount(1).address)} 1000000000000000005 0`);
    expect(await cbqs("node", "--port", "0", "--db", store, "--accounts", "3")).toEqual(unusableInput(/the store holds another chain \(chain_instance_id 0x412b3b54/));
  });

  it("bad devnet options are exit 2 with one line", async () => {
    const cases: Array<[string[], RegExp]> = [
      [["--accounts", "1001"], /--accounts must be an integer from 0 to 1000/],
      [["--accounts", "ten"], /--accounts must be an integer/],
      [["--balance", "-1"], /--balance must be a decimal integer up to 2\^64 - 1/],
      [["--accounts", "20"], /20 dev accounts of 1000000000000000000 with the default accounts' 3000000000000000000 exceed a u64 total supply .*; the largest --balance for 20 is 772337203685477580/],
      [["--accounts", "3", "--genesis", "x.json"], /--accounts and --balance shape the devnet genesis: not with --fixture or --genesis/],
      [["--balance", "3", "--fixture", "fixtures/corpus/create-quote.json"], /--accounts and --balance shape the devnet genesis/],
      [["--print-genesis", "--db", join(dir, "x")], /--print-genesis writes the devnet genesis .*: not with --fixture, --genesis or --db/],
      [["--mining", "sometimes"], /--mining must be auto, interval or manual \(got sometimes\)/],
      [["--mining", "interval"], /--mining interval needs --block-time <s> above 0/],
      [["--mining", "auto", "--block-time", "1"], /--block-time sets --mining interval's timer: not with --mining auto/],
      [["--mining", "manual", "--block-time", "1"], /not with --mining manual/],
    ];
    for (const [args, problem] of cases) expect(await cbqs("node", "--port", "0", ...args), args.join(" ")).toEqual(unusableInput(problem));
  });

  it("pending and next_nonce of a dev account count its queued transactions", async () => {
    const n = await startNode({ kind: "genesis", source: devnetGenesisSource(10) });
    try {
      const dev0 = devAccount(0).address;
      const chainId = genesisFromSource(devnetGenesisSource(10)).chain_id;
      for (const nonce of [0n, 1n]) expect((await post(n.url, "/tx", toHex(transferTx(chainId, dev0, nonce, devAccount(1).address, 5n)))).status).toBe(200);
      const listed = (await get(n.url, "/devnet/accounts")).body["accounts"] as Array<Record<string, unknown>>;
      expect(listed[0]).toMatchObject({ name: "dev0", nonce: "0", pending: 2, next_nonce: "2" });
      expect(listed[1]).toMatchObject({ name: "dev1", nonce: "0", pending: 0, next_nonce: "0" });
    } finally {
      await n.close();
    }
  });

  it("the node's paths take a dev account's name only on a devnet that has it", async () => {
    const n = await startNode({ kind: "genesis", source: DEFAULT_GENESIS_SOURCE });
    try {
      expect((await get(n.url, "/devnet/accounts")).body["accounts"]).toEqual([]);
      const r = await get(n.url, "/account/dev0");
      expect([r.status, r.body["error"]]).toEqual([400, { code: "invalid_address", message: "dev0 is not a dev account of this chain (GET /devnet/accounts lists them)" }]);
    } finally {
      await n.close();
    }
  });
});
