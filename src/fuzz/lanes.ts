// The lanes `cbqs fuzz` runs a campaign on (src/fuzz/campaign.ts): one in this process
// (--jobs 1), or one per worker thread (src/fuzz/worker.ts), each with its own target — its own
// server process or its own temporary directory for a per-call command. A lane does all of a
// run's work where it is, the shrinking and the report files included, and hands back plain
// data: the run's outcome, the report's lines, or the failure's error line.
import { Worker } from "node:worker_threads";
import { existsSync } from "node:fs";
import { count } from "../format.js";
import { OutputError } from "../output-file.js";
import { describeIoError } from "../io-error.js";
import type { Lane } from "./campaign.js";
import { FuzzLane, TargetFailure, type Finding, type RunOutcome } from "./fuzz.js";
import { chainLines, reproduceLine, writeInputs, writeReport, type ReportMeta } from "./report.js";
import { ServerTarget } from "../target/server-target.js";
import { CommandTarget } from "../target/command-target.js";
import { perCall, type ChainTarget } from "../target/target.js";

/** Everything a lane needs, as plain data (it crosses to a worker thread). */
export interface LaneSpec {
  meta: ReportMeta;
  /** Seconds per t8n invocation or server request. */
  timeout: number;
  seed: number;
  shrinkBudget: number;
  /** The report directory. */
  out: string;
}

/** A divergence, shrunk and written: the lines `cbqs fuzz` prints. */
export interface FindingReport {
  /** stdout: the first difference… */
  headline: string;
  /** …then, indented under it: the shrunk chain and what was written… */
  details: string[];
  /** …and last the command line that reproduces it. */
  reproduce: string;
  /** stderr: the report could not be written (the divergence stays the result). */
  writeError: string | null;
  run: number;
}

/** A lane's target failed on a run: the one error line for exit 2. */
export class LaneFailure extends Error {
  override name = "LaneFailure";
}

export interface LaneHooks {
  onShrink: (run: number, candidates: number, size: { blocks: number; txs: number }) => void;
}

/** The implementation under test: a server kept for the run, or a per-call command; `timeout` in seconds per request or call. */
export function makeTarget(mode: ReportMeta["mode"], command: string, timeout: number): ChainTarget {
  const ms = timeout * 1000;
  return mode === "t8n-server" ? new ServerTarget(command, ms) : perCall(new CommandTarget(command, ms));
}

/** A lane in this process. */
export class LocalLane implements Lane<FindingReport> {
  private readonly target: ChainTarget;
  private readonly lane: FuzzLane;
  private halted = false;

  constructor(
    private readonly spec: LaneSpec,
    private readonly hooks: LaneHooks,
  ) {
    this.target = makeTarget(spec.meta.mode, spec.meta.command, spec.timeout);
    this.lane = new FuzzLane(this.target, {
      seed: spec.seed,
      blocks: spec.meta.blocks,
      compare: { stateRoot: spec.meta.stateRoot },
      shrinkBudget: spec.shrinkBudget,
      stopped: () => this.halted,
    });
  }

  async run(run: number): Promise<RunOutcome> {
    try {
      return await this.lane.run(run);
    } catch (err) {
      if (err instanceof TargetFailure) throw new LaneFailure(failureLine(err, this.spec));
      throw err;
    }
  }

  drop(): void {
    this.lane.drop();
  }

  async finish(run: number): Promise<FindingReport> {
    const finding = await this.lane.shrink(run, (candidates, size) => this.hooks.onShrink(run, candidates, size));
    return reportFinding(finding, this.spec, this.halted);
  }

  /** SIGINT/SIGTERM: the target is ended at once; the run under way is abandoned, a shrink keeps its best so far. */
  stop(): void {
    this.halted = true;
    void this.target.close(true);
  }

  close(): Promise<void> {
    return this.target.close();
  }
}

/** The error line of a target that failed, with the block's inputs kept in --out when there was a block. */
function failureLine(err: TargetFailure, spec: LaneSpec): string {
  const flag = spec.meta.mode === "t8n-server" ? "--t8n-server" : "--t8n";
  const where = err.block === null ? `run ${err.run} (opening its session)` : `block ${err.block.height} of run ${err.run}`;
  let kept = "";
  if (err.block !== null) {
    try {
      kept = ` (kept for a look: ${writeInputs(spec.out, err.block, err.stderr).join(", ")}: the block's inputs and the command's stderr)`;
    } catch {
      // the report directory is not writable: the error line alone
    }
  }
  return `${flag} command failed on ${where} (seed ${spec.seed}): ${err.message}${kept}`;
}

const sizeText = (chain: { blocks: number; txs: number }): string => `${count(chain.blocks, "block")}, ${count(chain.txs, "tx", "txs")}`;

