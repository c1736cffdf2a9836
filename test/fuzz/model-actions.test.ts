// The fuzz chain model (src/fuzz/model.ts) driven directly, one action at a time: each action
// becomes the transaction it names against the state before the block — the sender, the exact
// ids, generations, amounts and quote fields — and where the action is meant to be valid or
// invalid the engine's outcome says so; directed actions aim at the stream their focus names, and
// boundary gaps land where the state says. Hand-reviewed mutants of the model.
import { describe, expect, it } from "vitest";
import { fromHex, toHex } from "../../src/bytes.js";
import { decode } from "../../src/codec/core.js";
import * as S from "../../src/codec/schema.js";
import type { CbqsInstructionV1, StreamRecordV1 } from "../../src/codec/types.js";
import type { Chain, TxOutcome } from "../../src/engine/chain.js";
import { paramMinimum } from "../../src/engine/governance.js";
import type { GovAction, Transaction } from "../../src/engine/inputs.js";
import { REGISTRY_ADDRESS } from "../../src/engine/layout.js";
import { ChainModel, leastAbove, type Action, type Gap, type QuotePlan } from "../../src/fuzz/model.js";
import { ed25519PublicKeyFromSeed } from "../../src/crypto/ed25519.js";
import { GOV, GRACE_VALUES, newChain, OWNERS, PARAM_NAMES, PLAIN_GENESIS, PROPERTY_WORLD, PROVIDERS, ROTATED_SIGN_SEEDS, ROTATION_SEED, SPONSOR, U64_MAX, worldFromJson } from "../../src/fuzz/world.js";
import { paramRow } from "../../src/params.js";

const GiB = 1_073_741_824n;
const MiB = 1_048_576n;

/**
 * The property world after the setup block at 1: owner 0's base stream pays 8,000 a block from
 * 40,000 (runway end 6), owner 1's fast one 74,700 from 2,000,000 (runway end 27), owner 2's
 * quoted one 9,000 from nothing (runway end 1); provider 0 reserves 2 streams, provider 1 none.
 */
function setup(): { model: ChainModel; chain: Chain } {
  const model = new ChainModel(PROPERTY_WORLD);
  const { chain } = newChain(PROPERTY_WORLD);
  chain.executeBlock(model.setupBlock(chain));
  return { model, chain };
}

function exec(model: ChainModel, chain: Chain, height: bigint, actions: Action[]): { txs: readonly Transaction[]; outcomes: TxOutcome[] } {
  const block = model.toBlock({ gap: { k: "step", blocks: 1 }, actions }, chain, height);
  return { txs: block.txs, outcomes: chain.executeBlock(block).outcomes };
}

const outcome = (o: TxOutcome): string => (o.status === "ok" ? "ok" : o.error!.name);
const instruction = (tx: Transaction): CbqsInstructionV1 => {
  if (tx.body.kind !== "system") throw new Error("not a system transaction");
  return decode(S.CbqsInstructionV1, tx.body.payload);
};
type ArgsOf<T extends CbqsInstructionV1["type"]> = Extract<CbqsInstructionV1, { type: T }> extends { args: infer A } ? A : never;
const argsOf = <T extends CbqsInstructionV1["type"]>(tx: Transaction, type: T): ArgsOf<T> => {
  const i = instruction(tx);
  expect(i.type).toBe(type);
  return i.args as unknown as ArgsOf<T>;
};
const govAction = (tx: Transaction): GovAction => {
  if (tx.body.kind !== "gov") throw new Error("not a governance transaction");
  return tx.body.action;
};
const mainOf = (chain: Chain, owner: number, nonce = 0n): StreamRecordV1 =>
  chain.streams().find((s) => s.purpose === "Main" && toHex(s.owner) === OWNERS[owner] && s.owner_nonce === nonce)!;

const settle = (owner: number): Action => ({ k: "settle", sender: 0, owner, nonce: 0, key: false });
const topUp = (owner: number, toDue: number | null, amount = 5n): Extract<Action, { k: "topup" }> => ({ k: "topup", payer: owner, owner, nonce: 0, key: false, amount, toDue });
const quote = (q: Partial<QuotePlan> = {}): QuotePlan => ({ rate: 9_000n, until: 0, signer: "quote", generation: 0, context: "own", ...q });
const createQuoted = (q: Partial<QuotePlan>, escrow = 0n): Action => ({ k: "create", owner: 1, nonce: 1, provider: 1, encrypted: false, fast: false, cap: 0, escrow, quote: quote(q) });
const activate = (a: Partial<Extract<Action, { k: "activate" }>> = {}): Action => ({
  k: "activate",
  by: "owner",
  owner: 0,
  nonce: 0,
  key: false,
  generation: 0,
  bump: false,
  signer: "own",
  served: "previous",
  context: "own",
  ...a,
});

