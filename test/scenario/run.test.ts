import { describe, expect, it } from "vitest";
import { parseScenario } from "../../src/scenario/parse.js";
import { runScenario } from "../../src/scenario/run.js";
import { decodeEnvelope, txHash } from "../../src/chain/envelope.js";
import { logsRoot, receiptRoot, txRoot } from "../../state/roots/roots.js";
import { keccak256 } from "../../src/crypto/hash.js";
import { toHex, utf8 } from "../../src/bytes.js";
import { chainInstanceId } from "../../src/codec/index.js";
import { GenesisError } from "../../src/engine/errors.js";
import { GAS_VECTORS_SHA256 } from "../../src/gas/pinned.js";

const GOV = "0x00000000000000000000000000000000000000aa";
const P1 = "0x2222222222222222222222222222222222222222";
const O1 = "0x1111111111111111111111111111111111111111";
const seed = (b: string) => ({ ed25519_seed: "0x" + b.repeat(32) });
const register = {
  RegisterProvider: {
    signing_key: seed("51"),
    endpoints: [{ transport: "Https", uri: "https://provider.example" }],
    quote_key: seed("52"),
    base_rate_admission: { accepts_new: true, max_active_streams: "1", max_total_retained_bytes: "1", max_total_append_bytes_per_sec: "1", max_total_delivered_bytes_per_sec: "1" },
    metadata_hash: "0x" + "00".repeat(32),
  },
};

function doc(blocks: unknown[], genesisExtra: Record<string, unknown> = {}) {
  return {
    format: "cbqs-scenario/v1",
    name: "run-test",
    genesis: { chain_id: "7", timestamp: "1000", block_time_seconds: "1", governance: GOV, accounts: { [P1]: { balance: "100" } }, ...genesisExtra },
    blocks,
  };
}

