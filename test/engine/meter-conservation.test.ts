import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { EngineDefect } from "../../src/engine/errors.js";
import { COSTS, hashWords, Meter, RESERVATIONS } from "../../src/engine/meter.js";
import { verifyStrictReference } from "../../src/engine/fast-paths.js";
import { effectiveRentHeight } from "../../src/engine/pause.js";
import type { CbqsInstructionV1 } from "../../src/codec/types.js";
import { keyStreamId } from "../../src/codec/derive.js";
import { toHex } from "../../src/bytes.js";
import { encodeEnvelope } from "../../src/chain/envelope.js";
import { encode } from "../../src/codec/core.js";
import * as S from "../../src/codec/schema.js";
import { accountKey, REGISTRY_ADDRESS, ZERO_ADDRESS } from "../../src/engine/layout.js";
import { CHAIN_ID } from "../../src/gas/builder.js";
import { transition, type T8nEnv } from "../../src/harness/t8n.js";
import { cbqs, genesisConfig, GOV, gov, ix, OTHER, OWNER, PROVIDER, rawSnapshot, RICH, standardConfig, STANDARD_ONE_UNIT_RATE, TestChain, transfer } from "./harness.js";

const R = STANDARD_ONE_UNIT_RATE;

describe("§18.1 metering", () => {
  it("§18.1 hash charging is max(1, ceil(len/32)) words", () => {
    expect([hashWords(0), hashWords(1), hashWords(32), hashWords(33), hashWords(187)]).toEqual([1n, 1n, 1n, 2n, 6n]);
  });

  it("§18.1 exceeding a reservation is an EngineDefect, not a rejection", () => {
    const m = new Meter("ActivateKeyGeneration", 10, verifyStrictReference);
    const read = { op: "read", key: new Uint8Array(54), value: undefined } as const;
    for (let i = 0; i < RESERVATIONS.ActivateKeyGeneration.reads; i++) m.observe(read);
    expect(() => m.observe(read)).toThrow(EngineDefect);
  });

  it("§18.1 cycles = decode + reads + writes + hashes + signatures; cells = bytes written + event bytes", () => {
    const t = new TestChain();
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    const o = t.ok(cbqs(OWNER, ix.createStream({ initial_escrow: 1n, price_quote: t.quote() })));
    // quote path: stream-id hash, signing-key-id hash, quote digest; one signature
    expect(o.cycles > COSTS.ed25519VerifyCycles + BigInt(o.reads) * COSTS.readCycles + BigInt(o.writes) * COSTS.writeCycles).toBe(true);
    expect(o.cells > 0n).toBe(true);
  });

  it("§18.1 the heaviest path of every stream instruction fits its reservation (pinned canonical counts)", () => {
    const t = new TestChain(genesisConfig({ "cbqs.suspend_grace_blocks": 5n }));
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    const created = t.ok(cbqs(OWNER, ix.createStream({ encrypted: true, initial_escrow: 3n * R })));
    expect([created.reads, created.writes]).toEqual([34, 6]);
    const id = t.streamId();
    const topUp = t.ok(cbqs(OTHER, ix.topUp(id, R)), 4n);
    expect([topUp.reads, topUp.writes]).toEqual([33, 5]);
    const update: CbqsInstructionV1 = {
      type: "UpdateStream",
      args: { stream_id: id, config: standardConfig({ retained_bytes_limit: 2n << 30n }), admin_key: null, rotation_key: { type: "Keep" }, price_quote: null, bump_authorization_generation: true },
    };
    const upd = t.ok(cbqs(OWNER, update), 5n);
    expect([upd.reads, upd.writes]).toEqual([34, 6]);
    t.ok(cbqs(OTHER, ix.settle(id)), 40n); // suspends
    const expiry = t.ok(cbqs(OTHER, ix.settle(id)), 60n);
    expect(expiry.events.map((e) => e.topic)).toEqual(["cbqs.stream.data_expired"]);
    expect(expiry.reads).toBeLessThanOrEqual(33);
    const t3 = new TestChain(genesisConfig({ "cbqs.suspend_grace_blocks": 5n }));
    t3.ok(cbqs(PROVIDER, ix.registerProvider()));
    t3.ok(cbqs(OWNER, ix.createStream({ encrypted: true, initial_escrow: 3n * R + 7n })));
    const funded = t3.ok(cbqs(OTHER, ix.settle(t3.streamId())), 3n);
    expect([funded.reads, funded.writes]).toEqual([32, 5]);
    t3.ok(cbqs(OTHER, ix.settle(t3.streamId())), 20n);
    const expired = t3.ok(cbqs(OTHER, ix.settle(t3.streamId())), 30n);
    expect([expired.reads, expired.writes]).toEqual([33, 6]);
    const t2 = new TestChain();
    t2.ok(cbqs(PROVIDER, ix.registerProvider()));
    t2.ok(cbqs(OWNER, ix.createStream({ encrypted: true, initial_escrow: 100n * R })));
    const close = t2.ok(cbqs(OWNER, ix.close(t2.streamId())), 10n);
    expect([close.reads, close.writes]).toEqual([34, 7]);
  });
});