/** The stream a directed SettleStreamRent with `focus` names at `height` ("unchanged": the action's own, none fitting). */
const aimed = (model: ChainModel, chain: Chain, focus: NonNullable<Extract<Action, { k: "settle" }>["focus"]>, height: bigint) => {
  const args = argsOf(model.toTransaction({ k: "settle", sender: 0, owner: 1, nonce: 1, key: false, focus }, chain, height), "SettleStreamRent");
  const s = chain.streams().find((r) => r.purpose === "Main" && toHex(r.stream_id) === toHex(args.stream_id));
  return s === undefined ? "unchanged" : `owner ${OWNERS.indexOf(toHex(s.owner))} nonce ${s.owner_nonce}`;
};
const next = (model: ChainModel, chain: Chain, gap: Gap, previous: bigint) => model.nextHeight(gap, chain, previous);

describe("the fuzz model's transactions (src/fuzz/model.ts)", () => {
  it("senders: payer index past the owners is the sponsor; 'other' is the next owner round the cast, whom the engine refuses", () => {
    const { model, chain } = setup();
    const from = (a: Action) => toHex(model.toTransaction(a, chain, 2n).from);
    expect([0, 1, 2, 3].map((payer) => from({ ...topUp(0, null), payer }))).toEqual([...OWNERS, SPONSOR]);
    expect([0, 1, 2].map((owner) => from({ k: "close", by: "other", owner, nonce: 0, key: false }))).toEqual([OWNERS[1], OWNERS[2], OWNERS[0]]);
    expect(from({ k: "close", by: "owner", owner: 2, nonce: 0, key: false })).toBe(OWNERS[2]);
    const { outcomes } = exec(model, chain, 2n, [
      { k: "close", by: "other", owner: 0, nonce: 0, key: false },
      { k: "close", by: "owner", owner: 0, nonce: 0, key: false },
    ]);
    expect(outcomes.map(outcome)).toEqual(["Unauthorized", "ok"]);
  });

  it("admission caps relative to the provider's reservation: below is refused (CapBelowReservation), exact and above are accepted (§4.3)", () => {
    const { model, chain } = setup();
    const caps = (provider: number, mode: "ample" | "exact" | "below" | "above") =>
      argsOf(model.toTransaction({ k: "provider", provider, variant: "admission", caps: mode, accepts: true, endpoints: "wss" }, chain, 2n), "UpdateProvider").base_rate_admission!;
    const row = (c: ReturnType<typeof caps>) => [c.max_active_streams, c.max_total_retained_bytes, c.max_total_append_bytes_per_sec, c.max_total_delivered_bytes_per_sec];
    // Provider 0 reserves 2 streams, 1 GiB retained, 1 MiB/s append and delivered.
    expect(row(caps(0, "ample"))).toEqual([10n, 8n * GiB, 8n * MiB, 8n * MiB]);
    expect(row(caps(0, "exact"))).toEqual([2n, GiB, MiB, MiB]);
    expect(row(caps(0, "below"))).toEqual([1n, GiB, MiB, MiB]);
    expect(row(caps(0, "above"))).toEqual([3n, 3n * GiB, 2n * MiB, 3n * MiB]);
    // Provider 1 reserves nothing: nothing can be below, so "below" is exact; provider 2 is unregistered.
    expect(row(caps(1, "below"))).toEqual([0n, 0n, 0n, 0n]);
    expect(row(caps(2, "exact"))).toEqual([10n, 8n * GiB, 8n * MiB, 8n * MiB]);
    const { outcomes } = exec(
      model,
      chain,
      2n,
      (["below", "exact", "above"] as const).map((c) => ({ k: "provider", provider: 0, variant: "admission", caps: c, accepts: true, endpoints: "wss" })),
    );
    expect(outcomes.map(outcome)).toEqual(["CapBelowReservation", "ok", "ok"]);
  });

  it("parameter writes pick from the §18 bounds (minimum, maximum, one past it, default, u64 max), the grace window also from the short graces", () => {
    const { model, chain } = setup();
    const written = (name: string, value: number) => {
      const action = govAction(model.toTransaction({ k: "param", by: "gov", writes: [{ name: PARAM_NAMES.indexOf(name), value }], split: null }, chain, 2n));
      expect(action.type).toBe("SetParam");
      return (action as Extract<GovAction, { type: "SetParam" }>).value;
    };
    const grace = paramRow("cbqs.suspend_grace_blocks")!;
    const graces = [...GRACE_VALUES, paramMinimum(grace.name), grace.maximum, grace.maximum + 1n, grace.default, U64_MAX];
    expect(Array.from({ length: graces.length + 1 }, (_, v) => written(grace.name, v))).toEqual([...graces, graces[0]]);
    const owner = paramRow("cbqs.max_streams_per_owner")!;
    expect([0, 1, 2, 3, 4, 5].map((v) => written(owner.name, v))).toEqual([paramMinimum(owner.name), owner.maximum, owner.maximum + 1n, owner.default, U64_MAX, paramMinimum(owner.name)]);
    expect(written("cbqs.no_such_param", 3)).toBe(1n);
    // The maximum is a value the chain takes, one past it is not.
    const { outcomes } = exec(model, chain, 2n, [
      { k: "param", by: "gov", writes: [{ name: PARAM_NAMES.indexOf(owner.name), value: 1 }], split: null },
      { k: "param", by: "gov", writes: [{ name: PARAM_NAMES.indexOf(owner.name), value: 2 }], split: null },
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(["ok", "rejected"]);
  });

  it("one write is a SetParam, none or several a SetParams; a split adds both rent bps of its pair", () => {
    const { model, chain } = setup();
    const grace = PARAM_NAMES.indexOf("cbqs.suspend_grace_blocks");
    const action = (writes: Array<{ name: number; value: number }>, split: number | null) => govAction(model.toTransaction({ k: "param", by: "gov", writes, split }, chain, 2n));
    expect(action([{ name: grace, value: 4 }], null)).toEqual({ type: "SetParam", name: "cbqs.suspend_grace_blocks", value: 5n });
    expect(action([], null)).toEqual({ type: "SetParams", values: [] });
    const split = action([], 0);
    expect(split.type).toBe("SetParams");
    const values = (split as Extract<GovAction, { type: "SetParams" }>).values;
    expect(values.map((v) => v.name)).toEqual(["cbqs.rent.provider_bps", "cbqs.rent.platform_bps"]);
    expect(values[0]!.value + values[1]!.value).toBe(10_000n);
    expect((action([{ name: grace, value: 4 }, { name: grace, value: 5 }], null) as Extract<GovAction, { type: "SetParams" }>).values).toHaveLength(2);
    expect(toHex(model.toTransaction({ k: "param", by: "other", writes: [], split: null }, chain, 2n).from)).toBe(SPONSOR);
  });

  it("provider actions: loopback endpoints and more than the live limit are refused (§4.3); a signing-key rotation names the rotated key; registration accepts new streams", () => {
    const world = worldFromJson({ ...PLAIN_GENESIS, params: { "cbqs.suspend_grace_blocks": "5", "cbqs.max_provider_endpoints": "2" } });
    const model = new ChainModel(world);
    const { chain } = newChain(world);
    chain.executeBlock(model.setupBlock(chain));
    const provider = (variant: "signing" | "endpoints", endpoints: "https" | "wss" | "loopback" | "three" = "wss"): Action => ({ k: "provider", provider: 0, variant, caps: "ample", accepts: true, endpoints });
    const endpoints = argsOf(model.toTransaction(provider("endpoints", "three"), chain, 2n), "UpdateProvider").endpoints!;
    expect(endpoints.map((e) => e.uri)).toEqual(["https://provider.example", "wss://cbqs.example/stream", "https://backup.example"]);
    expect(argsOf(model.toTransaction(provider("signing"), chain, 2n), "UpdateProvider").signing_key!.key).toEqual(ed25519PublicKeyFromSeed(fromHex(ROTATED_SIGN_SEEDS[0]!)));
    expect(chain.provider(fromHex(PROVIDERS[0]!))!.base_rate_admission.accepts_new).toBe(true);
    const { outcomes } = exec(model, chain, 2n, [provider("endpoints", "loopback"), provider("endpoints", "three"), provider("endpoints", "wss"), provider("signing")]);
    expect(outcomes.map(outcome)).toEqual(["EndpointRejected", "EndpointRejected", "ok", "ok"]);
  });

  it("UpdateStream rotation variants set or clear the rotation key; the others keep it", () => {
    const { model, chain } = setup();
    const rotation = (variant: "rotation" | "noop", r: "Set" | "Clear") =>
      argsOf(model.toTransaction({ k: "update", by: "owner", owner: 0, nonce: 0, key: false, variant, cap: 0, rotation: r, quote: null }, chain, 2n), "UpdateStream").rotation_key;
    expect(rotation("rotation", "Set")).toEqual({ type: "Set", key: { algorithm: "Ed25519", key: ed25519PublicKeyFromSeed(fromHex(ROTATION_SEED)) } });
    expect([rotation("rotation", "Clear"), rotation("noop", "Set")]).toEqual([{ type: "Clear" }, { type: "Keep" }]);
  });

  it("pause actions: the registry's 0x17 or the platform's 0x18, sent by governance or (refused) the sponsor", () => {
    const { model, chain } = setup();
    const tx = (a: Partial<Extract<Action, { k: "pause" }>>) => model.toTransaction({ k: "pause", variant: "Pause", actor: "registry", blocks: 3n, by: "gov", ...a }, chain, 2n);
    expect(govAction(tx({}))).toEqual({ type: "Pause", actor: REGISTRY_ADDRESS, blocks: 3n });
    expect(toHex(tx({}).from)).toBe(GOV);
    expect(govAction(tx({ actor: "platform", variant: "Unpause" }))).toEqual({ type: "Unpause", actor: fromHex("0x0000000000000000000000000000000000000018") });
    expect(toHex(tx({ by: "other" }).from)).toBe(SPONSOR);
  });

  it("block timestamps: genesis time plus height × block time", () => {
    const model = new ChainModel(worldFromJson({ ...PLAIN_GENESIS, timestamp: "1000", block_time_seconds: "6" }));
    expect([model.timestamp(0n), model.timestamp(5n)]).toEqual([1000n, 1030n]);
  });

  it("a quote's fields follow its plan (valid_until_block = height + until, generation = expected + offset), and the engine refuses exactly the invalid ones (§4.4)", () => {
    const { model, chain } = setup();
    const q = (plan: Partial<QuotePlan>) => argsOf(model.toTransaction(createQuoted(plan), chain, 4n), "CreateStream").price_quote!;
    expect([q({}).valid_until_block, q({ until: 5 }).valid_until_block, q({ until: -1 }).valid_until_block]).toEqual([4n, 9n, 3n]);
    expect([q({}).pricing_generation, q({ generation: 1 }).pricing_generation, q({ generation: -1 }).pricing_generation]).toEqual([1n, 2n, 0n]);
    const own = q({}).context;
    expect(own).toEqual({ version: 1, chain_id: 7n, chain_instance_id: PROPERTY_WORLD.chainInstanceId });
    expect(q({ context: "chain" }).context).toEqual({ ...own, chain_id: 8n });
    const instance = q({ context: "instance" }).context;
    expect(instance.chain_id).toBe(7n);
    expect([...instance.chain_instance_id]).toEqual([PROPERTY_WORLD.chainInstanceId[0]! ^ 0xff, ...PROPERTY_WORLD.chainInstanceId.slice(1)]);
    const plans: Array<Partial<QuotePlan>> = [{ until: -1 }, { signer: "signing" }, { context: "chain" }, { context: "instance" }, { generation: 1 }, { generation: -1 }, { until: 0 }];
    const { outcomes } = exec(model, chain, 4n, plans.map((p) => createQuoted(p)));
    expect(outcomes.map(outcome)).toEqual(["PricingBasisInvalid", "PricingBasisInvalid", "ChainInstanceMismatch", "ChainInstanceMismatch", "PricingBasisInvalid", "PricingBasisInvalid", "ok"]);
    expect(mainOf(chain, 1, 1n).rate_per_block).toBe(9_000n);
  });

  it("UpdateStream: a capacity change with a quote quotes the stream's next pricing generation; the variants set what they name", () => {
    const { model, chain } = setup();
    const update = (a: Partial<Extract<Action, { k: "update" }>>): Action => ({ k: "update", by: "owner", owner: 2, nonce: 0, key: false, variant: "capacity", cap: 0, rotation: "Set", quote: null, ...a });
    const quoted = argsOf(model.toTransaction(update({ quote: quote({ rate: 12_345n }) }), chain, 2n), "UpdateStream");
    expect(quoted.price_quote!.pricing_generation).toBe(2n);
    expect(quoted.price_quote!.provider).toEqual(fromHex(PROVIDERS[1]!));
    expect(argsOf(model.toTransaction(update({}), chain, 2n), "UpdateStream").price_quote).toBeNull();
    expect(argsOf(model.toTransaction(update({ variant: "admin" }), chain, 2n), "UpdateStream").bump_authorization_generation).toBe(false);
    expect(argsOf(model.toTransaction(update({ variant: "bump" }), chain, 2n), "UpdateStream").bump_authorization_generation).toBe(true);
    const { outcomes } = exec(model, chain, 2n, [update({ quote: quote({ rate: 12_345n }) })]);
    expect(outcomes.map(outcome)).toEqual(["ok"]);
    expect([mainOf(chain, 2).pricing_generation, mainOf(chain, 2).rate_per_block]).toEqual([2n, 12_345n]);
  });

  it("ActivateKeyGeneration: the next generation, served at the previous height, signed by the stream's provider key; each deviation is refused", () => {
    const { model, chain } = setup();
    const receipt = (a: Partial<Extract<Action, { k: "activate" }>>) => argsOf(model.toTransaction(activate(a), chain, 3n), "ActivateKeyGeneration").receipt;
    expect([receipt({}).encryption_generation, receipt({ generation: 1 }).encryption_generation, receipt({ generation: -1 }).encryption_generation]).toEqual([1n, 2n, 0n]);
    expect([receipt({}).served_at.height, receipt({ served: "current" }).served_at.height]).toEqual([2n, 3n]);
    expect(receipt({ context: "served" }).served_at.chain_instance_id).not.toEqual(PROPERTY_WORLD.chainInstanceId);
    expect(receipt({ context: "served" }).context.chain_instance_id).toEqual(PROPERTY_WORLD.chainInstanceId);
    expect(receipt({ context: "instance" }).context.chain_instance_id).not.toEqual(PROPERTY_WORLD.chainInstanceId);
    const rejected = exec(model, chain, 3n, [activate({ signer: "other" }), activate({ context: "served" }), activate({ generation: 1 }), activate({ generation: -1 })]);
    expect(rejected.outcomes.map(outcome)).toEqual(["InvalidKeyBatch", "ChainInstanceMismatch", "InvalidKeyBatch", "InvalidKeyBatch"]);
    expect(exec(model, chain, 4n, [activate({})]).outcomes.map(outcome)).toEqual(["ok"]);
    // The next one is generation 2: the model reads the generation the stream now has.
    expect(exec(model, chain, 5n, [activate({})]).outcomes.map(outcome)).toEqual(["ok"]);
    expect(mainOf(chain, 0).encryption_generation).toBe(2n);
  });

  it("malformed payloads: a valid SettleStreamRent under opcode 217, version 2, truncated at `at`, or one byte flipped by 1 + at mod 255", () => {
    const { model, chain } = setup();
    const raw = (variant: "bytes" | "flip" | "truncate" | "version" | "opcode", at = 0) => {
      const tx = model.toTransaction({ k: "raw", variant, payload: Uint8Array.of(9, 9), at }, chain, 2n);
      if (tx.body.kind !== "system") throw new Error("not a system transaction");
      return { opcode: tx.body.opcode, payload: tx.body.payload };
    };
    const valid = raw("opcode");
    expect(valid.opcode).toBe(217);
    expect(decode(S.CbqsInstructionV1, valid.payload).type).toBe("SettleStreamRent");
    expect(raw("bytes")).toEqual({ opcode: 218, payload: Uint8Array.of(9, 9) });
    expect(raw("version").payload).toEqual(Uint8Array.of(2, ...valid.payload.subarray(1)));
    expect(raw("truncate", valid.payload.length + 3).payload).toEqual(valid.payload.subarray(0, 3));
    for (const at of [0, 256, 254]) {
      const flipped = raw("flip", at).payload;
      const i = at % valid.payload.length;
      expect(flipped.length).toBe(valid.payload.length);
      expect(flipped.findIndex((b, k) => b !== valid.payload[k])).toBe(i);
      expect(flipped[i]! ^ valid.payload[i]!).toBe(1 + (at % 255));
    }
  });
});

describe("the fuzz model's top-up to the rent due (§6.1 boundary)", () => {
  it("toDue deposits exactly what brings the escrow to the rent due (± toDue); the engine then keeps the stream Active or suspends it", () => {
    const { model, chain } = setup();
    // Height 8: owner 0 owes 7 blocks × 8,000 = 56,000 against 40,000 escrow.
    const amount = (a: Action, height = 8n) => argsOf(model.toTransaction(a, chain, height), "TopUpStream").amount;
    expect([amount(topUp(0, 0)), amount(topUp(0, -1)), amount(topUp(0, 1))]).toEqual([16_000n, 15_999n, 16_001n]);
    expect(amount(topUp(0, null, 77n))).toBe(77n);
    expect(amount({ ...topUp(0, 0, 77n), nonce: 3 })).toBe(77n); // no such stream: the plain amount
    // Height 6: the escrow covers the rent due exactly; a deposit is never 0 (nor negative).
    expect([amount(topUp(0, 0), 6n), amount(topUp(0, -1), 6n), amount(topUp(0, 0), 3n)]).toEqual([1n, 1n, 1n]);
    exec(model, chain, 8n, [topUp(0, 0)]);
    expect([mainOf(chain, 0).status, mainOf(chain, 0).escrow_balance, mainOf(chain, 0).last_settled_block]).toEqual(["Active", 0n, 8n]);
    const other = setup();
    exec(other.model, other.chain, 8n, [topUp(0, -1)]);
    expect(mainOf(other.chain, 0).status).toBe("Suspended");
  });

  it("under a pause the rent due is counted to the effective rent height, not the physical one", () => {
    const { model, chain } = setup();
    exec(model, chain, 2n, [{ k: "pause", variant: "Pause", actor: "registry", blocks: 3n, by: "gov" }]);
    // Paused over [2, 5): physical 10 is effective 7, owing 6 × 8,000 = 48,000.
    expect(argsOf(model.toTransaction(topUp(0, 0), chain, 10n), "TopUpStream").amount).toBe(8_000n);
  });
});

describe("directed actions aim at the stream their focus names (src/fuzz/model.ts aim)", () => {

  it("encrypted and base take the first such stream in state order; priciest the highest rate; quoted the longest runway", () => {
    const { model, chain } = setup();
    // State order of the main streams: owner 0 (base, encrypted), owner 2 (quoted, encrypted), owner 1 (base, fast, 74,700).
    expect(chain.streams().filter((s) => s.purpose === "Main").map((s) => OWNERS.indexOf(toHex(s.owner)))).toEqual([0, 2, 1]);
    expect(aimed(model, chain, "encrypted", 2n)).toBe("owner 0 nonce 0");
    expect(aimed(model, chain, "base", 2n)).toBe("owner 0 nonce 0");
    expect(aimed(model, chain, "priciest", 2n)).toBe("owner 1 nonce 0");
    expect(aimed(model, chain, "quoted", 2n)).toBe("owner 2 nonce 0");
    // A second quoted stream with a runway to 1 + 2,000,000 / 9,000 = 223 outranks owner 2's (ended at 1).
    expect(exec(model, chain, 2n, [createQuoted({ until: 0 }, 2_000_000n)]).outcomes.map(outcome)).toEqual(["ok"]);
    expect(aimed(model, chain, "quoted", 3n)).toBe("owner 1 nonce 1");
  });

  it("arrears: an Active stream whose runway ended before H, not at it; a Suspended one is not in arrears", () => {
    const { model, chain } = setup();
    expect(aimed(model, chain, "arrears", 2n)).toBe("owner 2 nonce 0");
    exec(model, chain, 2n, [settle(2)]); // owner 2: Suspended, deadline 6
    expect(mainOf(chain, 2).status).toBe("Suspended");
    // Owner 0's runway ends at 6: at 6 it still pays in full, at 7 it is in arrears.
    expect([aimed(model, chain, "arrears", 5n), aimed(model, chain, "arrears", 6n), aimed(model, chain, "arrears", 7n)]).toEqual(["unchanged", "unchanged", "owner 0 nonce 0"]);
    // The latest-ended runway first: owner 1's (27) over owner 0's (6).
    expect(aimed(model, chain, "arrears", 30n)).toBe("owner 1 nonce 0");
  });

  it("suspended: the grace deadline still ahead (or now) comes first, then those passed; the state is read again at each height", () => {
    const { model, chain } = setup();
    expect(aimed(model, chain, "suspended", 2n)).toBe("unchanged");
    exec(model, chain, 2n, [settle(2)]); // owner 2: Suspended at 1, deadline 6
    expect(aimed(model, chain, "suspended", 3n)).toBe("owner 2 nonce 0");
    exec(model, chain, 8n, [settle(0)]); // owner 0: Suspended at 6, deadline 11
    expect([mainOf(chain, 2).suspension_grace_deadline_block, mainOf(chain, 0).suspension_grace_deadline_block]).toEqual([6n, 11n]);
    expect(aimed(model, chain, "suspended", 9n)).toBe("owner 0 nonce 0");
    expect(aimed(model, chain, "suspended", 11n)).toBe("owner 0 nonce 0");
  });
});

describe("boundary gaps (src/fuzz/model.ts nextHeight)", () => {

  it("a plain step, and the next runway end strictly after the previous height's effective height", () => {
    const { model, chain } = setup();
    expect(next(model, chain, { k: "step", blocks: 7 }, 3n)).toBe(10n);
    // Runway ends: owner 2's at 1, owner 0's at 6, owner 1's at 27. From 6, the next is 27.
    expect(next(model, chain, { k: "boundary", of: "runway", offset: 0 }, 6n)).toBe(27n);
    expect(next(model, chain, { k: "boundary", of: "deadline", offset: 0 }, 6n)).toBe(7n); // nothing Suspended
  });

  it("the nearest target is the least above the floor, wherever it is among the targets", () => {
    expect(leastAbove([9n, 4n, 7n, 2n, 4n, 5n], 3n)).toBe(4n);
    expect(leastAbove([9n, 7n], 8n)).toBe(9n);
    expect(leastAbove([3n, 1n], 3n)).toBeUndefined();
    expect(leastAbove([], 0n)).toBeUndefined();
  });

  it("a pause's expiry at or before the previous height is no target: the next height", () => {
    const { model, chain } = setup();
    exec(model, chain, 2n, [{ k: "pause", variant: "Pause", actor: "registry", blocks: 3n, by: "gov" }]);
    expect(next(model, chain, { k: "boundary", of: "pauseEnd", offset: 0 }, 3n)).toBe(5n);
    expect(next(model, chain, { k: "boundary", of: "pauseEnd", offset: -1 }, 4n)).toBe(5n);
  });

  it("targets beyond 2^40 are not targeted: a long pause leaves only the next height", () => {
    const { model, chain } = setup();
    const blocks = 1n << 41n;
    expect(exec(model, chain, 2n, [{ k: "pause", variant: "Pause", actor: "registry", blocks, by: "gov" }]).outcomes.map(outcome)).toEqual(["ok"]);
    expect(chain.pause().active!.expires_at_block).toBe(2n + blocks);
    expect(next(model, chain, { k: "boundary", of: "runway", offset: 0 }, 3n)).toBe(4n);
  });
});

describe("the farthest boundary targeted (src/fuzz/model.ts nextHeight, MAX_GAP_TARGET; hand-reviewed mutants)", () => {

  it("a runway end mapped exactly to 2^40 is still targeted; one block past it is not", () => {
    const { model, chain } = setup();
    // Paused from 2 for 2^40 − 6 blocks: owner 0's runway end (effective 6) comes at physical 2^40.
    expect(exec(model, chain, 2n, [{ k: "pause", variant: "Pause", actor: "registry", blocks: (1n << 40n) - 6n, by: "gov" }]).outcomes.map(outcome)).toEqual(["ok"]);
    expect(next(model, chain, { k: "boundary", of: "runway", offset: 0 }, 3n)).toBe(1n << 40n);
    expect(next(model, chain, { k: "boundary", of: "runway", offset: 1 }, 3n)).toBe(4n);
  });
});

describe("the model's survivors of its first Stryker run (src/fuzz/model.ts; 2026-12-06)", () => {
  const label = (s: StreamRecordV1) => `${s.purpose} ${OWNERS.indexOf(toHex(s.owner))}/${s.owner_nonce}`;

  it("endpoint lists are exactly the ones named: https one, wss one, loopback one on 127.0.0.1, three of both transports (§4.3)", () => {
    const { model, chain } = setup();
    const list = (endpoints: "https" | "wss" | "loopback" | "three") =>
      argsOf(model.toTransaction({ k: "provider", provider: 0, variant: "endpoints", caps: "ample", accepts: true, endpoints }, chain, 2n), "UpdateProvider").endpoints!.map((e) => `${e.transport} ${e.uri}`);
    expect(list("https")).toEqual(["Https https://provider.example"]);
    expect(list("wss")).toEqual(["WebSocketTls wss://cbqs.example/stream"]);
    expect(list("loopback")).toEqual(["Https https://127.0.0.1/stream"]);
    expect(list("three")).toEqual(["Https https://provider.example", "WebSocketTls wss://cbqs.example/stream", "Https https://backup.example"]);
    const registered = argsOf(model.toTransaction({ k: "register", provider: 2, endpoints: "https" }, chain, 2n), "RegisterProvider");
    expect(registered.endpoints.map((e) => `${e.transport} ${e.uri}`)).toEqual(["Https https://provider.example"]);
  });

  it("a capacity update keeps the stream's class: a Fast stream's config is Fast-shaped, a Standard one's Standard-shaped (§4.1); both accepted", () => {
    const { model, chain } = setup();
    const update = (owner: number): Action => ({ k: "update", by: "owner", owner, nonce: 0, key: false, variant: "capacity", cap: 1, rotation: "Set", quote: null });
    const config = (owner: number) => argsOf(model.toTransaction(update(owner), chain, 2n), "UpdateStream").config!;
    const shape = (owner: number) => [config(owner).fast_batch_max_ms, config(owner).idempotency_horizon_ms, config(owner).default_max_attempts];
    expect(mainOf(chain, 1).delivery_class).toBe("Fast");
    expect(shape(1)).toEqual([100, 0n, 0]);
    expect(shape(0)).toEqual([0, 60_000n, 10]);
    expect(exec(model, chain, 2n, [update(1), update(0)]).outcomes.map(outcome)).toEqual(["ok", "ok"]);
  });

  it("ActivateKeyGeneration signed 'own' uses the key the stream snapshotted: provider 1's for owner 2's stream, accepted; 'other' refused", () => {
    const { model, chain } = setup();
    expect(toHex(mainOf(chain, 2).provider)).toBe(PROVIDERS[1]);
    const { outcomes } = exec(model, chain, 3n, [activate({ owner: 2, signer: "other" }), activate({ owner: 2 })]);
    expect(outcomes.map(outcome)).toEqual(["InvalidKeyBatch", "ok"]);
  });

  it("encrypted and base skip streams that are not Active: with owner 0's stream Suspended, encrypted aims at owner 2's, base at owner 1's", () => {
    const { model, chain } = setup();
    exec(model, chain, 8n, [settle(0)]); // owner 0's runway ended at 6
    expect([mainOf(chain, 0).status, mainOf(chain, 2).status, mainOf(chain, 1).status]).toEqual(["Suspended", "Active", "Active"]);
    expect(aimed(model, chain, "encrypted", 9n)).toBe("owner 2 nonce 0");
    expect(aimed(model, chain, "base", 9n)).toBe("owner 1 nonce 0");
  });

  it("quoted and priciest: a Suspended quoted stream is not quoted; priciest takes a Suspended stream but not a Closed one", () => {
    const { model, chain } = setup();
    exec(model, chain, 2n, [settle(2)]); // owner 2's quoted stream: Suspended
    expect(aimed(model, chain, "quoted", 3n)).toBe("unchanged");
    exec(model, chain, 30n, [settle(1)]); // owner 1's runway ended at 27: Suspended at 74,700 a block
    expect(mainOf(chain, 1).status).toBe("Suspended");
    expect(aimed(model, chain, "priciest", 31n)).toBe("owner 1 nonce 0");
    exec(model, chain, 31n, [{ k: "close", by: "owner", owner: 1, nonce: 0, key: false }]);
    expect([mainOf(chain, 1).status, mainOf(chain, 1).rate_per_block]).toEqual(["Closed", 74_700n]);
    expect(aimed(model, chain, "priciest", 32n)).toBe("owner 2 nonce 0");
  });

  it("suspended: of two deadlines still ahead, the nearer first", () => {
    const { model, chain } = setup();
    exec(model, chain, 2n, [settle(2)]); // owner 2: deadline 6
    exec(model, chain, 3n, [createQuoted({}, 0n)]); // owner 1 nonce 1: runway ends at 3
    exec(model, chain, 4n, [{ k: "settle", sender: 0, owner: 1, nonce: 1, key: false }]);
    expect([mainOf(chain, 2).suspension_grace_deadline_block, mainOf(chain, 1, 1n).suspension_grace_deadline_block]).toEqual([6n, 8n]);
    expect(aimed(model, chain, "suspended", 5n)).toBe("owner 2 nonce 0");
  });

  it("directed actions aim at main streams only: a key stream sorting before another main stream is not taken for its own main (§4.1)", () => {
    const { model, chain } = setup();
    const base = (owner: number, encrypted: boolean): Action => ({ k: "create", owner, nonce: 2, provider: 0, encrypted, fast: false, cap: 0, escrow: 40_000n, quote: null });
    expect(exec(model, chain, 2n, [base(0, false), base(1, true)]).outcomes.map(outcome)).toEqual(["ok", "ok"]);
    // In state order owner 1's nonce-2 key stream comes first, then owner 0's nonce-2 main stream, then the rest.
    expect(chain.streams().slice(0, 2).map(label)).toEqual(["Key 1/2", "Main 0/2"]);
    expect(aimed(model, chain, "base", 3n)).toBe("owner 0 nonce 2");
  });

  it("runway boundaries are not deadlines, and a stream closed while Suspended has no deadline left (§5: terminal records clear it)", () => {
    const { model, chain } = setup();
    exec(model, chain, 8n, [settle(0)]); // owner 0: Suspended, deadline 11
    expect(mainOf(chain, 0).suspension_grace_deadline_block).toBe(11n);
    expect(next(model, chain, { k: "boundary", of: "runway", offset: 0 }, 8n)).toBe(27n);
    expect(next(model, chain, { k: "boundary", of: "deadline", offset: 0 }, 8n)).toBe(11n);
    exec(model, chain, 9n, [{ k: "close", by: "owner", owner: 0, nonce: 0, key: false }]);
    expect(next(model, chain, { k: "boundary", of: "deadline", offset: 0 }, 9n)).toBe(10n);
  });
});