describe("run document (scenario-format §4)", () => {
  const blocks = [
    {
      height: "1",
      txs: [
        { from: P1, cbqs: { SetProviderStatus: { status: "Draining" } } }, // rejected: no provider yet
        { from: P1, cbqs: register },
        { from: P1, cbqs: register }, // rejected: already registered
        { from: P1, transfer: { to: O1, amount: "40" } },
      ],
    },
    { height: "1000", txs: [] },
  ];
  const { document, failure, blocks: sealed } = runScenario(parseScenario(doc(blocks)));

  it("§4: top-level fields, chain_instance_id from the canonical genesis bytes", () => {
    expect(failure).toBeNull();
    expect(Object.keys(document)).toEqual(["format", "chain_instance_id", "genesis_state_root", "blocks", "state"]);
    expect(document.format).toBe("cbqs-run/v1");
    const s = parseScenario(doc(blocks));
    expect(document.chain_instance_id).toBe(toHex(chainInstanceId(s.sourceBytes)));
    expect(document.genesis_state_root).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it("§2/§4: a gap is not executed block by block; every block has its fields, roots and the pinned gas digest", () => {
    expect(document.blocks.map((b) => b.height)).toEqual(["1", "1000"]);
    for (const b of document.blocks) {
      expect(Object.keys(b)).toEqual(["height", "effective_rent_height", "state_root", "tx_root", "receipt_root", "logs_root", "gas_vectors_sha256", "receipts"]);
      expect(b.gas_vectors_sha256).toBe(GAS_VECTORS_SHA256);
    }
    expect(document.blocks[1]!.effective_rent_height).toBe("1000");
    expect(document.blocks[1]!.receipt_root).toBe(toHex(keccak256(utf8("empty_receipts"))));
    expect(document.blocks[1]!.tx_root).toBe(toHex(txRoot([])));
  });

  it("CIP-4 §5.2: tx_root and tx_hash commit to the envelopes; nonces advance on every included transaction, accepted or rejected", () => {
    const b = document.blocks[0]!;
    const envs = sealed[0]!.envelopes;
    expect(b.tx_root).toBe(toHex(txRoot(envs)));
    expect(b.receipts.map((r) => r.tx_hash)).toEqual(envs.map((e) => toHex(txHash(e))));
    expect(envs.map((e) => decodeEnvelope(e).nonce)).toEqual([0n, 1n, 2n, 3n]);
    expect(new Set(b.receipts.map((r) => r.tx_hash)).size).toBe(4);
    expect(document.state["accounts"]).toMatchObject({ [P1]: { balance: "60", nonce: "4" }, [O1]: { balance: "40", nonce: "0" } });
  });

  it("§4: receipts carry index, status, typed error, events with emitter 0x17; rejections carry no events", () => {
    const r = document.blocks[0]!.receipts;
    expect(r.map((x) => [x.index, x.status, x.error?.name ?? null])).toEqual([
      ["0", "rejected", "ProviderNotFound"],
      ["1", "ok", null],
      ["2", "rejected", "ProviderAlreadyRegistered"],
      ["3", "ok", null],
    ]);
    expect(r[0]!.events).toEqual([]);
    expect(r[0]!.error!.code).toMatch(/^[0-9]+$/);
    expect(r[1]!.events).toEqual([{ emitter: "0x0000000000000000000000000000000000000017", topic: "cbqs.provider.registered", payload: P1 }]);
    expect(document.blocks[0]!.logs_root).toBe(
      toHex(logsRoot([{ emitter: new Uint8Array(20).fill(0).map((_, i) => (i === 19 ? 0x17 : 0)), topic: "cbqs.provider.registered", payload: Uint8Array.from(Buffer.from(P1.slice(2), "hex")) }])),
    );
    expect(document.blocks[0]!.receipt_root).not.toBe(toHex(receiptRoot([])));
  });

  it("§4: final state lists providers, nonzero accounts, pause and the 25 live params", () => {
    const state = document.state as Record<string, Record<string, unknown>>;
    expect(Object.keys(state)).toEqual(["streams", "providers", "accounts", "pause", "params"]);
    expect(Object.keys(state["providers"]!)).toEqual([P1]);
    expect(state["pause"]).toEqual({ completed_pause_blocks: "0", active: null });
    expect(Object.keys(state["params"]!)).toHaveLength(25);
    expect(state["params"]!["cbqs.max_streams_per_owner"]).toBe("1024");
  });

  it("scenario-format §3: the first failed expectation stops the run with its path, expected and actual", () => {
    const r = runScenario(
      parseScenario(
        doc([
          { height: "1", txs: [{ from: P1, cbqs: register, expect: { status: "ok", events: ["cbqs.provider.registered"] } }] },
          { height: "2", txs: [{ from: P1, cbqs: register, expect: { status: "ok" } }] },
          { height: "3", txs: [] },
        ]),
      ),
    );
    expect(r.failure?.mismatch.path).toBe("$.blocks[1].txs[0].expect.status");
    expect(r.failure?.mismatch.expected).toBe("ok");
    expect(String(r.failure?.mismatch.actual)).toMatch(/^rejected \(ProviderAlreadyRegistered: /);
    expect(r.document.blocks).toHaveLength(2);
    expect(r.document.failure?.path).toBe("$.blocks[1].txs[0].expect.status");
    const s = runScenario(parseScenario(doc([{ height: "1", txs: [], expect_state: { accounts: { [P1]: { balance: 99 } } } }])));
    expect(s.failure?.mismatch).toEqual({ path: `$.blocks[0].expect_state.accounts["${P1}"].balance`, expected: 99, actual: "100" });
  });

  it("§2 (scenario-format): with nonzero cycle_price/cell_price the sender pays cycles × price + cells × price for an accepted transaction", () => {
    const r = runScenario(parseScenario(doc([{ height: "1", txs: [{ from: P1, cbqs: register }] }], { cycle_price: "3", cell_price: "5", accounts: { [P1]: { balance: "1000000" } } })));
    const receipt = r.document.blocks[0]!.receipts[0]!;
    expect(receipt.status).toBe("ok");
    const fee = 3n * BigInt(receipt.cycles) + 5n * BigInt(receipt.cells);
    expect(fee > 0n).toBe(true);
    const accounts = r.document.state["accounts"] as Record<string, { balance: string }>;
    expect(BigInt(accounts[P1]!.balance)).toBe(1_000_000n - fee);
  });

  it("a transaction no block can contain (a keyless sender, a sender who cannot pay the fee at the reservation) is an error naming its path", () => {
    const keyless = doc([{ height: "1", txs: [{ from: P1, transfer: { to: O1, amount: "1" } }, { from: "0x0000000000000000000000000000000000000017", transfer: { to: O1, amount: "1" } }] }]);
    expect(() => runScenario(parseScenario(keyless))).toThrow(
      expect.objectContaining({ path: "$.blocks[0].txs[1]", message: expect.stringContaining("no block can contain this transaction: 0x0000000000000000000000000000000000000017 is a keyless system account") }),
    );
    const poor = doc([{ height: "1", txs: [{ from: P1, cbqs: register }] }], { cycle_price: "1" });
    expect(() => runScenario(parseScenario(poor))).toThrow(
      expect.objectContaining({ path: "$.blocks[0].txs[0]", message: expect.stringMatching(/no block can contain this transaction: .* holds 100, less than the fee at the reservation \d+ of RegisterProvider$/) }),
    );
  });

  it("§3: with genesis_source the chain instance is the fingerprint of exactly those bytes", () => {
    const text = `{ "chain_id": "7", "timestamp": "1000", "block_time_seconds": "1",\n  "governance": "${GOV}" }\n`;
    const r = runScenario(parseScenario({ format: "cbqs-scenario/v1", genesis_source: text, blocks: [{ height: "1", txs: [{ from: P1, cbqs: register }] }] }));
    expect(r.document.chain_instance_id).toBe(toHex(chainInstanceId(utf8(text))));
    expect(r.document.chain_instance_id).not.toBe(runScenario(parseScenario(doc([]))).document.chain_instance_id);
    const providers = r.document.state["providers"] as Record<string, { chain_instance_id: string }>;
    expect(providers[P1]!.chain_instance_id).toBe(r.document.chain_instance_id);
  });

  it("§2 (scenario-format): an invalid genesis parameter is refused by the engine's §18 validation", () => {
    expect(() => runScenario(parseScenario(doc([], { params: { "cbqs.rent.provider_bps": "9500" } })))).toThrow(GenesisError);
    expect(() => runScenario(parseScenario(doc([], { params: { "cbqs.max_streams_per_owner": "16385" } })))).toThrow(GenesisError);
  });
});
