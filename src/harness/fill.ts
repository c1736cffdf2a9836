// `fill` (execution-spec-tests convention): run a scenario through the runner's pipeline
// (src/scenario/run.ts) and record the chain resolved to bytes — genesis source bytes, raw
// envelopes, and every consensus output the run document reports — as a cbqs-fixture/v1.
// The filled fixture is then replayed once to capture post-state dumps, which also proves the
// runner and the replayer agree on it before anything is written.
import { echo } from "../bounds.js";
import { fromHex } from "../bytes.js";
import type { Scenario } from "../scenario/parse.js";
import { runScenarioSteps } from "../scenario/run.js";
import { finish, type Steps } from "../steps.js";
import type { Fixture, FixtureBlock } from "./fixture.js";
import type { ProgressState } from "./progress.js";
import { newStore, replayFixtureSteps, type Mismatch } from "./replay.js";

export type PostStateMode = "none" | "final" | "every";

export class FillError extends Error {
  override name = "FillError";
}

/** Progress of a fill: executing the scenario, then checking it by replay. */
export type FillProgress = (phase: "executing" | "checking", state: ProgressState) => void;

export function fillScenario(scenario: Scenario, postState: PostStateMode = "every", onProgress?: FillProgress): Fixture {
  return finish(fillSteps(scenario, postState, onProgress));
}

/** fillScenario unit by unit: a unit is one block executed or checked (src/steps.ts). */
export function* fillSteps(scenario: Scenario, postState: PostStateMode = "every", onProgress?: FillProgress): Steps<Fixture> {
  const total = scenario.blocks.length;
  const lastHeight = total === 0 ? 0n : scenario.blocks[total - 1]!.height;
  let done = 0;
  let txs = 0;
  const run = yield* runScenarioSteps(scenario, (b) => {
    done++;
    txs += b.run.receipts.length;
    onProgress?.("executing", { done, total, unit: "blocks", height: { at: BigInt(b.run.height), last: lastHeight }, txs });
  });
  if (run.failure !== null) throw new FillError(`scenario ${echo(scenario.name)} fails its own expectations: ${run.failure.message}`);
  const doc = run.document;
  const blocks: FixtureBlock[] = doc.blocks.map((rb, i) => {
    const sealed = run.blocks[i]!;
    return {
      height: BigInt(rb.height),
      timestamp: scenario.blocks[i]!.timestamp,
      transactions: sealed.envelopes,
      effective_rent_height: BigInt(rb.effective_rent_height),
      state_root: fromHex(rb.state_root, 32),
      tx_root: sealed.results.tx_root,
      receipt_root: sealed.results.receipt_root,
      logs_root: sealed.results.logs_root,
      block_hash: sealed.blockHash,
      gas_vectors_sha256: rb.gas_vectors_sha256,
      receipts: sealed.results.receipts,
    };
  });
  const fixture: Fixture = {
    name: scenario.name,
    description: scenario.description,
    genesis: {
      source: scenario.sourceBytes,
      config: scenario.config,
      chain_instance_id: fromHex(doc.chain_instance_id, 32),
      state_root: fromHex(doc.genesis_state_root, 32),
    },
    blocks,
  };
  const last = blocks.length - 1;
  const store = newStore();
  const check = yield* replayFixtureSteps(fixture, {
    store,
    onBlock: (p) => {
      onProgress?.("checking", { done: p.blocksDone, total: p.blocksTotal, unit: "blocks", height: { at: p.height, last: p.lastHeight }, txs: p.txsDone });
      const i = p.blocksDone - 1;
      if (postState === "every" || (postState === "final" && i === last)) blocks[i]!.post_state = [...store.entries()];
    },
  });
  return verified(fixture, check.mismatch);
}

function verified(fixture: Fixture, mismatch: Mismatch | null): Fixture {
  if (mismatch !== null) {
    throw new FillError(
      `runner and replayer disagree on ${fixture.name} at block ${mismatch.height} ${mismatch.field}: run ${mismatch.expected}, replay ${mismatch.actual}`,
    );
  }
  return fixture;
}
