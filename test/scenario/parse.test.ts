import { describe, expect, it } from "vitest";
import { parseScenario } from "../../src/scenario/parse.js";
import { canonicalJson } from "../../src/scenario/genesis.js";
import { resolveInstruction, type ResolveContext } from "../../src/scenario/resolve.js";
import { resolveStreamKey } from "../../src/scenario/refs.js";
import { ScenarioError } from "../../src/scenario/json.js";
import { codecs, decode, keyBatchReceiptDigest, keyStreamId, quoteDigest, signingKeyId, streamId } from "../../src/codec/index.js";
import { ed25519PublicKeyFromSeed, ed25519VerifyStrict } from "../../src/crypto/ed25519.js";
import { fromHex, toHex, utf8 } from "../../src/bytes.js";

const OWNER = "0x1111111111111111111111111111111111111111";
const PROVIDER = "0x2222222222222222222222222222222222222222";
const SEED = "0x" + "42".repeat(32);

function scenario(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    format: "cbqs-scenario/v1",
    name: "t",
    genesis: {
      chain_id: "7",
      timestamp: "2026-01-01T00:00:00Z",
      block_time_seconds: 2,
      governance: "0x00000000000000000000000000000000000000aa",
      params: { "cbqs.suspend_grace_blocks": "1000" },
      accounts: { [OWNER]: { balance: "1000" } },
    },
    blocks: [],
    ...extra,
  };
}

function errorOf(f: () => unknown): ScenarioError {
  try {
    f();
  } catch (err) {
    if (err instanceof ScenarioError) return err;
    throw err;
  }
  throw new Error("expected a ScenarioError");
}

