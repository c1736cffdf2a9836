// Directed scenarios of the fuzz generator: short runs of blocks aimed at states that random
// blocks reach too rarely (the census, docs/reference/fuzzer.md §4, found them below 0.5 % of runs).
// Each is ordinary plan data — blocks of model actions (src/fuzz/model.ts) whose stream actions
// carry a Focus, resolved against the state before their block like every other action — so
// plan.ts mixes them into a chain's blocks, the shrinker reduces them like any block, and a
// chain stays a pure function of (seed, run, blocks).
import fc from "fast-check";
import { LIVE_SCALARS } from "../params.js";
import type { Action, BlockPlan, Focus, Gap, QuotePlan } from "./model.js";
import { OWNERS, PARAM_NAMES, U64_MAX } from "./world.js";

// Fallbacks when no stream fits the focus: the setup streams (nonce 0) of any owner.
const owner = fc.nat({ max: OWNERS.length - 1 });
/** Index into OWNERS ++ [SPONSOR] (model.ts payerAddress). */
const payer = fc.nat({ max: OWNERS.length });

const settle = (focus: Focus): fc.Arbitrary<Action> => fc.record({ k: fc.constant("settle" as const), sender: payer, owner, nonce: fc.constant(0), key: fc.constant(false), focus: fc.constant(focus) });

/** toDue: the escrow exactly at the rent due (0), over it (pays in full) or one short (pays part, stays Suspended). */
const topUp = (focus: Focus): fc.Arbitrary<Action> =>
  fc.record({
    k: fc.constant("topup" as const),
    payer,
    owner,
    nonce: fc.constant(0),
    key: fc.constant(false),
    amount: fc.constant(1n),
    toDue: fc.constantFrom(0, 1, -1, 1_000_000),
    focus: fc.constant(focus),
  });

const boundary = (of: "deadline" | "runway" | "pauseEnd", offsets: number[]): fc.Arbitrary<Gap> => fc.record({ k: fc.constant("boundary" as const), of: fc.constant(of), offset: fc.constantFrom(...offsets) });
const step = (max: number): fc.Arbitrary<Gap> => fc.record({ k: fc.constant("step" as const), blocks: fc.integer({ min: 1, max }) });
const block = (gap: fc.Arbitrary<Gap>, ...actions: Array<fc.Arbitrary<Action>>): fc.Arbitrary<BlockPlan> => fc.record({ gap, actions: fc.tuple(...actions) });

/** A grace of 5, 8 or 20 blocks (model.ts paramValues: GRACE_VALUES first), so a suspension has blocks left to act in. */
const grace: fc.Arbitrary<Action> = fc.record({
  k: fc.constant("param" as const),
  by: fc.constant("gov" as const),
  writes: fc.tuple(fc.record({ name: fc.constant(PARAM_NAMES.indexOf("cbqs.suspend_grace_blocks")), value: fc.constantFrom(4, 5, 6) })),
  split: fc.constant(null),
});

/** One past an escrow runway end, settle the stream in arrears: Active → Suspended, the pair pinned (§6.1) with a deadline ahead. */
const materialize = block(boundary("runway", [1, 1, 2]), grace, settle("arrears"));

const pause = (variant: "Pause" | "ExtendPause", blocks: fc.Arbitrary<bigint>): fc.Arbitrary<Action> =>
  fc.record({ k: fc.constant("pause" as const), variant: fc.constant(variant), actor: fc.constant("registry" as const), blocks, by: fc.constant("gov" as const) });
const pauseBlocks = fc.bigInt({ min: 1n, max: 10n });

/** A fresh quote the stream accepts but for its valid_until_block: the last block it is valid in, or one past it. */
const quoteAtExpiry: fc.Arbitrary<QuotePlan> = fc.record({
  rate: fc.constantFrom(8_000n, 8_001n, 9_000n, 12_345n, 100_000n),
  until: fc.constantFrom(0, -1),
  signer: fc.constant("quote" as const),
  generation: fc.constant(0),
  context: fc.constant("own" as const),
});

/** A quote signed for another chain (§4: ChainInstanceMismatch, before the stream is even loaded). */
const quoteForeign: fc.Arbitrary<QuotePlan> = fc.record({
  rate: fc.constant(9_000n),
  until: fc.constant(5),
  signer: fc.constant("quote" as const),
  generation: fc.constant(0),
  context: fc.constantFrom("chain" as const, "instance" as const),
});