/** Conservation (§5 custody): total supply is constant and custody equals the sum of live escrow. */
describe("§5 custody and conservation (fast-check)", () => {
  const accounts = [OWNER, OTHER, PROVIDER];
  const op = fc.oneof(
    fc.record({ kind: fc.constant("create" as const), nonce: fc.bigInt({ min: 0n, max: 3n }), escrow: fc.bigInt({ min: 0n, max: 50n }), encrypted: fc.boolean() }),
    fc.record({ kind: fc.constant("topup" as const), nonce: fc.bigInt({ min: 0n, max: 3n }), amount: fc.bigInt({ min: 0n, max: 50n }), from: fc.nat(2) }),
    fc.record({ kind: fc.constant("settle" as const), nonce: fc.bigInt({ min: 0n, max: 3n }) }),
    fc.record({ kind: fc.constant("close" as const), nonce: fc.bigInt({ min: 0n, max: 3n }) }),
    fc.record({ kind: fc.constant("status" as const), draining: fc.boolean() }),
    fc.record({ kind: fc.constant("bps" as const), provider: fc.bigInt({ min: 0n, max: 10_000n }) }),
    fc.record({ kind: fc.constant("update" as const), nonce: fc.bigInt({ min: 0n, max: 3n }), units: fc.bigInt({ min: 0n, max: 3n }) }),
    fc.record({ kind: fc.constant("pause" as const), blocks: fc.bigInt({ min: 1n, max: 10n }), unpause: fc.boolean() }),
    fc.record({ kind: fc.constant("activate" as const), nonce: fc.bigInt({ min: 0n, max: 3n }), generation: fc.bigInt({ min: 1n, max: 2n }) }),
  );

  it("§5/§6.1 every accepted or rejected sequence conserves native CBY; custody backs exactly the live escrow", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(op, fc.bigInt({ min: 1n, max: 20n })), { maxLength: 25 }), (ops) => {
        const t = new TestChain(genesisConfig({ "cbqs.suspend_grace_blocks": 10n }));
        t.ok(cbqs(PROVIDER, ix.registerProvider()));
        const supply = () => t.chain.accounts().reduce((s, a) => s + a.balance, 0n);
        const initial = supply();
        let lastEffective = 0n;
        for (const [o, gap] of ops) {
          const id = "nonce" in o ? t.streamId(OWNER, o.nonce) : new Uint8Array(32);
          const h = t.height + gap;
          switch (o.kind) {
            case "create":
              t.tx(cbqs(OWNER, ix.createStream({ owner_nonce: o.nonce, initial_escrow: o.escrow * R, encrypted: o.encrypted })), h);
              break;
            case "topup":
              t.tx(cbqs(accounts[o.from]!, ix.topUp(id, o.amount * R)), h);
              break;
            case "settle":
              t.tx(cbqs(OTHER, ix.settle(id)), h);
              break;
            case "close":
              t.tx(cbqs(OWNER, ix.close(id)), h);
              break;
            case "status":
              t.tx(cbqs(PROVIDER, { type: "SetProviderStatus", args: { status: o.draining ? "Draining" : "Active" } }), h);
              break;
            case "update":
              t.tx(cbqs(OWNER, {
                type: "UpdateStream",
                args: { stream_id: id, config: standardConfig({ retained_bytes_limit: o.units << 30n }), admin_key: null, rotation_key: { type: "Keep" }, price_quote: null, bump_authorization_generation: false },
              }), h);
              break;
            case "pause":
              t.tx(gov(o.unpause ? { type: "Unpause", actor: REGISTRY_ADDRESS } : { type: "Pause", actor: REGISTRY_ADDRESS, blocks: o.blocks }), h);
              break;
            case "activate": {
              t.height = h - 1n;
              const receipt = t.receipt({ main_stream_id: id, key_stream_id: keyStreamId(id), encryption_generation: o.generation });
              t.tx(cbqs(OWNER, { type: "ActivateKeyGeneration", args: { receipt, bump_authorization_generation: false } }), h);
              break;
            }
            case "bps":
              t.tx(gov({ type: "SetParams", values: [{ name: "cbqs.rent.provider_bps", value: o.provider }, { name: "cbqs.rent.platform_bps", value: 10_000n - o.provider }] }), h);
              break;
          }
          expect(supply()).toBe(initial);
          // pause accounting: the effective rent height never decreases and never exceeds H
          const effective = effectiveRentHeight(t.chain.pause(), t.height);
          expect(effective >= lastEffective && effective <= t.height).toBe(true);
          lastEffective = effective;
          const streams = t.chain.streams();
          const escrow = streams.reduce((s, r) => s + r.escrow_balance, 0n);
          expect(t.chain.account(REGISTRY_ADDRESS).balance).toBe(escrow);
          const live = streams.filter((r) => r.purpose === "Main" && (r.status === "Active" || r.status === "Suspended")).length;
          const p = t.chain.provider(PROVIDER)!;
          expect(p.live_assigned_streams).toBe(BigInt(live));
          const reserving = streams.filter((r) => r.purpose === "Main" && (r.status === "Active" || r.status === "Suspended") && r.pricing_basis.type === "GovernanceBase");
          expect(p.base_rate_reserved.reserved_streams).toBe(BigInt(reserving.length));
          expect(p.base_rate_reserved.retained_bytes).toBe(reserving.reduce((sum, r) => sum + r.config.retained_bytes_limit, 0n));
          for (const r of streams) if (r.status === "Closed" || r.status === "DataExpired") expect(r.escrow_balance).toBe(0n);
        }
      }),
      { numRuns: 40 },
    );
  });

  it("native transfer is checked u64 and increments the sender's nonce whether accepted or rejected", () => {
    const t = new TestChain();
    t.ok(transfer(OWNER, OTHER, 5n));
    expect(t.chain.account(OWNER)).toEqual({ nonce: 1n, balance: RICH - 5n });
    expect(t.tx(transfer(OWNER, OTHER, RICH)).error!.name).toBe("InsufficientBalance");
    expect(t.chain.account(OWNER)).toEqual({ nonce: 2n, balance: RICH - 5n });
    expect(t.chain.account(OTHER)).toEqual({ nonce: 0n, balance: RICH + 5n });
  });
});