describe("scenario parsing (scenario-format §1, §2)", () => {
  it("§2: genesis fields, block timestamps = genesis + height × block_time_seconds", () => {
    const s = parseScenario(scenario({ blocks: [{ height: "3" }, { height: 10, timestamp: "2026-01-01T00:01:00Z" }] }));
    expect(s.config.chain_id).toBe(7n);
    expect(s.config.timestamp).toBe(1767225600n);
    expect(s.config.params.get("cbqs.suspend_grace_blocks")).toBe(1000n);
    expect(s.config.accounts).toEqual([{ address: fromHex(OWNER), balance: 1000n }]);
    expect(s.blocks.map((b) => b.timestamp)).toEqual([1767225606n, 1767225660n]);
  });

  it("§3 (CIP-39): without genesis_source the identity bytes are the canonical JSON of genesis", () => {
    const doc = scenario();
    const s = parseScenario(doc);
    expect(new TextDecoder().decode(s.sourceBytes)).toBe(canonicalJson(doc.genesis as never));
    expect(canonicalJson({ b: 1, a: [{ d: "x", c: null }] })).toBe('{"a":[{"c":null,"d":"x"}],"b":1}');
    // key order and whitespace do not change the canonical form
    const g = doc.genesis as Record<string, unknown>;
    const reversed = Object.fromEntries(Object.keys(g).reverse().map((k) => [k, g[k]]));
    const reordered = parseScenario({ ...doc, genesis: reversed });
    expect(reordered.sourceBytes).toEqual(s.sourceBytes);
  });

  it("§3 (CIP-39): genesis_source bytes are used exactly, and the config is parsed from them", () => {
    const text = ' {"chain_id": "9", "timestamp": "0", "block_time_seconds": "1", "governance": "0x00000000000000000000000000000000000000aa"}\n';
    const s = parseScenario({ format: "cbqs-scenario/v1", genesis_source: text, blocks: [] });
    expect(s.sourceBytes).toEqual(utf8(text));
    expect(s.config.chain_id).toBe(9n);
    const e = errorOf(() => parseScenario({ format: "cbqs-scenario/v1", genesis_source: text, genesis: { chain_id: "8" } }));
    expect(e.path).toBe("$.genesis");
  });

  it("CIP-39 §3: a genesis_source with a repeated key is refused (one text, one chain: D-0014)", () => {
    const text = '{"chain_id": "9", "timestamp": "0", "block_time_seconds": "1", "governance": "0x00000000000000000000000000000000000000aa", "chain_id": "8"}';
    const e = errorOf(() => parseScenario({ format: "cbqs-scenario/v1", genesis_source: text, blocks: [] }));
    expect(e.path).toBe("$.genesis_source");
    expect(e.reason).toMatch(/\$\.chain_id: duplicate key/);
    for (const bad of ['\ufeff{"chain_id": "9"}', '{"chain_id": 9.0}', '{"chain_id": 9e0}']) {
      expect(errorOf(() => parseScenario({ format: "cbqs-scenario/v1", genesis_source: bad, blocks: [] })).path, bad).toBe("$.genesis_source");
    }
  });

  it("§1/§2: bad inputs name their JSON path", () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ format: "x" }, "$.format"],
      [scenario({ blocks: [{ height: "2" }, { height: "2" }] }), "$.blocks[1].height"],
      [scenario({ blocks: [{ height: "0" }] }), "$.blocks[0].height"],
      [scenario({ blocks: [{ height: 1, txs: [{ from: "0x11" }] }] }), "$.blocks[0].txs[0].from"],
      [scenario({ blocks: [{ height: 1, txs: [{ from: OWNER }] }] }), "$.blocks[0].txs[0]"],
      [scenario({ blocks: [{ height: 1, txs: [{ from: OWNER, transfer: { to: PROVIDER, amount: 1.5 } }] }] }), "$.blocks[0].txs[0].transfer.amount"],
      [scenario({ blocks: [{ height: 1, txs: [{ from: OWNER, transfer: { to: PROVIDER, amount: "18446744073709551616" } }] }] }), "$.blocks[0].txs[0].transfer.amount"],
      [scenario({ blocks: [{ height: 1, txs: [{ from: OWNER, gov: { Nope: {} } }] }] }), "$.blocks[0].txs[0].gov.Nope"],
      [scenario({ blocks: [{ height: 1, txs: [{ from: OWNER, raw: { opcode: "256", payload: "0x" } }] }] }), "$.blocks[0].txs[0].raw.opcode"],
      [scenario({ blocks: [{ height: 1, txs: [{ from: OWNER, raw: { opcode: "218", payload: "0x1" } }] }] }), "$.blocks[0].txs[0].raw.payload"],
      [scenario({ blocks: [{ height: 1, txs: [{ from: OWNER, raw: { opcode: "218", payload: "0x" }, expect: { status: "fine" } }] }] }), "$.blocks[0].txs[0].expect.status"],
      [scenario({ genesis: { ...(scenario().genesis as object), timestamp: "2026-02-30T00:00:00Z" } }), "$.genesis.timestamp"],
      [scenario({ blocks: [{ height: 1, txs: [{ from: OWNER, raw: { opcode: "218", payload: "0x" + "00".repeat(1_048_577) } }] }] }), "$.blocks[0].txs[0].raw.payload"],
      [scenario({ blocks: [{ height: 1, txs: [{ from: OWNER, gov: { SetParam: { name: "x".repeat(129), value: "1" } } }] }] }), "$.blocks[0].txs[0].gov.SetParam.name"],
    ];
    for (const [doc, path] of cases) expect(errorOf(() => parseScenario(doc)).path, JSON.stringify(doc)).toBe(path);
  });

  it("§2: a block timestamp earlier than genesis or its parent is refused at $.blocks[i].timestamp; equal is allowed", () => {
    const g = 1767225600;
    expect(errorOf(() => parseScenario(scenario({ blocks: [{ height: 1, timestamp: g - 1 }] }))).path).toBe("$.blocks[0].timestamp");
    expect(errorOf(() => parseScenario(scenario({ blocks: [{ height: 1, timestamp: g + 50 }, { height: 2, timestamp: g + 49 }] }))).path).toBe(
      "$.blocks[1].timestamp",
    );
    // a derived timestamp (genesis + 2 × 2) that falls behind an explicit earlier one
    const derived = errorOf(() => parseScenario(scenario({ blocks: [{ height: 1, timestamp: g + 50 }, { height: 2 }] })));
    expect(derived.path).toBe("$.blocks[1].timestamp");
    expect(derived.reason).toMatch(/derived 1767225604 .* earlier than the previous block's timestamp 1767225650/);
    const equal = parseScenario(scenario({ blocks: [{ height: 1, timestamp: g }, { height: 2, timestamp: g }, { height: 3 }] }));
    expect(equal.blocks.map((b) => b.timestamp)).toEqual([BigInt(g), BigInt(g), BigInt(g + 6)]);
  });

  it('§2: "blocks" is required; [] is a genesis-only chain', () => {
    const doc = scenario();
    delete doc["blocks"];
    expect(errorOf(() => parseScenario(doc)).path).toBe("$.blocks");
    expect(parseScenario(scenario({ blocks: [] })).blocks).toEqual([]);
  });

  it("§3: expect.error must name an engine error and cannot accompany status ok", () => {
    const tx = (expect: unknown) => scenario({ blocks: [{ height: 1, txs: [{ from: OWNER, raw: { opcode: "218", payload: "0x" }, expect }] }] });
    expect(errorOf(() => parseScenario(tx({ status: "rejected", error: "NoSuchError" }))).path).toBe("$.blocks[0].txs[0].expect.error");
    expect(errorOf(() => parseScenario(tx({ error: "toString" }))).path).toBe("$.blocks[0].txs[0].expect.error");
    const contradiction = errorOf(() => parseScenario(tx({ status: "ok", error: "InvalidEncoding" })));
    expect(contradiction.path).toBe("$.blocks[0].txs[0].expect.error");
    expect(contradiction.reason).toMatch(/contradicts "status": "ok"/);
    expect(parseScenario(tx({ status: "rejected", error: "InvalidEncoding" })).blocks[0]!.txs[0]!.expect).toEqual({ status: "rejected", error: "InvalidEncoding" });
  });

  it("§3: expect_state names only real record fields and live parameters: a typo is unusable input, not an expectation", () => {
    const state = (expect_state: unknown) => scenario({ blocks: [{ height: 1, expect_state }] });
    const stream = `owner:${OWNER}/nonce:1`;
    const cases: Array<[unknown, string, RegExp]> = [
      [{ streams: { [stream]: { statuss: "Closed" } } }, `$.blocks[0].expect_state.streams["${stream}"].statuss`, /unknown field \(expected one of: version, chain_instance_id, stream_id/],
      [{ providers: { [PROVIDER]: { live_asigned_streams: "1" } } }, `$.blocks[0].expect_state.providers["${PROVIDER}"].live_asigned_streams`, /unknown field/],
      [{ accounts: { [OWNER]: { balanc: "456" } } }, `$.blocks[0].expect_state.accounts["${OWNER}"].balanc`, /expected one of: balance, nonce/],
      [{ pause: { completed: "0" } }, "$.blocks[0].expect_state.pause.completed", /expected one of: completed_pause_blocks, active/],
      [{ params: { "cbqs.max_stream_per_owner": "5" } }, '$.blocks[0].expect_state.params["cbqs.max_stream_per_owner"]', /not a live parameter/],
      // Nested members are checked as deep as the record goes.
      [{ streams: { [stream]: { config: { retention_mss: "1" } } } }, `$.blocks[0].expect_state.streams["${stream}"].config.retention_mss`, /unknown field \(expected one of: retention_ms/],
      [{ streams: { [stream]: { pricing_basis: { ProviderQuote: { quote_digestt: "0x00" } } } } }, `$.blocks[0].expect_state.streams["${stream}"].pricing_basis.ProviderQuote.quote_digestt`, /expected one of: quote_digest/],
      [{ streams: { [stream]: { admin_key: { ed25519_sed: "0x00" } } } }, `$.blocks[0].expect_state.streams["${stream}"].admin_key.ed25519_sed`, /unknown field/],
      [{ streams: { "owner:0x11/nonce:1": { status: "Active" } } }, '$.blocks[0].expect_state.streams["owner:0x11/nonce:1"]', /stream key must be/],
      [{ pause: { active: { paused_at_blok: "1" } } }, "$.blocks[0].expect_state.pause.active.paused_at_blok", /expected one of: paused_at_block, expires_at_block/],
    ];
    for (const [expectState, path, reason] of cases) {
      const e = errorOf(() => parseScenario(state(expectState)));
      expect(e.path).toBe(path);
      expect(e.reason).toMatch(reason);
    }
    // The correctly spelled forms parse, null included ("no such record").
    const ok = { streams: { [stream]: { status: "Closed", config: { retention_ms: "1" }, admin_key: { ed25519_seed: SEED }, linked_stream_id: { owner: OWNER, owner_nonce: "2" }, pricing_basis: { ProviderQuote: { quote_digest: "0x" + "00".repeat(32) } } } }, providers: { [PROVIDER]: null }, accounts: { [OWNER]: { balance: "1" } }, pause: { active: null }, params: { "cbqs.max_streams_per_owner": "5" } };
    expect(() => parseScenario(state(ok))).not.toThrow();
  });

  it("§2: a block_time_seconds that overflows u64 from genesis is refused where it is given", () => {
    const huge = { ...(scenario().genesis as object), block_time_seconds: "18446744073709551615" };
    expect(errorOf(() => parseScenario(scenario({ genesis: huge, blocks: [{ height: 1 }] }))).path).toBe("$.genesis.block_time_seconds");
    const source = JSON.stringify(huge);
    expect(errorOf(() => parseScenario({ ...scenario(), genesis: undefined, genesis_source: source })).path).toBe("$.genesis_source.block_time_seconds");
    // a representable block_time_seconds with a height too far out is the height's fault
    const big = { ...(scenario().genesis as object), block_time_seconds: "9223372036854775807" };
    expect(errorOf(() => parseScenario(scenario({ genesis: big, blocks: [{ height: 3 }] }))).path).toBe("$.blocks[0].height");
  });

  it("§2: gov, transfer and raw kinds resolve to engine transactions", () => {
    const s = parseScenario(
      scenario({
        blocks: [
          {
            height: 1,
            txs: [
              { from: OWNER, gov: { SetParams: { "cbqs.rent.provider_bps": "8000", "cbqs.rent.platform_bps": 2000 } } },
              { from: OWNER, gov: { Pause: { actor: "0x0000000000000000000000000000000000000017", blocks: "5" } } },
              { from: OWNER, transfer: { to: PROVIDER, amount: "5" } },
              { from: OWNER, raw: { opcode: "218", payload: "0x01FF" } },
            ],
          },
        ],
      }),
    );
    const bodies = s.blocks[0]!.txs.map((t) => t.body);
    expect(bodies[0]).toEqual({ kind: "gov", action: { type: "SetParams", values: [{ name: "cbqs.rent.provider_bps", value: 8000n }, { name: "cbqs.rent.platform_bps", value: 2000n }] } });
    expect(bodies[1]).toEqual({ kind: "gov", action: { type: "Pause", actor: fromHex("0x0000000000000000000000000000000000000017"), blocks: 5n } });
    expect(bodies[2]).toEqual({ kind: "transfer", to: fromHex(PROVIDER), amount: 5n });
    expect(bodies[3]).toEqual({ kind: "system", opcode: 218, payload: Uint8Array.of(1, 0xff) });
  });
});

const INSTANCE = fromHex("0x" + "ab".repeat(32));
const ctx: ResolveContext = { chainId: 7n, chainInstanceId: INSTANCE, blockHashAt: (h) => (h === 4n ? fromHex("0x" + "cd".repeat(32)) : undefined) };
const CONFIG = {
  retention_ms: "1000", retained_bytes_limit: "1073741824", max_message_bytes: "1024", max_append_bytes_per_sec: "0",
  max_delivered_bytes_per_sec: "0", max_lanes: "1", idempotency_horizon_ms: "0", default_visibility_ms: "0",
  max_visibility_ms: "0", default_max_attempts: "1", fast_batch_max_ms: "0", fast_batch_max_records: "0",
};

describe("cbqs instruction resolution (scenario-format §1/§2, CIP-39 §4.1, §4.4, §9.3, §14)", () => {
  it("§4.1: stream references resolve to the derived main and key stream ids", () => {
    const main = streamId(7n, INSTANCE, fromHex(OWNER), 3n);
    const payload = resolveInstruction({ TopUpStream: { stream_id: { key_stream_of: { owner: OWNER, owner_nonce: "3" } }, amount: "9" } }, "$.x", ctx);
    const v = decode(codecs.CbqsInstructionV1, payload);
    expect(v).toEqual({ type: "TopUpStream", args: { stream_id: keyStreamId(main), amount: 9n } });
    expect(toHex(resolveStreamKey(`owner:${OWNER}/nonce:3`, "$", ctx))).toBe(toHex(main));
    expect(toHex(resolveStreamKey(`key_stream_of:owner:${OWNER}/nonce:3`, "$", ctx))).toBe(toHex(keyStreamId(main)));
  });

  it("§1: only stream-id fields take stream references; another Bytes32 field refuses one with its path", () => {
    const ref = { owner: OWNER, owner_nonce: "1" };
    const bad = errorOf(() => resolveInstruction({ UpdateProvider: { metadata_hash: ref } }, "$.x", ctx));
    expect(bad.path).toBe("$.x.UpdateProvider.metadata_hash");
    expect(bad.reason).toMatch(/expected a 0x-hex Bytes32/);
    // The same reference in a stream-id position resolves.
    const close = decode(codecs.CbqsInstructionV1, resolveInstruction({ CloseStream: { stream_id: ref } }, "$.x", ctx));
    expect(close).toEqual({ type: "CloseStream", args: { stream_id: streamId(7n, INSTANCE, fromHex(OWNER), 1n) } });
  });

  it("§4.4/§14: a quote with signer_seed gets the chain context, its signing_key_id and a valid signature over the digest", () => {
    const payload = resolveInstruction(
      {
        CreateStream: {
          owner_nonce: "3", initial_escrow: "0", admin_key: { ed25519_seed: SEED }, delivery_class: "Standard", encrypted: false,
          provider: PROVIDER, config: CONFIG,
          price_quote: {
            provider: PROVIDER, owner: OWNER, stream_id: { owner: OWNER, owner_nonce: 3 }, pricing_generation: "1", delivery_class: "Standard",
            retained_bytes: "1073741824", append_bytes_sec: "0", delivered_bytes_sec: "0", rate_per_block: "8000", valid_until_block: "100",
            signer_seed: SEED,
          },
        },
      },
      "$.x",
      ctx,
    );
    const v = decode(codecs.CbqsInstructionV1, payload);
    if (v.type !== "CreateStream" || v.args.price_quote === null) throw new Error("shape");
    const q = v.args.price_quote;
    const pub = ed25519PublicKeyFromSeed(fromHex(SEED));
    expect(q.context).toEqual({ version: 1, chain_id: 7n, chain_instance_id: INSTANCE });
    expect(q.signing_key_id).toEqual(signingKeyId({ algorithm: "Ed25519", key: pub }));
    expect(q.stream_id).toEqual(streamId(7n, INSTANCE, fromHex(OWNER), 3n));
    expect(ed25519VerifyStrict(pub, quoteDigest(q), q.signature)).toBe(true);
    expect(v.args.rotation_key).toBeNull();
  });

  it("§9.3: a key-batch receipt's served_at gets the chain instance and the emulator block hash", () => {
    const payload = resolveInstruction(
      {
        ActivateKeyGeneration: {
          bump_authorization_generation: false,
          receipt: {
            served_at: { height: "4" }, key_stream_id: { key_stream_of: { owner: OWNER, owner_nonce: 1 } }, main_stream_id: { owner: OWNER, owner_nonce: 1 },
            provider_epoch: "0", encryption_generation: "2", batch_digest: "0x" + "01".repeat(32), envelope_count: 1,
            envelope_root: "0x" + "02".repeat(32), first_sequence: "0", last_sequence: "1",
            previous_global_receipt: "0x" + "00".repeat(32), final_append_receipt: "0x" + "03".repeat(32), signer_seed: SEED,
          },
        },
      },
      "$.x",
      ctx,
    );
    const v = decode(codecs.CbqsInstructionV1, payload);
    if (v.type !== "ActivateKeyGeneration") throw new Error("shape");
    const r = v.args.receipt;
    expect(r.served_at).toEqual({ chain_instance_id: INSTANCE, height: 4n, block_hash: fromHex("0x" + "cd".repeat(32)) });
    expect(ed25519VerifyStrict(ed25519PublicKeyFromSeed(fromHex(SEED)), keyBatchReceiptDigest(r), r.signature)).toBe(true);
  });

  it("§2: missing signature without signer_seed, unknown served_at block and bad args name their path", () => {
    expect(errorOf(() => resolveInstruction({ TopUpStream: { stream_id: { owner: OWNER }, amount: "1" } }, "$.x", ctx)).path).toBe("$.x.TopUpStream.stream_id");
    expect(errorOf(() => resolveInstruction({ TopUpStream: { stream_id: "0x00", amount: "1" } }, "$.x", ctx)).path).toBe("$.x.TopUpStream.stream_id");
    const receipt = { served_at: { height: "5" }, signer_seed: SEED };
    expect(errorOf(() => resolveInstruction({ ActivateKeyGeneration: { receipt, bump_authorization_generation: false } }, "$.x", ctx)).path).toBe(
      "$.x.ActivateKeyGeneration.receipt.served_at.height",
    );
    const quote = { provider: PROVIDER, signing_key_id: "0x" + "00".repeat(32) };
    expect(errorOf(() => resolveInstruction({ UpdateStream: { price_quote: quote } }, "$.x", ctx)).path).toBe("$.x.UpdateStream.price_quote.signature");
  });
});