/** Writes a finding's report files and words what `cbqs fuzz` prints of it. */
function reportFinding(f: Finding, spec: LaneSpec, interrupted: boolean): FindingReport {
  let wrote: string;
  let writeError: string | null = null;
  try {
    wrote = `wrote ${count(writeReport(spec.out, f, spec.meta).length, "file")} to ${spec.out}: fixture.json (cbqs replay ${spec.out}/fixture.json), report.json, the block's t8n inputs and both outputs`;
  } catch (err) {
    // --out was checked before the campaign; what can still fail here (a full disk) is reported.
    const code = (err as NodeJS.ErrnoException).code;
    if (err instanceof OutputError) writeError = `cannot write the report to ${spec.out}: ${err.message}`;
    else if (code !== undefined) writeError = `cannot write the report to ${spec.out}: ${describeIoError(err)}`;
    else throw err;
    wrote = "no report written";
  }
  const details = [
    `shrunk from ${sizeText(f.original)} to ${sizeText(f.shrunk)} (${count(f.candidates, "candidate chain")}${interrupted ? ", interrupted" : ""})`,
    ...chainLines(f.divergence.summary),
    wrote,
  ];
  return { headline: `DIVERGENCE seed ${f.seed} run ${f.run}: ${f.divergence.text}`, details, reproduce: reproduceLine(spec.meta, f.seed, f.run), writeError, run: f.run };
}

// ---- a lane on a worker thread -------------------------------------------------------------

/** Main thread → worker. */
export type ToWorker = { type: "run"; run: number } | { type: "finish"; run: number } | { type: "drop" } | { type: "stop" } | { type: "close" };
/** Worker → main thread. */
export type FromWorker =
  | { type: "ran"; outcome: RunOutcome }
  | { type: "finished"; report: FindingReport }
  | { type: "failed"; line: string; ours: boolean }
  | { type: "shrink"; run: number; candidates: number; size: { blocks: number; txs: number } };

const WORKER_SCRIPT = new URL("./worker.js", import.meta.url);

/**
 * `jobs` lanes: on worker threads, or all on this thread when this module runs from its
 * TypeScript source (a worker thread cannot load it). Both give the same campaign (the lowest-run
 * rule of src/fuzz/campaign.ts); threads only make our side of each lane run on its own core.
 */
export function makeLanes(jobs: number, spec: LaneSpec, hooks: LaneHooks): Array<LocalLane | WorkerLane> {
  if (jobs === 1 || !existsSync(WORKER_SCRIPT)) return Array.from({ length: jobs }, () => new LocalLane(spec, hooks));
  return Array.from({ length: jobs }, () => new WorkerLane(spec, hooks));
}

/** A lane on its own worker thread (src/fuzz/worker.ts): one request at a time. */
export class WorkerLane implements Lane<FindingReport> {
  private readonly worker: Worker;
  private waiting: { resolve: (m: FromWorker) => void; reject: (e: Error) => void } | null = null;
  private dead: Error | null = null;

  constructor(spec: LaneSpec, hooks: LaneHooks) {
    this.worker = new Worker(WORKER_SCRIPT, { workerData: spec });
    this.worker.on("message", (m: FromWorker) => {
      if (m.type === "shrink") return hooks.onShrink(m.run, m.candidates, m.size);
      const w = this.waiting;
      this.waiting = null;
      w?.resolve(m);
    });
    this.worker.on("error", (err) => this.fail(err));
    this.worker.on("exit", (code) => this.fail(new Error(`the fuzz worker exited (status ${code})`)));
  }

  private fail(err: Error): void {
    this.dead ??= err;
    const w = this.waiting;
    this.waiting = null;
    w?.reject(err);
  }

  private ask(m: ToWorker): Promise<FromWorker> {
    if (this.dead !== null) return Promise.reject(this.dead);
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
      this.worker.postMessage(m);
    }).then((answer) => {
      const a = answer as FromWorker;
      if (a.type === "failed") throw a.ours ? new Error(a.line) : new LaneFailure(a.line);
      return a;
    });
  }

  async run(run: number): Promise<RunOutcome> {
    return ((await this.ask({ type: "run", run })) as { outcome: RunOutcome }).outcome;
  }

  async finish(run: number): Promise<FindingReport> {
    return ((await this.ask({ type: "finish", run })) as { report: FindingReport }).report;
  }

  drop(): void {
    this.worker.postMessage({ type: "drop" } satisfies ToWorker);
  }

  stop(): void {
    if (this.dead === null) this.worker.postMessage({ type: "stop" } satisfies ToWorker);
  }

  /** Ends the worker (its target is closed first, so no server or command outlives it). */
  async close(): Promise<void> {
    if (this.dead !== null) return;
    const exited = new Promise<void>((resolve) => this.worker.once("exit", () => resolve()));
    this.worker.postMessage({ type: "close" } satisfies ToWorker);
    await exited;
  }
}
