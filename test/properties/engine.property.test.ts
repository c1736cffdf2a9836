// Engine invariants under random instruction sequences (fast-check). CI runs a few dozen
// short sequences; CBQS_PROPERTY_RUNS raises it for long local runs.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { toHex } from "../../src/bytes.js";
import type { BlockInput } from "../../src/engine/inputs.js";
import { decode } from "../../src/codec/core.js";
import * as S from "../../src/codec/schema.js";
import type { InstructionName } from "../../src/codec/types.js";
import type { Chain, TxOutcome } from "../../src/engine/chain.js";
import { actionArb, blocksArb, ChainModel, gapArb, type Action, type BlockPlan, type Gap } from "../../src/fuzz/model.js";
import { newChain, OWNERS, PROPERTY_WORLD, worldOf } from "../../src/fuzz/world.js";
import { accountKey, ZERO_ADDRESS } from "../../src/engine/layout.js";
import type { MemoryStateStore } from "../../state/store/store.js";
import { invariantViolation, NUM_RUNS, ReactivationWatch, TerminalWatch } from "./invariants.js";

const model = new ChainModel(PROPERTY_WORLD);

/** CIP-39 §18.1 table, copied from the spec (not from the engine) so the check is independent. */
const RESERVED: Record<InstructionName, [reads: number, writes: number]> = {
  RegisterProvider: [28, 2],
  UpdateProvider: [28, 2],
  SetProviderStatus: [3, 2],
  CreateStream: [34, 11],
  UpdateStream: [35, 8],
  TopUpStream: [34, 7],
  SettleStreamRent: [33, 7],
  CloseStream: [34, 9],
  ActivateKeyGeneration: [4, 2],
};

/** §18.1: no CBQS instruction performs more state reads or writes than it reserved. */
function reservationViolation(block: BlockInput, outcomes: readonly TxOutcome[]): string | null {
  for (let i = 0; i < block.txs.length; i++) {
    const body = block.txs[i]!.body;
    if (body.kind !== "system") continue;
    let name: InstructionName;
    try {
      name = decode(S.CbqsInstructionV1, body.payload).type;
    } catch {
      continue;
    }
    const [reads, writes] = RESERVED[name];
    const o = outcomes[i]!;
    if (o.reads > reads || o.writes > writes) return `${name} used ${o.reads}/${o.writes} state reads/writes, reserved ${reads}/${writes}`;
  }
  return null;
}

/** §19: the exact topic sequences each instruction may emit (net status edge last, at most one). */
const EVENT_SHAPES: Record<InstructionName, RegExp> = {
  RegisterProvider: /^registered$/,
  UpdateProvider: /^updated$/,
  SetProviderStatus: /^status_changed$/,
  CreateStream: /^created$/,
  UpdateStream: /^updated( suspended)?$/,
  TopUpStream: /^topped_up( suspended| reactivated)?$/,
  // §6.1: TopUpStream is the only instruction that can reactivate a stream.
  SettleStreamRent: /^(rent_settled( suspended)?|data_expired)$/,
  CloseStream: /^closed$/,
  ActivateKeyGeneration: /^key_generation_activated$/,
};

/** §19: emitter 0x17, topic sequence per instruction, payload = sender (provider topics) or the main stream id. */
function eventViolation(block: BlockInput, outcomes: readonly TxOutcome[], chain: Chain): string | null {
  for (let i = 0; i < block.txs.length; i++) {
    const tx = block.txs[i]!;
    const o = outcomes[i]!;
    let name: InstructionName | null = null;
    if (tx.body.kind === "system") {
      try {
        name = decode(S.CbqsInstructionV1, tx.body.payload).type;
      } catch {
        name = null;
      }
    }
    if (o.status !== "ok" || name === null) {
      if (o.events.length > 0) return `${name ?? tx.body.kind} ${o.status} emitted events`;
      continue;
    }
    const topics = o.events.map((e) => e.topic.replace(/^cbqs\.(provider|stream)\./, "")).join(" ");
    if (!EVENT_SHAPES[name].test(topics)) return `${name} emitted "${topics}"`;
    for (const e of o.events) {
      if (toHex(e.emitter) !== "0x0000000000000000000000000000000000000017") return `${name} event emitter ${toHex(e.emitter)}`;
      if (e.topic.startsWith("cbqs.provider.")) {
        if (toHex(e.payload) !== toHex(tx.from)) return `${name} provider event payload is not the sender`;
      } else {
        const record = e.payload.length === 32 ? chain.stream(e.payload) : null;
        if (record === null || record.purpose !== "Main") return `${name} stream event payload is not a main stream id`;
      }
    }
  }
  return null;
}