/** A valid quote at 2^127 a block: a provider may quote it, and no creation charge is due on an update. */
const quoteHuge: fc.Arbitrary<QuotePlan> = fc.record({
  rate: fc.constant(1n << 127n),
  until: fc.constant(5),
  signer: fc.constant("quote" as const),
  generation: fc.constant(0),
  context: fc.constant("own" as const),
});

/** A capacity update; cap: not the all-zero capacity (rejected on the base schedule before any cap). */
const update = (focus: Focus, quote: fc.Arbitrary<QuotePlan | null>, cap = fc.nat({ max: 2 })): fc.Arbitrary<Action> =>
  fc.record({
    k: fc.constant("update" as const),
    by: fc.constant("owner" as const),
    owner,
    nonce: fc.constant(0),
    key: fc.constant(false),
    variant: fc.constant("capacity" as const),
    cap,
    rotation: fc.constant("Set" as const),
    quote,
    focus: fc.constant(focus),
  });

const activate: fc.Arbitrary<Action> = fc.record({
  k: fc.constant("activate" as const),
  by: fc.constant("owner" as const),
  owner,
  nonce: fc.constant(0),
  key: fc.constant(false),
  generation: fc.constant(0),
  bump: fc.boolean(),
  signer: fc.constant("own" as const),
  served: fc.constant("previous" as const),
  context: fc.constant("own" as const),
  focus: fc.constant("encrypted" as const),
});

/** Two to eight live scalars other than the rent split (whose sum guard needs both) at their minimum, maximum or default: accepted. */
const paramWrite: fc.Arbitrary<Action> = fc.record({
  k: fc.constant("param" as const),
  by: fc.constant("gov" as const),
  writes: fc.uniqueArray(
    fc.record({
      name: fc.constantFrom(...LIVE_SCALARS.filter((n) => !n.startsWith("cbqs.rent.")).map((n) => PARAM_NAMES.indexOf(n))),
      value: fc.constantFrom(0, 1, 3), // model.ts paramValues: minimum, maximum, default (a grace of 0, 1, 3 blocks)
    }),
    { minLength: 2, maxLength: 8, selector: (w) => w.name },
  ),
  split: fc.constant(null),
});

/** Rent splits whose provider-share floor drops a remainder on most payments (9,999/1, 1/9,999, 3,333/6,667). */
const BITING_SPLITS = [1, 2, 3];
/** The rent split set first, so the two payments' floors bite. */
const split: fc.Arbitrary<Action> = fc.record({
  k: fc.constant("param" as const),
  by: fc.constant("gov" as const),
  writes: fc.constant<Array<{ name: number; value: number }>>([]),
  split: fc.constantFrom(...BITING_SPLITS),
});

const W = (weight: number, arbitrary: fc.Arbitrary<BlockPlan[]>) => ({ weight, arbitrary });

