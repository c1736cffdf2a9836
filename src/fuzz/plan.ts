// A fuzz chain as data: a genesis document and blocks of model actions (src/fuzz/model.ts) plus
// junk envelopes — transactions the block cannot contain (t8n `rejected`). Plans are generated
// from (seed, run index) alone, so a run is reproduced by its two numbers, and they are plain
// data, so the shrinker can delete blocks, actions and junk and re-interpret what is left.
import fc from "fast-check";
import { gapArb, actionArb, SETUP_ACTIONS, type Action, type BlockPlan } from "./model.js";
import { scenarioArb } from "./scenarios.js";
import { genesisArb, type GenesisJson } from "./world.js";

/**
 * An envelope the block cannot contain, inserted at position `at` (mod the block's length + 1):
 * random bytes, a valid envelope truncated / with a trailing byte / version 2 / an unknown kind
 * / another chain_id / a nonce far ahead, or a replay of an envelope an earlier block already
 * consumed (a stale nonce). `pick` chooses the envelope it is made from.
 */
export interface Junk {
  kind: "bytes" | "truncate" | "trailing" | "version" | "kind" | "chain" | "nonce" | "replay";
  at: number;
  pick: number;
  bytes: Uint8Array;
}

export interface FuzzBlock extends BlockPlan {
  junk: Junk[];
}

export interface FuzzChain {
  genesis: GenesisJson;
  blocks: FuzzBlock[];
}

/** Actions per block (the setup block has the setup actions on top) and junk envelopes per block. */
export const MAX_ACTIONS = 6;
export const MAX_JUNK = 2;

const junkArb: fc.Arbitrary<Junk> = fc.record({
  kind: fc.constantFrom("bytes", "truncate", "trailing", "version", "kind", "chain", "nonce", "replay", "replay"),
  at: fc.nat({ max: 64 }),
  pick: fc.nat({ max: 1_000 }),
  bytes: fc.uint8Array({ maxLength: 48 }),
});

const blockArb: fc.Arbitrary<FuzzBlock> = fc.record({
  gap: gapArb,
  actions: fc.array(actionArb, { maxLength: MAX_ACTIONS }),
  junk: fc.oneof({ arbitrary: fc.constant([] as Junk[]), weight: 3 }, { arbitrary: fc.array(junkArb, { minLength: 1, maxLength: MAX_JUNK }), weight: 1 }),
});

/**
 * A random block, or a directed scenario's blocks (src/fuzz/scenarios.ts) with up to four random
 * actions after the directed ones in each block, no junk.
 */
const segmentArb: fc.Arbitrary<FuzzBlock[]> = fc.oneof(
  { arbitrary: blockArb.map((b) => [b]), weight: 3 },
  {
    arbitrary: fc.tuple(scenarioArb, fc.array(fc.array(actionArb, { maxLength: 4 }), { minLength: 3, maxLength: 3 })).map(([plans, extra]) =>
      plans.map((b, i) => ({ ...b, actions: [...b.actions, ...extra[i]!], junk: [] })),
    ),
    weight: 1,
  },
);

/** Exactly `blocks` blocks (segments cut at the end); the first starts with the setup actions (providers, three streams). */
export const chainArb = (blocks: number): fc.Arbitrary<FuzzChain> =>
  fc
    .record({ genesis: genesisArb, segments: fc.array(segmentArb, { minLength: blocks, maxLength: blocks }) })
    .map(({ genesis, segments }) => ({
      genesis,
      blocks: segments
        .flat()
        .slice(0, blocks)
        .map((b, i) => (i === 0 ? { ...b, actions: [...SETUP_ACTIONS, ...b.actions] as Action[] } : b)),
    }));

/** The 32-bit fast-check seed of run `run` under the user's `seed` (murmur3's finalizer over both). */
export function runSeed(seed: number, run: number): number {
  let h = (Math.imul(seed >>> 0, 0x9e3779b1) ^ Math.imul(run >>> 0, 0x85ebca77)) >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35) >>> 0;
  h ^= h >>> 16;
  return h | 0;
}

/** The chain of run `run` under `seed`: a pure function of the two numbers and `blocks`. */
export function generateChain(seed: number, run: number, blocks: number): FuzzChain {
  return fc.sample(chainArb(blocks), { seed: runSeed(seed, run), numRuns: 1 })[0]!;
}

export const chainSize = (plan: FuzzChain): { blocks: number; txs: number } => ({
  blocks: plan.blocks.length,
  txs: plan.blocks.reduce((n, b) => n + b.actions.length + b.junk.length, 0),
});