/** Executes the plan on a fresh chain, checking invariants after every block. */
function execute(plans: BlockPlan[]): { blocks: BlockInput[]; roots: string[]; violation: string | null } {
  const { chain, store } = newChain(PROPERTY_WORLD);
  const watch = new TerminalWatch();
  const reactivation = new ReactivationWatch();
  const blocks: BlockInput[] = [model.setupBlock(chain)];
  const setup = chain.executeBlock(blocks[0]!);
  const roots = [toHex(setup.stateRoot)];
  reactivation.check(chain, blocks[0]!, setup.outcomes);
  let height = 1n;
  let effective = 1n;
  for (const plan of plans) {
    height = model.nextHeight(plan.gap, chain, height);
    const block = model.toBlock(plan, chain, height);
    blocks.push(block);
    const outcome = chain.executeBlock(block);
    roots.push(toHex(outcome.stateRoot));
    // Denial of service: effective_rent_height = H − coverage(H) never exceeds H and never runs backwards.
    const rentClock =
      outcome.effectiveRentHeight > height || outcome.effectiveRentHeight < effective
        ? `effective_rent_height ${outcome.effectiveRentHeight} at height ${height} after ${effective}`
        : null;
    effective = outcome.effectiveRentHeight;
    const violation =
      rentClock ??
      reservationViolation(block, outcome.outcomes) ??
      eventViolation(block, outcome.outcomes, chain) ??
      invariantViolation(chain, store) ??
      watch.check(chain) ??
      reactivation.check(chain, block, outcome.outcomes);
    if (violation !== null) return { blocks, roots, violation: `after block ${height}: ${violation}` };
  }
  return { blocks, roots, violation: null };
}

/**
 * Plans that drive the setup streams through the §6.1 lifecycle — settlements, top-ups
 * and the instructions gated on Active, at the heights where escrow runs out or grace ends — so
 * "only TopUpStream reactivates" is exercised in every run, not in one run of hundreds.
 */
const LIFECYCLE = new Set<Action["k"]>(["settle", "topup", "update", "activate", "close"]);
/** A settlement of one of the three streams the setup block creates (owners 0–2, nonce 0), by anyone. */
const settleSetupStream: fc.Arbitrary<Action> = fc.record({
  k: fc.constant("settle" as const),
  sender: fc.integer({ min: 0, max: OWNERS.length }),
  owner: fc.integer({ min: 0, max: 2 }),
  nonce: fc.constant(0),
  key: fc.constant(false),
});
const lifecycleArb: fc.Arbitrary<BlockPlan[]> = fc.array(
  fc.record({
    gap: fc.oneof(
      { arbitrary: fc.record({ k: fc.constant("boundary" as const), of: fc.constantFrom("runway" as const, "deadline" as const), offset: fc.constantFrom(0, 0, 1) }) as fc.Arbitrary<Gap>, weight: 3 },
      { arbitrary: gapArb, weight: 1 },
    ),
    actions: fc.array(fc.oneof({ arbitrary: settleSetupStream, weight: 2 }, { arbitrary: actionArb.filter((a) => LIFECYCLE.has(a.k)), weight: 3 }), { minLength: 1, maxLength: 4 }),
  }),
  { minLength: 2, maxLength: 10 },
);