/** Every committed key and value, keyed by hex key. */
const stateMap = (t: TestChain) => new Map([...t.store.entries()].map(([k, v]) => [toHex(k), toHex(v)]));

/** The keys whose value differs (or that appeared or vanished) between two states. */
function changedKeys(before: Map<string, string>, after: Map<string, string>): string[] {
  const keys = new Set([...before.keys(), ...after.keys()]);
  return [...keys].filter((k) => before.get(k) !== after.get(k)).sort();
}

describe("included rejected transactions use their nonce and pay their fee", () => {
  const priced = () => new TestChain({ ...genesisConfig({ "cbqs.suspend_grace_blocks": 5n }), cycle_price: 3n, cell_price: 5n });

  it("a rejected CBQS instruction advances the sender's nonce and pays its charged fee; registry, linked streams and other balances unchanged", () => {
    const t = priced();
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    t.ok(cbqs(OWNER, ix.createStream({ encrypted: true, initial_escrow: 10n * R })));
    const id = t.streamId();
    expect(t.chain.stream(t.keyStreamId())).not.toBeNull();
    const before = stateMap(t);
    const sender = t.chain.account(OTHER);
    const burned = t.balance(ZERO_ADDRESS);
    // Another account closing the owner's encrypted stream: rejected by the handler after its reads.
    const o = t.tx(cbqs(OTHER, ix.close(id)));
    expect(o.status).toBe("rejected");
    expect(o.error!.name).toBe("Unauthorized");
    // §18.1: rejected ⇒ the full reservation (CloseStream 34 reads, 9 writes) plus the decode surcharge, no cells.
    const payload = BigInt(encode(S.CbqsInstructionV1, ix.close(id)).length);
    expect(o.cycles).toBe(payload * COSTS.decodeCyclesPerPayloadByte + 34n * COSTS.readCycles + 9n * COSTS.writeCycles);
    expect(o.cells).toBe(0n);
    const fee = o.cycles * 3n;
    expect(t.chain.account(OTHER)).toEqual({ nonce: sender.nonce + 1n, balance: sender.balance - fee });
    expect(t.balance(ZERO_ADDRESS)).toBe(burned + fee);
    // Every other key — stream, linked key stream, provider, custody, owner — is byte-identical.
    expect(changedKeys(before, stateMap(t))).toEqual([toHex(accountKey(ZERO_ADDRESS)), toHex(accountKey(OTHER))].sort());
  });

  it("a replayed envelope of a rejected transaction is refused (its nonce is used)", () => {
    const t = new TestChain();
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    const env: T8nEnv = { height: t.height + 1n, timestamp: t.height + 1n, chain_id: CHAIN_ID, chain_instance_id: t.chain.chainInstanceId, governance: GOV, cycle_price: 0n, cell_price: 0n, parent_hash: null };
    const raw = encodeEnvelope({ chain_id: CHAIN_ID, nonce: t.chain.account(OWNER).nonce, tx: cbqs(OWNER, ix.createStream({ initial_escrow: 1n << 62n })) });
    const first = transition(t.store.entries(), [raw], env);
    expect((first.result["receipts"] as Array<{ status: string }>).map((r) => r.status)).toEqual(["rejected"]);
    expect(first.result["rejected"]).toEqual([]);
    // Later, when it would succeed (the owner is funded enough either way), the same signed bytes are stale.
    const again = transition(first.store.entries(), [raw], { ...env, height: env.height + 1n, timestamp: env.timestamp + 1n });
    expect(again.result["receipts"]).toEqual([]);
    expect(again.result["rejected"]).toEqual([{ index: "0", error: "nonce 0 is not the sender's account nonce 1" }]);
  });

  it("a sender who cannot pay the reservation fee is not included", () => {
    const t = new TestChain({ ...genesisConfig({}, [[PROVIDER, 10n], [OWNER, RICH]]), cycle_price: 1n, cell_price: 1n });
    const before = rawSnapshot(t);
    const block = t.block([cbqs(PROVIDER, ix.registerProvider()), transfer(OWNER, OTHER, 1n)]);
    expect(block.outcomes[0]).toMatchObject({ status: "excluded", events: [], cycles: 0n, cells: 0n });
    expect(block.outcomes[0]!.error!.message).toMatch(/holds 10, less than the fee at the reservation 570 of RegisterProvider$/);
    expect(block.outcomes[1]!.status).toBe("ok");
    // Not even the nonce moved: only the transfer changed state.
    expect(t.chain.account(PROVIDER)).toEqual({ nonce: 0n, balance: 10n });
    expect(rawSnapshot(t)).not.toEqual(before);
    // t8n leaves it out, like a wrong nonce, and a block cannot carry it.
    const env: T8nEnv = { height: t.height + 1n, timestamp: t.height + 1n, chain_id: CHAIN_ID, chain_instance_id: t.chain.chainInstanceId, governance: GOV, cycle_price: 1n, cell_price: 1n, parent_hash: null };
    const raw = encodeEnvelope({ chain_id: CHAIN_ID, nonce: 0n, tx: cbqs(PROVIDER, ix.registerProvider()) });
    const run = transition(t.store.entries(), [raw], env);
    expect(run.result["receipts"]).toEqual([]);
    expect(run.result["rejected"]).toEqual([{ index: "0", error: `${toHex(PROVIDER)} holds 10, less than the fee at the reservation 570 of RegisterProvider` }]);
  });
});

