// What a job of src/jobs/pool.ts is, per command: replay one fixture file, consume one fixture
// through the implementation under test, fill one scenario. A handler lives on one worker thread
// (or on the main thread) and runs its jobs one at a time; its inputs and outputs are plain data
// (they cross threads by structured clone, bigint included).
import { performance } from "node:perf_hooks";
import type { FixtureReport } from "../harness/replay.js";
import type { ConsumeReport } from "../consume/consume.js";
import type { FixtureSummary } from "../harness/corpus-index.js";
import type { ChainTarget } from "../target/target.js";

export type JobSpec =
  | { kind: "replay"; toHeight: bigint | null }
  | { kind: "consume"; mode: "t8n" | "t8n-server"; command: string; timeout: number; stateRoot: boolean }
  | { kind: "fill"; postState: "none" | "final" | "every" };

/** A fixture (replay, consume) or a scenario (fill) file, with its test id. */
export interface JobInput {
  file: string;
  id: string;
}

/** A filled scenario: its fixture text and index summary, or why it was not filled. */
export type FillOutput =
  | { kind: "fill"; file: string; text: string; summary: FixtureSummary }
  | { kind: "fill"; file: string; failed: string }
  | { kind: "fill"; file: string; unusable: { path: string; reason: string } };

export type JobOutput = ({ kind: "replay"; seconds: number } & FixtureReport) | ({ kind: "consume" } & ConsumeReport) | FillOutput;

/** How far a job under way is: blocks done of its total, transactions done. */
export interface JobProgress {
  blocks: number;
  total: number;
  txs: number;
}

export interface Handler {
  /** One job; undefined when it was stopped before it finished. `progress` is told after each block. */
  run(input: JobInput, progress: (p: JobProgress) => void): Promise<JobOutput | undefined>;
  /** Ends the job under way as soon as it can (a target process is killed). */
  stop(): void;
  close(): Promise<void>;
}

export function makeHandler(spec: JobSpec): Handler {
  switch (spec.kind) {
    case "replay":
      return replayHandler(spec.toHeight);
    case "consume":
      return consumeHandler(spec);
    case "fill":
      return fillHandler(spec.postState);
  }
}

function replayHandler(toHeight: bigint | null): Handler {
  return {
    async run(input, progress) {
      const { replayFile } = await import("../harness/replay.js");
      const started = performance.now();
      const report = replayFile(input.file, { ...(toHeight === null ? {} : { toHeight }), onBlock: (p) => progress({ blocks: p.blocksDone, total: p.blocksTotal, txs: p.txsDone }) });
      return { kind: "replay", ...report, seconds: (performance.now() - started) / 1000 };
    },
    stop: () => undefined,
    close: () => Promise.resolve(),
  };
}

function consumeHandler(spec: Extract<JobSpec, { kind: "consume" }>): Handler {
  let target: ChainTarget | null = null;
  let stopped = false;
  return {
    async run(input, progress) {
      const [{ consumeFile }, { makeTarget }] = await Promise.all([import("../consume/consume.js"), import("../fuzz/lanes.js")]);
      target ??= makeTarget(spec.mode, spec.command, spec.timeout);
      const report = await consumeFile(input.file, input.id, target, {
        compare: { stateRoot: spec.stateRoot },
        stopped: () => stopped,
        targetName: `${spec.mode} ${spec.command}`,
        onBlock: (blocks, total, _height, txs) => progress({ blocks, total, txs }),
      });
      // The next fixture gets a fresh process: whatever state a failed one was left in is not trusted.
      if (report?.targetFailed === true) await target.close();
      return report === null ? undefined : { kind: "consume", ...report };
    },
    stop() {
      stopped = true;
      void target?.close(true);
    },
    close: () => target?.close() ?? Promise.resolve(),
  };
}

function fillHandler(postState: "none" | "final" | "every"): Handler {
  return {
    async run(input) {
      const [{ FillError, fillScenario }, { readScenario, inFile }, { fixtureJsonText }, { fixtureSummary }, { GenesisError }] = await Promise.all([
        import("../harness/fill.js"),
        import("../harness/documents.js"),
        import("../harness/fixture.js"),
        import("../harness/corpus-index.js"),
        import("../engine/errors.js"),
      ]);
      const scenario = readScenario(input.file);
      try {
        const fixture = fillScenario(scenario, postState);
        return { kind: "fill", file: input.file, text: inFile(input.file, () => fixtureJsonText(fixture)), summary: fixtureSummary(fixture) };
      } catch (err) {
        if (err instanceof GenesisError) return { kind: "fill", file: input.file, unusable: { path: scenario.genesisPath, reason: `invalid genesis: ${err.message}` } };
        if (err instanceof FillError) return { kind: "fill", file: input.file, failed: err.message };
        throw err;
      }
    },
    stop: () => undefined,
    close: () => Promise.resolve(),
  };
}