describe("engine properties (CIP-39 §4.1, §4.3, §5, §6.1; CIP-4 §6.3 determinism)", () => {
  it("§18.1 reads/writes within the reservation, §19 event shapes, monotone effective rent height ≤ H, §5 custody ≥ Σ escrow, CBY conserved, §4.3/§5 counters match live records, §4.1 key streams mirror, §6.1 Active ⇔ no pins, only TopUpStream reactivates, terminal absorbing — after every block", () => {
    fc.assert(
      fc.property(blocksArb(12, 5), (plans) => {
        const { violation } = execute(plans);
        expect(violation).toBeNull();
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it("§6.1 only TopUpStream reactivates a Suspended stream — under plans of settlements, top-ups and Active-gated instructions at runway and deadline boundaries (with every invariant above)", () => {
    fc.assert(
      fc.property(lifecycleArb, (plans) => {
        const { violation } = execute(plans);
        expect(violation).toBeNull();
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it("CIP-4 §6.3: replaying the same blocks from genesis gives identical state roots and outcomes", () => {
    fc.assert(
      fc.property(blocksArb(8, 4), (plans) => {
        const first = execute(plans);
        const { chain } = newChain(PROPERTY_WORLD);
        const again = first.blocks.map((b) => toHex(chain.executeBlock(b).stateRoot));
        expect(again).toEqual(first.roots);
      }),
      { numRuns: Math.max(5, Math.floor(NUM_RUNS / 3)) },
    );
  });

  it("§5 compute-then-commit: a rejected instruction leaves every key byte-identical except its sender's account (nonce + 1, balance − fee) and the burned fee; an excluded one changes nothing; CBY is conserved", () => {
    // The property world with nonzero prices (same chain instance, so the model's signed objects stay valid).
    const priced = worldOf({ ...PROPERTY_WORLD.config, cycle_price: 2n, cell_price: 3n }, PROPERTY_WORLD.source);
    const supply = (c: Chain) => c.accounts().reduce((sum, a) => sum + a.balance, 0n);
    const state = (store: MemoryStateStore) => new Map([...store.entries()].map(([k, v]) => [toHex(k), toHex(v)]));
    fc.assert(
      fc.property(
        fc.array(fc.record({ gap: gapArb, action: actionArb }), { minLength: 1, maxLength: 25 }),
        (steps) => {
          const { chain, store } = newChain(priced);
          chain.executeBlock(model.setupBlock(chain));
          const total = supply(chain);
          let height = 1n;
          for (const step of steps) {
            height = model.nextHeight(step.gap, chain, height);
            const tx = model.toTransaction(step.action, chain, height);
            const before = state(store);
            const sender = chain.account(tx.from);
            const burned = chain.account(ZERO_ADDRESS).balance;
            // Alone in its block: rent is lazy, so the block itself changes nothing else.
            const o = chain.executeBlock({ height, timestamp: height, txs: [tx] }).outcomes[0]!;
            const after = state(store);
            const changed = [...new Set([...before.keys(), ...after.keys()])].filter((k) => before.get(k) !== after.get(k)).sort();
            const what = `${step.action.k} ${o.status} ${o.error?.name ?? ""}`;
            expect(supply(chain), what).toBe(total);
            if (o.status === "excluded") {
              expect(changed, what).toEqual([]);
            } else if (o.status === "rejected") {
              expect(o.events, what).toEqual([]);
              expect(o.cells, what).toBe(0n);
              const fee = o.cycles * 2n;
              expect(chain.account(tx.from), what).toEqual({ nonce: sender.nonce + 1n, balance: sender.balance - fee });
              expect(chain.account(ZERO_ADDRESS).balance, what).toBe(burned + fee);
              const allowed = new Set([toHex(accountKey(tx.from)), toHex(accountKey(ZERO_ADDRESS))]);
              expect(changed.filter((k) => !allowed.has(k)), what).toEqual([]);
            } else {
              expect(chain.account(tx.from).nonce, what).toBe(sender.nonce + 1n);
            }
          }
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });
});