describe("rejections before the meter exists pay nothing, at nonzero prices too", () => {
  it("a pre-meter rejection (failed transfer, rejected governance action, UnknownOpcode, RegistryPaused, undecodable payload) from an unfunded never-seen sender is included: nonce 1, balance 0, fee 0", () => {
    const t = new TestChain({ ...genesisConfig(), cycle_price: 7n, cell_price: 11n });
    const fresh = (byte: number) => new Uint8Array(20).fill(byte);
    const payload = encode(S.CbqsInstructionV1, ix.registerProvider());
    const cases: Array<[Uint8Array, Parameters<TestChain["tx"]>[0], string]> = [
      [fresh(0x61), transfer(fresh(0x61), OTHER, 1n), "InsufficientBalance"],
      [fresh(0x62), gov({ type: "Unpause", actor: REGISTRY_ADDRESS }, fresh(0x62)), "Unauthorized"],
      [fresh(0x63), { from: fresh(0x63), body: { kind: "system", opcode: 217, payload } }, "UnknownOpcode"],
      [fresh(0x64), { from: fresh(0x64), body: { kind: "system", opcode: 218, payload: payload.subarray(0, 5) } }, "undecodable"],
    ];
    const check = (from: Uint8Array, tx: Parameters<TestChain["tx"]>[0], name: string) => {
      const burned = t.balance(ZERO_ADDRESS);
      const o = t.tx(tx);
      expect(o.status, name).toBe("rejected");
      if (name !== "undecodable") expect(o.error!.name, name).toBe(name);
      expect([o.cycles, o.cells], name).toEqual([0n, 0n]);
      // Included: the nonce step is written (a new account record), and nothing is paid.
      expect(t.chain.account(from), name).toEqual({ nonce: 1n, balance: 0n });
      expect(t.balance(ZERO_ADDRESS), name).toBe(burned);
    };
    for (const [from, tx, name] of cases) check(from, tx, name);
    // The CIP-12 breaker covering 0x17 rejects before the meter exists as well.
    t.ok(gov({ type: "Pause", actor: REGISTRY_ADDRESS, blocks: 5n }));
    check(fresh(0x65), cbqs(fresh(0x65), ix.registerProvider()), "RegistryPaused");
  });
});

