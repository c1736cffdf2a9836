import { describe, expect, it } from "vitest";
import { concatBytes, utf8 } from "../../src/bytes.js";
import { keccak256 } from "../../src/crypto/hash.js";
import { Chain } from "../../src/engine/chain.js";
import { GenesisError } from "../../src/engine/errors.js";
import { schedulesKey, singletonKey, streamKey } from "../../src/engine/layout.js";
import { U64_MAX } from "../../src/engine/math.js";
import type { GenesisConfig } from "../../src/engine/inputs.js";
import { decodeStateValueAs, encodeStateValue } from "../../state/kv/value.js";
import { MemoryStateStore } from "../../state/store/store.js";
import { LIVE_SCALARS } from "../../src/params.js";
import { cbqs, genesisConfig, ix, OWNER, PROVIDER, snapshot, TestChain } from "./harness.js";

const genesisFails = (params: Record<string, bigint>, accounts?: Parameters<typeof genesisConfig>[1]) =>
  () => Chain.genesis(genesisConfig(params, accounts), utf8("g"), new MemoryStateStore());

describe("§3/§4/§18 genesis", () => {
  it("§3 chain_instance_id = keccak256(\"cowboy-chain-identity-v1:\" || source bytes), exact bytes", () => {
    const a = new TestChain(genesisConfig(), utf8("{\"a\":1}"));
    const b = new TestChain(genesisConfig(), utf8("{\"a\": 1}"));
    expect(a.chain.chainInstanceId).toEqual(keccak256(concatBytes(utf8("cowboy-chain-identity-v1:"), utf8("{\"a\":1}"))));
    expect(a.chain.chainInstanceId).not.toEqual(b.chain.chainInstanceId);
    expect(a.chain.genesisStateRoot).not.toEqual(b.chain.genesisStateRoot);
  });

  it("§4.5 the stored schedule record is exactly 162 canonical bytes; the 25 live scalars are stored", () => {
    const t = new TestChain();
    const rec = decodeStateValueAs(t.store.read(schedulesKey())!, "StorageSlot").bytes;
    expect(rec.length).toBe(162);
    expect([...t.chain.params().keys()]).toEqual(LIVE_SCALARS);
    expect(t.chain.params().get("cbqs.suspend_grace_blocks")).toBe(604_800n);
  });

  it("§18 genesis validation names the field: Maximum, bps guard, base-rate range, duplicate account, unknown parameter", () => {
    expect(genesisFails({ "cbqs.max_streams_per_owner": 16_385n })).toThrow(/cbqs.max_streams_per_owner/);
    expect(genesisFails({ "cbqs.rent.provider_bps": 9_500n })).toThrow(/10000/);
    expect(genesisFails({ "cbqs.base_rate.fast.retained_unit_bytes": 0n })).toThrow(GenesisError);
    expect(genesisFails({ "cbqs.base_rate.fast.retained_unit_bytes": 1_099_511_627_777n })).toThrow(/retained_unit_bytes/);
    expect(genesisFails({ "cbqs.nope": 1n })).toThrow(/unknown parameter/);
    expect(genesisFails({}, [[OWNER, 1n], [OWNER, 2n]])).toThrow(/listed twice/);
    expect(genesisFails({}, [[OWNER, 1n << 64n]])).toThrow(/u64/);
  });

  it("§4.5 base-rate overrides change the frozen schedule the governance base prices with", () => {
    const t = new TestChain(genesisConfig({ "cbqs.base_rate.standard.delivered_unit_rate_per_block": 100_000n }));
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    t.ok(cbqs(OWNER, ix.createStream()));
    expect(t.chain.stream(t.streamId())!.rate_per_block).toBe(67n + 13_300n + 100_000n);
  });

  it("§3/§4.1 a missing singleton or a record of another chain instance fails closed with no mutation", () => {
    const t = new TestChain();
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    t.ok(cbqs(OWNER, ix.createStream({ initial_escrow: 10n ** 9n })));
    // corrupt the stream record's chain_instance_id (byte 1..32 of the StreamRecordV1 encoding)
    const key = streamKey(t.streamId());
    const raw = decodeStateValueAs(t.store.read(key)!, "StorageSlot").bytes.slice();
    raw[1] = raw[1]! ^ 0xff;
    let b = t.store.beginBlock(3n);
    b.put(key, encodeStateValue({ kind: "StorageSlot", bytes: raw }));
    t.store.commitBlock(b);
    t.height = 3n;
    const before = snapshot(t);
    expect(t.tx(cbqs(OWNER, ix.settle(t.streamId()))).error!.name).toBe("ChainInstanceMismatch");
    expect(snapshot(t)).toEqual(before);
    b = t.store.beginBlock(10n);
    b.delete(singletonKey());
    t.store.commitBlock(b);
    t.height = 10n;
    expect(t.tx(cbqs(PROVIDER, ix.registerProvider())).error!.name).toBe("RegistryStateInvalid");
  });
});

