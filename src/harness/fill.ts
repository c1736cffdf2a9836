// `fill` (execution-spec-tests convention): run a scenario through the runner's pipeline
// (src/scenario/run.ts) and record the chain resolved to bytes — genesis source bytes, raw
// envelopes, and every consensus output the run document reports — as a cbqs-fixture/v1.
// The filled fixture is then replayed once to capture post-state dumps, which also proves the
// runner and the replayer agree on it before anything is written.
import { fromHex } from "../bytes.js";
import type { Scenario } from "../scenario/parse.js";
import { runScenario, type RunReceipt } from "../scenario/run.js";
import { genesisHash, headerHash } from "./execute.js";
import type { Fixture, FixtureBlock, FixtureReceipt } from "./fixture.js";
import { newStore, replayFixture, type Mismatch } from "./replay.js";

export type PostStateMode = "none" | "final" | "every";

export class FillError extends Error {
  override name = "FillError";
}

function receiptOf(r: RunReceipt): FixtureReceipt {
  return {
    tx_hash: fromHex(r.tx_hash, 32),
    status: r.status,
    error: r.error === null ? null : { code: Number(r.error.code), name: r.error.name },
    events: r.events.map((e) => ({ emitter: fromHex(e.emitter, 20), topic: e.topic, payload: fromHex(e.payload) })),
    cycles: BigInt(r.cycles),
    cells: BigInt(r.cells),
  };
}

export function fillScenario(scenario: Scenario, description: string, postState: PostStateMode = "every"): Fixture {
  const run = runScenario(scenario);
  if (run.failure !== null) throw new FillError(`scenario ${scenario.name} fails its own expectations: ${run.failure.message}`);
  const doc = run.document;
  const instance = fromHex(doc.chain_instance_id, 32);
  const genesisRoot = fromHex(doc.genesis_state_root, 32);
  let parent = genesisHash(instance, scenario.config.timestamp, genesisRoot);
  const blocks: FixtureBlock[] = doc.blocks.map((rb, i) => {
    const sb = scenario.blocks[i]!;
    const roots = { tx_root: fromHex(rb.tx_root, 32), receipt_root: fromHex(rb.receipt_root, 32), logs_root: fromHex(rb.logs_root, 32) };
    const stateRoot = fromHex(rb.state_root, 32);
    parent = headerHash(instance, sb.height, sb.timestamp, parent, stateRoot, roots);
    return {
      height: BigInt(rb.height),
      timestamp: sb.timestamp,
      transactions: run.transactions[i]!,
      effective_rent_height: BigInt(rb.effective_rent_height),
      state_root: stateRoot,
      ...roots,
      block_hash: parent,
      gas_vectors_sha256: rb.gas_vectors_sha256,
      receipts: rb.receipts.map(receiptOf),
    };
  });
  const fixture: Fixture = {
    name: scenario.name,
    description,
    genesis: { source: scenario.sourceBytes, config: scenario.config, chain_instance_id: instance, state_root: genesisRoot },
    blocks,
  };
  const last = blocks.length - 1;
  const store = newStore();
  const check = replayFixture(fixture, {
    store,
    onBlock: (p) => {
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
