// A state proof against a chain's own root: replay a fixture from genesis through its last block
// at or below `height` (as `cbqs replay --to-height` does, every root checked) and prove `key`
// against the state_root of that block — the root the chain's header carries, not the root of a
// dump re-committed as one batch.
import type { Fixture } from "./fixture.js";
import { replayFixtureSteps, type Mismatch } from "./replay.js";
import { finish, type Steps } from "../steps.js";
import { MemoryStateStore } from "../../state/store/store.js";
import { createStateCommitment } from "../../state/qmdb/index.js";
import { proveKey, type ExclusionProof, type StateProof } from "../../state/qmdb/proof.js";

export type HeightProof = { mismatch: Mismatch } | { height: bigint; root: Uint8Array; proof: StateProof | ExclusionProof };

export function proveAtHeight(fixture: Fixture, height: bigint, key: Uint8Array): HeightProof {
  return finish(proveAtHeightSteps(fixture, height, key));
}

/** proveAtHeight unit by unit: a unit is one block replayed (src/steps.ts). */
export function* proveAtHeightSteps(fixture: Fixture, height: bigint, key: Uint8Array): Steps<HeightProof> {
  const commitment = createStateCommitment();
  const store = new MemoryStateStore(commitment);
  const outcome = yield* replayFixtureSteps(fixture, { toHeight: height, store });
  if (outcome.mismatch !== null) return { mismatch: outcome.mismatch };
  const reached = outcome.blocks === 0 ? 0n : fixture.blocks[outcome.blocks - 1]!.height;
  const root = outcome.blocks === 0 ? fixture.genesis.state_root : fixture.blocks[outcome.blocks - 1]!.state_root;
  return { height: reached, root, proof: proveKey(commitment.db, key) };
}