// Every genesis refusal names the field and the bound, and each bound is checked on both sides:
// the largest (or smallest) valid value is accepted, the next one refused with its own message.
describe("§3/§5/§18 genesis validation: each refusal and each boundary", () => {
  const base = genesisConfig();
  const refusal = (over: Partial<GenesisConfig>): string | null => {
    try {
      Chain.genesis({ ...base, ...over }, utf8("g"), new MemoryStateStore());
      return null;
    } catch (e) {
      return e instanceof GenesisError ? e.message : `not a GenesisError: ${String(e)}`;
    }
  };
  const params = (entries: Record<string, bigint>) => ({ params: new Map(Object.entries(entries)) });
  const A = (n: number) => new Uint8Array(20).fill(n);

  it("chain_id is a u64", () => {
    expect(refusal({ chain_id: -1n })).toBe("chain_id -1 is not a u64");
    expect(refusal({ chain_id: U64_MAX + 1n })).toBe(`chain_id ${U64_MAX + 1n} is not a u64`);
    expect(refusal({ chain_id: U64_MAX })).toBeNull();
    expect(refusal({ chain_id: 0n })).toBeNull();
  });

  it("governance is a 20-byte address", () => {
    expect(refusal({ governance: new Uint8Array(19) })).toBe("governance must be a 20-byte address");
    expect(refusal({ governance: new Uint8Array(21) })).toBe("governance must be a 20-byte address");
  });

  it("parameters: unknown names, live scalars, and the other rows' [1, Maximum]", () => {
    expect(refusal(params({ "cbqs.nope": 1n }))).toBe("params: unknown parameter cbqs.nope");
    expect(refusal(params({ "cbqs.max_streams_per_owner": 16_385n }))).toBe("params: cbqs.max_streams_per_owner = 16385 is outside [1, 16384] (§18)");
    expect(refusal(params({ "cbqs.max_streams_per_owner": 16_384n }))).toBeNull();
    expect(refusal(params({ "cbqs.max_wire_frame_bytes": 5_242_881n }))).toBe("params: cbqs.max_wire_frame_bytes = 5242881 is outside [1, 5242880] (§18)");
    expect(refusal(params({ "cbqs.max_wire_frame_bytes": 0n }))).toBe("params: cbqs.max_wire_frame_bytes = 0 is outside [1, 5242880] (§18)");
    expect(refusal(params({ "cbqs.max_wire_frame_bytes": 5_242_880n }))).toBeNull();
    expect(refusal(params({ "cbqs.max_wire_frame_bytes": 1n }))).toBeNull();
    expect(refusal(params({ "cbqs.base_rate.fast.retained_unit_bytes": 0n }))).toBe(
      "params: cbqs.base_rate.fast.retained_unit_bytes = 0 is outside [1, 1099511627776] (§18)",
    );
    expect(refusal(params({ "cbqs.rent.provider_bps": 9_500n }))).toBe(
      "params: cbqs.rent.provider_bps + cbqs.rent.platform_bps = 10500, must be 10000 (§6.1)",
    );
    expect(refusal(params({ "cbqs.rent.provider_bps": 9_500n, "cbqs.rent.platform_bps": 500n }))).toBeNull();
  });

  it("accounts: 20-byte addresses, listed once, u64 balances, and a total supply that fits u64", () => {
    expect(refusal({ accounts: [{ address: A(1), balance: 1n }, { address: new Uint8Array(19), balance: 1n }] })).toBe("accounts[1]: address must be 20 bytes");
    expect(refusal({ accounts: [{ address: A(1), balance: 1n }, { address: A(1), balance: 2n }] })).toBe(
      `accounts[1]: 0x${"01".repeat(20)} is listed twice`,
    );
    expect(refusal({ accounts: [{ address: A(1), balance: -1n }] })).toBe("accounts[0]: balance -1 is not a u64");
    expect(refusal({ accounts: [{ address: A(1), balance: U64_MAX + 1n }] })).toBe(`accounts[0]: balance ${U64_MAX + 1n} is not a u64`);
    expect(refusal({ accounts: [{ address: A(1), balance: U64_MAX }] })).toBeNull();
    const half = U64_MAX / 2n;
    expect(refusal({ accounts: [{ address: A(1), balance: half + 1n }, { address: A(2), balance: half + 1n }] })).toBe("accounts: total balance exceeds u64");
    expect(refusal({ accounts: [{ address: A(1), balance: half + 1n }, { address: A(2), balance: half }] })).toBeNull(); // exactly u64::MAX
  });

  it("cycle_price and cell_price are u64", () => {
    for (const what of ["cycle_price", "cell_price"] as const) {
      expect(refusal({ [what]: -1n })).toBe(`${what} -1 is not a u64`);
      expect(refusal({ [what]: U64_MAX + 1n })).toBe(`${what} ${U64_MAX + 1n} is not a u64`);
      expect(refusal({ [what]: U64_MAX })).toBeNull();
    }
  });
});