describe("§18.1 hash and signature accounting", () => {
  it("§18.1 a quoted CreateStream charges stream-id (85), signing-key-id (55) and quote-digest preimages and one signature", () => {
    const t = new TestChain();
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    const o = t.ok(cbqs(OWNER, ix.createStream({ price_quote: t.quote() })));
    expect(o.hashPreimageLengths.slice(0, 2)).toEqual([85, 55]);
    expect(o.hashPreimageLengths).toHaveLength(3);
    expect(o.signatures).toBe(1);
    const base = t.ok(cbqs(OWNER, ix.createStream({ owner_nonce: 1n, encrypted: true })));
    // stream id, key stream id (53), schedule digest (187); no signature
    expect(base.hashPreimageLengths).toEqual([85, 53, 187]);
    expect(base.signatures).toBe(0);
  });

  it("nonzero cycle/cell prices burn the fee from the sender of every included CBQS transaction: accepted pays its actual charge, rejected its reservation", () => {
    const config = { ...genesisConfig(), cycle_price: 2n, cell_price: 3n };
    const t = new TestChain(config);
    const o = t.ok(cbqs(PROVIDER, ix.registerProvider()));
    const fee = o.cycles * 2n + o.cells * 3n;
    expect(t.balance(PROVIDER)).toBe(RICH - fee);
    expect(t.balance(new Uint8Array(20))).toBe(fee);
    const again = t.tx(cbqs(PROVIDER, ix.registerProvider()));
    expect(again.error!.name).toBe("ProviderAlreadyRegistered");
    expect(again.cells).toBe(0n);
    expect(t.chain.account(PROVIDER)).toEqual({ nonce: 2n, balance: RICH - fee - again.cycles * 2n });
    expect(t.balance(new Uint8Array(20))).toBe(fee + again.cycles * 2n);
  });
});

describe("§18.1 refund after commit", () => {
  it("§18.1 a rejected instruction is charged its full reservation and no cells; an accepted one its actual counts", () => {
    const t = new TestChain();
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    const rejected = t.tx(cbqs(OWNER, ix.createStream({ initial_escrow: 1n << 62n })));
    expect(rejected.status).toBe("rejected");
    expect(rejected.cells).toBe(0n);
    expect(rejected.cycles >= 34n * COSTS.readCycles + 11n * COSTS.writeCycles).toBe(true);
    const ok = t.ok(cbqs(PROVIDER, { type: "SetProviderStatus", args: { status: "Draining" } }));
    const payload = 3n; // version, tag, status
    expect(ok.cycles).toBe(payload * COSTS.decodeCyclesPerPayloadByte + 3n * COSTS.readCycles + 1n * COSTS.writeCycles);
  });
});
