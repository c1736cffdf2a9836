// Engine invariants under random instruction sequences (fast-check). CI runs a few dozen
// short sequences; CBQS_PROPERTY_RUNS raises it for long local runs.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { toHex } from "../../src/bytes.js";
import type { BlockInput } from "../../src/chain/types.js";
import {
  blocksArb,
  invariantViolation,
  newChain,
  NUM_RUNS,
  setupBlock,
  TerminalWatch,
  toBlock,
  toTransaction,
  actionArb,
  type BlockPlan,
} from "./model.js";

/** Executes the plan on a fresh chain, checking invariants after every block. */
function execute(plans: BlockPlan[]): { blocks: BlockInput[]; roots: string[]; violation: string | null } {
  const { chain, store } = newChain();
  const watch = new TerminalWatch();
  const blocks: BlockInput[] = [setupBlock()];
  const roots = [toHex(chain.executeBlock(blocks[0]!).stateRoot)];
  let height = 1n;
  for (const plan of plans) {
    height += BigInt(plan.gap);
    const block = toBlock(plan, chain, height);
    blocks.push(block);
    roots.push(toHex(chain.executeBlock(block).stateRoot));
    const violation = invariantViolation(chain, store) ?? watch.check(chain);
    if (violation !== null) return { blocks, roots, violation: `after block ${height}: ${violation}` };
  }
  return { blocks, roots, violation: null };
}

describe("engine properties (CIP-39 §4.1, §4.3, §5, §6.1; CIP-4 §6.3 determinism)", () => {
  it("§5 custody ≥ Σ escrow, CBY conserved, §4.3/§5 counters match live records, §4.1 key streams mirror, §6.1 Active ⇔ no pins, terminal absorbing — after every block", () => {
    fc.assert(
      fc.property(blocksArb(12, 5), (plans) => {
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
        const { chain } = newChain();
        const again = first.blocks.map((b) => toHex(chain.executeBlock(b).stateRoot));
        expect(again).toEqual(first.roots);
      }),
      { numRuns: Math.max(5, Math.floor(NUM_RUNS / 3)) },
    );
  });

  it("§5 compute-then-commit: a rejected transaction alone in its block leaves the same state root as the empty block", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ gap: fc.integer({ min: 1, max: 12 }), action: actionArb }), { minLength: 1, maxLength: 25 }),
        (steps) => {
          const a = newChain().chain;
          const b = newChain().chain;
          const reg = setupBlock();
          a.executeBlock(reg);
          b.executeBlock(reg);
          let height = 1n;
          for (const step of steps) {
            height += BigInt(step.gap);
            const tx = toTransaction(step.action, a, height);
            const outcome = a.executeBlock({ height, timestamp: height, txs: [tx] });
            const rejected = outcome.outcomes[0]!.status === "rejected";
            if (rejected) expect(outcome.outcomes[0]!.events).toEqual([]);
            const other = b.executeBlock({ height, timestamp: height, txs: rejected ? [] : [tx] });
            expect(toHex(outcome.stateRoot), `${step.action.k} ${outcome.outcomes[0]!.error?.name ?? "ok"}`).toBe(toHex(other.stateRoot));
          }
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });
});
