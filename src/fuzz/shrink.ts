// Delta debugging over a diverging fuzz chain (Zeller's ddmin, complements only): drop whole
// blocks, then each block's actions and junk envelopes, then turn targeted gaps into one-block
// steps and the genesis into the plain one, keeping every change after which the chain still
// diverges — anywhere, not necessarily in the same field: any divergence is a bug to show.
// Because a plan is re-interpreted against the state, a kept deletion may change later
// transactions; the result is 1-minimal in blocks, actions and junk when the budget allows.
import type { FuzzChain, FuzzBlock } from "./plan.js";
import { PLAIN_GENESIS } from "./world.js";

export interface ShrinkTest<D> {
  /** The divergence of `plan`, or null when it no longer diverges. */
  (plan: FuzzChain): Promise<D | null>;
}

export interface ShrinkResult<D> {
  plan: FuzzChain;
  divergence: D;
  /** Candidate chains executed. */
  candidates: number;
}

export interface ShrinkOptions {
  /** Stop after this many candidates (each one runs the command once per block up to its divergence). */
  budget: number;
  /** Polled between candidates (SIGINT/SIGTERM): keep the best chain so far. */
  stopped?: () => boolean;
  onCandidate?: (best: FuzzChain, candidates: number) => void;
}

/** `index` of the diverging block, so everything after it can go. */
export async function shrink<D extends { index: number }>(
  start: { plan: FuzzChain; divergence: D },
  test: ShrinkTest<D>,
  options: ShrinkOptions,
): Promise<ShrinkResult<D>> {
  let best = truncate(start.plan, start.divergence.index);
  let divergence = start.divergence;
  let candidates = 0;
  const exhausted = () => candidates >= options.budget || options.stopped?.() === true;

  const attempt = async (candidate: FuzzChain): Promise<boolean> => {
    if (exhausted()) return false;
    candidates++;
    const d = await test(candidate);
    options.onCandidate?.(best, candidates);
    if (d === null) return false;
    best = truncate(candidate, d.index);
    divergence = d;
    return true;
  };

  /** ddmin over one list of the current best chain (re-read after every kept change). */
  const reduce = async <T>(get: () => T[] | null, make: (items: T[]) => FuzzChain, min: number): Promise<boolean> => {
    let changed = false;
    let chunks = 2;
    for (;;) {
      const items = get();
      if (items === null || items.length <= min || exhausted()) return changed;
      const size = Math.ceil(items.length / chunks);
      let removed = false;
      for (let from = 0; from < items.length && !removed; from += size) {
        // At least two chunks, so a complement keeps half the list or more: never fewer than `min` items.
        removed = await attempt(make([...items.slice(0, from), ...items.slice(from + size)]));
      }
      if (removed) {
        changed = true;
        chunks = Math.max(chunks - 1, 2);
      } else if (size === 1) {
        return changed;
      } else {
        chunks = Math.min(chunks * 2, items.length);
      }
    }
  };

  const withBlock = (b: number, change: Partial<FuzzBlock>): FuzzChain => ({
    ...best,
    blocks: best.blocks.map((block, i) => (i === b ? { ...block, ...change } : block)),
  });

  while (!exhausted()) {
    let changed = await reduce(() => best.blocks, (blocks) => ({ ...best, blocks }), 1);
    for (let b = best.blocks.length - 1; b >= 0; b--) {
      changed = (await reduce(() => best.blocks[b]?.actions ?? null, (actions) => withBlock(b, { actions }), 0)) || changed;
      changed = (await reduce(() => best.blocks[b]?.junk ?? null, (junk) => withBlock(b, { junk }), 0)) || changed;
    }
    for (let b = 0; b < best.blocks.length; b++) {
      const gap = best.blocks[b]!.gap;
      if (gap.k !== "step" || gap.blocks !== 1) changed = (await attempt(withBlock(b, { gap: { k: "step", blocks: 1 } }))) || changed;
    }
    changed = (await simplifyGenesis()) || changed;
    if (!changed) break;
  }
  return { plan: best, divergence, candidates };

  async function simplifyGenesis(): Promise<boolean> {
    if (JSON.stringify(best.genesis) === JSON.stringify(PLAIN_GENESIS)) return false;
    if (await attempt({ ...best, genesis: PLAIN_GENESIS })) return true;
    let changed = false;
    for (const field of ["cycle_price", "cell_price"]) {
      if (best.genesis[field] !== "0") changed = (await attempt({ ...best, genesis: { ...best.genesis, [field]: "0" } })) || changed;
    }
    const params = best.genesis["params"] as Record<string, string>;
    for (const name of Object.keys(params)) {
      // The two rent shares only leave together (their sum is checked at genesis).
      if (name === "cbqs.rent.platform_bps") continue;
      const rest = { ...(best.genesis["params"] as Record<string, string>) };
      delete rest[name];
      if (name === "cbqs.rent.provider_bps") delete rest["cbqs.rent.platform_bps"];
      changed = (await attempt({ ...best, genesis: { ...best.genesis, params: rest } })) || changed;
    }
    return changed;
  }
}

/** The chain up to and including block `index`. */
export const truncate = (plan: FuzzChain, index: number): FuzzChain => ({ ...plan, blocks: plan.blocks.slice(0, index + 1) });
