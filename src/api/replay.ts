// replayFixture as the package offers it: the harness's replay without its pipeline internals
// (the worker thread a `cbqs replay --pipeline` run keeps across fixtures is the CLI's own).
import type { FastPathChoice } from "../engine/fast-paths.js";
import type { Fixture } from "../harness/fixture.js";
import { replayFixture as replayInHarness, type ExecutedBlock, type ReplayOutcome, type ReplayProgress } from "../harness/replay.js";
import type { StateStore } from "../../state/kv/interface.js";

export type { ReplayOutcome };

export interface ReplayOptions {
  /** The last height replayed (inclusive); the whole fixture by default. */
  toHeight?: bigint;
  /** The store executed into (a fresh one by default). Not with `pipeline`. */
  store?: StateStore;
  /** Each block as it is checked. */
  onBlock?: (p: ReplayProgress, executed: ExecutedBlock) => void;
  /** Merkleize on a second thread while the next block executes: the same outcome and `onBlock` calls. */
  pipeline?: boolean;
  /** The engine's fast paths (all unless told); both false is the spec path. */
  engine?: Pick<FastPathChoice, "opensslEd25519" | "boundsMemo">;
  /** Pipelined only: block index `i` was executed again because a signature answered valid ahead of its check was invalid. */
  onReexecute?: (i: number) => void;
}

/** Replays `fixture` up to `toHeight` (inclusive), stopping at the first mismatch. */
export function replayFixture(fixture: Fixture, options: ReplayOptions = {}): ReplayOutcome {
  return replayInHarness(fixture, options);
}