export const scenarioArb: fc.Arbitrary<BlockPlan[]> = fc.oneof(
  // §6.1 expiry: settle a Suspended stream exactly at its grace deadline, one block before (a
  // no-op) or after.
  W(2, fc.tuple(materialize, block(boundary("deadline", [0, 0, -1, 1]), settle("suspended")))),
  // §6.1 reactivation: a top-up before the deadline (the only way back to Active), short of the
  // rent due (a partial payment keeps the pinned pair), or exactly at the deadline (rejected).
  W(3, fc.tuple(materialize, block(fc.oneof(boundary("deadline", [-1, -1, -2, 0]), step(2)), topUp("suspended")))),
  // §6.1 a top-up in arrears before any settlement: settle #1 pays what the escrow covers and
  // pins the pair, settle #2 pays from the deposit — two payments, each split on its own.
  W(3, fc.tuple(block(boundary("runway", [1, 2, 3, 8]), split, topUp("arrears")))),
  // Denial of service: a pause between the suspension and its deadline holds the deadline back.
  W(2, fc.tuple(materialize, block(step(1), pause("Pause", pauseBlocks)), block(boundary("deadline", [-1, 0, 1]), fc.oneof(topUp("suspended"), settle("suspended"))))),
  // §5 CloseStream of a Suspended stream, before or at/after its deadline.
  W(
    2,
    fc.tuple(
      materialize,
      block(
        fc.oneof(step(2), boundary("deadline", [0, 1])),
        fc.record({ k: fc.constant("close" as const), by: fc.constant("owner" as const), owner, nonce: fc.constant(0), key: fc.constant(false), focus: fc.constant("suspended" as const) }),
      ),
    ),
  ),
  // §9.3 a generation chain: two key generations activated on one stream.
  W(1, fc.tuple(block(step(3), activate), block(step(3), activate))),
  // §4.3/§5 a provider's caps set exactly at its reservation (or no new admissions), then a
  // governance-base update and creation that would need more.
  W(
    2,
    fc.tuple(
      block(
        step(3),
        fc.record({
          k: fc.constant("provider" as const),
          provider: fc.constant(0), // the setup's governance-base streams are provider 0's
          variant: fc.constant("admission" as const),
          caps: fc.constant("exact" as const),
          accepts: fc.boolean(),
          endpoints: fc.constant("wss" as const),
        }),
        update("base", fc.constant(null)),
        fc.record({
          k: fc.constant("create" as const),
          owner,
          nonce: fc.constantFrom(1, 2),
          provider: fc.constant(0),
          encrypted: fc.boolean(),
          fast: fc.boolean(),
          cap: fc.nat({ max: 2 }),
          escrow: fc.constant(200_000n),
          quote: fc.constant(null),
        }),
      ),
    ),
  ),
  // Denial of service: a pause extended (to the u64 edge, overflowing) in its own block.
  W(1, fc.tuple(block(step(3), pause("Pause", pauseBlocks), pause("ExtendPause", fc.oneof(pauseBlocks, fc.constant(U64_MAX)))))),
  // §18 writes to live scalars governance accepts, then a capacity update validated (§4.2)
  // against the limits just written.
  W(3, fc.tuple(block(step(3), paramWrite, update("base", fc.constant(null))))),
  // §4.4 a stream created on, and a provider-quote stream repriced by, a quote at its
  // valid_until_block or one past it; and a repricing quote signed for another chain.
  W(
    2,
    fc.tuple(
      block(
        step(3),
        update("quoted", quoteAtExpiry),
        update("quoted", quoteForeign),
        fc.record({
          k: fc.constant("create" as const),
          owner,
          nonce: fc.constantFrom(1, 2),
          provider: fc.nat({ max: 1 }),
          encrypted: fc.boolean(),
          fast: fc.boolean(),
          cap: fc.nat({ max: 2 }),
          escrow: fc.constantFrom(0n, 200_000n),
          quote: quoteAtExpiry,
        }),
      ),
    ),
  ),
  // §6.1 checked arithmetic: a stream repriced to 2^127 a block owes more than u128 after two
  // blocks, so settling it (directly, in a top-up, a close or a repricing) overflows. A fresh
  // quoted stream with escrow to spare stays Active through the repricing.
  W(
    2,
    fc.tuple(
      block(
        step(3),
        fc.record({
          k: fc.constant("create" as const),
          owner,
          nonce: fc.constantFrom(1, 2),
          provider: fc.nat({ max: 1 }),
          encrypted: fc.boolean(),
          fast: fc.boolean(),
          cap: fc.constant(0),
          escrow: fc.constant(2_000_000n),
          quote: fc.record({ rate: fc.constant(9_000n), until: fc.constant(5), signer: fc.constant("quote" as const), generation: fc.constant(0), context: fc.constant("own" as const) }),
        }),
      ),
      block(step(3), update("quoted", quoteHuge, fc.integer({ min: 1, max: 2 }))), // not the created capacity (0)
      // Each is rejected (no effect), so each meets the overflow.
      block(
        fc.integer({ min: 2, max: 4 }).map((blocks): Gap => ({ k: "step", blocks })), // two blocks at least: the rent due overflows
        update("priciest", fc.constant(null)),
        topUp("priciest"),
        settle("priciest"),
        fc.record({ k: fc.constant("close" as const), by: fc.constant("owner" as const), owner, nonce: fc.constant(0), key: fc.constant(false), focus: fc.constant("priciest" as const) }),
      ),
    ),
  ),
  // Denial of service: instructions at a pause's expiry (its last covered block is the one before).
  W(4, fc.tuple(block(step(3), pause("Pause", pauseBlocks)), block(boundary("pauseEnd", [0, 0, 0, -1]), fc.oneof(settle("arrears"), topUp("arrears"), activate)))),
);
