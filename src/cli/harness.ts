// The replay harness commands (docs/fixtures.md): `cbqs fill`, `cbqs replay`, `cbqs t8n`,
// `cbqs trace`, `cbqs diff`. Exit 0 = everything matches, 1 = a mismatch/difference,
// 2 = unusable input (one line naming the file, block and field; never a stack trace).
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import type { Command } from "commander";
import { GenesisError } from "../engine/errors.js";
import { ScenarioError } from "../scenario/json.js";
import { parseScenarioText } from "../scenario/parse.js";
import { FillError, fillScenario, type PostStateMode } from "../harness/fill.js";
import { fixtureFileName, fixtureJsonText } from "../harness/fixture.js";
import { ProgressLine, rate, Stopwatch } from "../harness/progress.js";
import { describeDiff, DiffInputError, parseForDiff } from "../harness/diff.js";
import { fixtureFiles, HarnessInputError, readFixture, readJson, readText } from "../harness/files.js";
import { newStore, replayFixture, ReplayInputError, type Mismatch } from "../harness/replay.js";
import { parseEnv, parseTxs, T8nInputError, transition } from "../harness/t8n.js";
import { blockTraceLines, TracingStore } from "../harness/trace.js";
import { registryRecords } from "../harness/records.js";
import { InclusionError, proveInclusion, type InclusionKind } from "../harness/inclusion.js";
import { dumpState, DumpError, loadDump } from "../../state/dump.js";
import { inclusionProofToJson } from "../../state/roots.js";
import { replayIntoDb, StoredChainError } from "../node/replay-db.js";
import { EXIT_BAD_INPUT, EXIT_OK, EXIT_REJECT, oneLine, UsageError } from "./common.js";
import { openStore, SNAPSHOT_INTERVAL_HELP, snapshotInterval } from "./store.js";

export function register(program: Command): void {
  registerFill(program);
  registerReplay(program);
  registerT8n(program);
  registerTrace(program);
  registerDiff(program);
  registerProveInclusion(program, "tx");
  registerProveInclusion(program, "receipt");
}

const asUsage = (err: unknown): never => {
  if (err instanceof HarnessInputError) throw new UsageError(err.message);
  throw err;
};

/** Writes a file, turning a system error into the one-line "cannot write <file>: <reason>" (exit 2). */
function writeOutput(path: string, data: string | Uint8Array): void {
  try {
    writeFileSync(path, data);
  } catch (err) {
    throw new UsageError(`cannot write ${path}: ${ioReason(err)}`);
  }
}

const ioReason = (err: unknown): string => (err as NodeJS.ErrnoException).code ?? String(err);

function registerFill(program: Command): void {
  program
    .command("fill")
    .description("run cbqs-scenario/v1 documents and write one cbqs-fixture/v1 per scenario (bytes + expected results)")
    .argument("<scenario...>", "scenario JSON files")
    .requiredOption("-o, --output <dir>", "directory for the fixtures (file name from the scenario name)")
    .option("--post-state <mode>", "post-state dumps: every block, final block only, or none", "every")
    .option("--gzip", "write <name>.json.gz")
    .action((files: string[], opts: { output: string; postState: string; gzip?: boolean }) => {
      if (!["none", "final", "every"].includes(opts.postState)) throw new UsageError(`--post-state must be none, final or every (got ${opts.postState})`);
      const outputs = new Map<string, string>();
      const texts: Array<{ path: string; text: string }> = [];
      let failed = 0;
      for (const file of files) {
        let text: string;
        try {
          text = readText(file);
        } catch (err) {
          return asUsage(err);
        }
        let scenario: ReturnType<typeof parseScenarioText>;
        try {
          scenario = parseScenarioText(text);
        } catch (err) {
          if (err instanceof ScenarioError) throw new UsageError(`${file}: ${err.message}`);
          throw err;
        }
        const name = fixtureFileName(scenario.name) + (opts.gzip ? ".gz" : "");
        if (outputs.has(name)) throw new UsageError(`${file}: scenario name "${scenario.name}" is also used by ${outputs.get(name)}`);
        outputs.set(name, file);
        let fixtureText: string;
        try {
          fixtureText = fixtureJsonText(fillScenario(scenario, scenarioDescription(text), opts.postState as PostStateMode));
        } catch (err) {
          if (err instanceof GenesisError) throw new UsageError(`${file}: invalid genesis: ${err.message}`);
          if (err instanceof ScenarioError) throw new UsageError(`${file}: ${err.message}`);
          if (!(err instanceof FillError)) throw err;
          // A scenario that fails is reported and skipped; the others are still filled.
          process.stderr.write(`cbqs: ${oneLine(`${file}: ${err.message}`)}\n`);
          failed++;
          continue;
        }
        texts.push({ path: join(opts.output, name), text: fixtureText });
      }
      try {
        mkdirSync(opts.output, { recursive: true });
      } catch (err) {
        throw new UsageError(`cannot write ${opts.output}: ${ioReason(err)}`);
      }
      for (const { path, text } of texts) {
        // level 9 and no header mtime (zlib never writes one): byte-stable output.
        writeOutput(path, opts.gzip ? gzipSync(text, { level: 9 }) : text);
        process.stdout.write(`${path}\n`);
      }
      process.exitCode = failed > 0 ? EXIT_REJECT : EXIT_OK;
    });
}

function scenarioDescription(text: string): string {
  const d = (JSON.parse(text) as { description?: unknown }).description;
  return typeof d === "string" ? d : "";
}

interface FixtureReport {
  file: string;
  name: string | null;
  status: "ok" | "mismatch" | "unusable";
  /** Counted as numbers; written as §1 decimal strings. */
  blocks: number;
  txs: number;
  mismatch?: { height: string; path: string; field: string; expected: string; actual: string; details: string[] };
  error?: string;
}

export function mismatchLines(file: string, m: Mismatch): string[] {
  const where = m.height === 0n ? "genesis" : `block ${m.height}`;
  // Values echo fixture content: terminal-safe like every error line.
  return [oneLine(`MISMATCH ${file}: ${where}: ${m.field} (${m.path}): expected ${m.expected} got ${m.actual}`), ...m.details.map((d) => `  ${oneLine(d)}`)];
}

function registerReplay(program: Command): void {
  program
    .command("replay")
    .description("re-execute cbqs-fixture/v1 fixtures from genesis and check every root, receipt and digest")
    .argument("<fixture>", "fixture file (.json or .json.gz) or a directory of them")
    .option("--to-height <n>", "stop after the last block at or below this height")
    .option("--quiet", "no progress line")
    .option("--json", "print a cbqs-replay/v1 JSON report instead of text")
    .option("--trace <file>", "write a cbqs-trace/v1 JSON line per transaction (single fixture only)")
    .option("--db <dir>", "commit every verified block to this store (LMDB) and, run again, resume after its last block (single fixture only)")
    .option("--snapshot-interval <n>", SNAPSHOT_INTERVAL_HELP)
    .action((target: string, opts: { toHeight?: string; quiet?: boolean; json?: boolean; trace?: string; db?: string; snapshotInterval?: string }) => {
      let toHeight: bigint | undefined;
      if (opts.toHeight !== undefined) {
        if (!/^[0-9]+$/.test(opts.toHeight)) throw new UsageError(`--to-height must be a decimal integer (got ${opts.toHeight})`);
        toHeight = BigInt(opts.toHeight);
      }
      if (opts.db !== undefined) {
        if (opts.trace !== undefined) throw new UsageError("--trace and --db are exclusive");
        const interval = snapshotInterval(opts.snapshotInterval);
        return replayIntoStore(target, opts.db, { toHeight, interval, progress: !opts.quiet && process.stderr.isTTY === true && !opts.json, json: opts.json === true });
      }
      if (opts.snapshotInterval !== undefined) throw new UsageError("--snapshot-interval needs --db");
      let files: string[];
      try {
        files = fixtureFiles(target);
      } catch (err) {
        return asUsage(err);
      }
      if (opts.trace !== undefined && files.length !== 1) throw new UsageError("--trace needs a single fixture file, not a directory");
      const clock = new Stopwatch();
      const trace = opts.trace === undefined ? null : new TraceFile(opts.trace);
      let reports: FixtureReport[];
      try {
        reports = files.map((file) => replayOne(file, toHeight, !opts.quiet && process.stderr.isTTY === true && !opts.json, trace));
      } finally {
        trace?.close();
      }
      const seconds = clock.seconds();
      const count = (s: FixtureReport["status"]) => reports.filter((r) => r.status === s).length;
      const blocks = reports.reduce((n, r) => n + r.blocks, 0);
      const txs = reports.reduce((n, r) => n + r.txs, 0);
      const summary =
        `replay: ${reports.length} fixture(s): ${count("ok")} ok, ${count("mismatch")} mismatch, ${count("unusable")} unusable; ` +
        `${blocks} blocks, ${txs} txs in ${seconds.toFixed(2)} s (${rate(blocks, seconds)} blocks/s, ${rate(txs, seconds)} tx/s)`;
      if (opts.json) {
        // scenario-format §1: integers are decimal strings on output, per fixture as in the totals.
        const fixtures = reports.map((r) => ({ ...r, blocks: String(r.blocks), txs: String(r.txs) }));
        process.stdout.write(JSON.stringify({ format: "cbqs-replay/v1", fixtures, blocks: String(blocks), txs: String(txs) }, null, 2) + "\n");
        process.stderr.write(summary + "\n");
      } else {
        for (const r of reports) {
          if (r.status === "unusable") process.stderr.write(`cbqs: error: ${oneLine(r.error!)}\n`);
          if (r.mismatch !== undefined) {
            const m = r.mismatch;
            process.stdout.write(mismatchLines(r.file, { ...m, height: BigInt(m.height) }).join("\n") + "\n");
          }
        }
        process.stdout.write(summary + "\n");
      }
      process.exitCode = count("unusable") > 0 ? EXIT_BAD_INPUT : count("mismatch") > 0 ? EXIT_REJECT : EXIT_OK;
    });
}

function replayOne(file: string, toHeight: bigint | undefined, progress: boolean, trace: TraceFile | null): FixtureReport {
  const report: FixtureReport = { file, name: null, status: "ok", blocks: 0, txs: 0 };
  const line = new ProgressLine(file, progress);
  try {
    const fixture = readFixture(file);
    report.name = fixture.name;
    const tracing = trace === null ? null : new TracingStore(newStore());
    const outcome = replayFixture(fixture, {
      ...(toHeight === undefined ? {} : { toHeight }),
      ...(tracing === null ? {} : { store: tracing }),
      onBlock: (p, executed) => {
        line.update(p);
        if (tracing !== null) trace!.write(blockTraceLines(p.height, tracing.recorder, executed.envelopes, executed.results.receipts, executed.outcomes));
      },
    });
    report.blocks = outcome.blocks;
    report.txs = outcome.txs;
    if (outcome.mismatch !== null) {
      const m = outcome.mismatch;
      report.status = "mismatch";
      report.mismatch = { height: m.height.toString(), path: m.path, field: m.field, expected: m.expected, actual: m.actual, details: m.details };
    }
  } catch (err) {
    if (!(err instanceof HarnessInputError) && !(err instanceof ReplayInputError)) throw err;
    report.status = "unusable";
    report.error = err instanceof ReplayInputError ? `${file}: ${err.message}` : err.message;
  } finally {
    line.end();
  }
  return report;
}

const SIGNAL_EXIT: Record<string, number> = { SIGINT: 130, SIGTERM: 143 };

/**
 * `replay <fixture> --db <dir>`: the fixture replayed into a persistent store, resuming after
 * the store's head (src/node/replay-db.ts). Exit 0 all verified, 1 a mismatch (that block is not
 * committed), 2 unusable input or a store holding another chain (nothing touched), 130/143 when
 * stopped by SIGINT/SIGTERM (after the block in progress is committed).
 */
async function replayIntoStore(file: string, dir: string, o: { toHeight: bigint | undefined; interval: bigint; progress: boolean; json: boolean }): Promise<void> {
  let fixture: ReturnType<typeof readFixture>;
  try {
    if (fixtureFiles(file)[0] !== file) throw new UsageError("--db needs a single fixture file, not a directory");
    fixture = readFixture(file);
  } catch (err) {
    return asUsage(err);
  }
  const db = openStore(dir, { snapshotInterval: o.interval });
  const abort = new AbortController();
  let signalName = "";
  const stop = (name: string) => {
    signalName = name;
    abort.abort();
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  const clock = new Stopwatch();
  const line = new ProgressLine(file, o.progress);
  let outcome: Awaited<ReturnType<typeof replayIntoDb>>;
  try {
    outcome = await replayIntoDb(fixture, db, { ...(o.toHeight === undefined ? {} : { toHeight: o.toHeight }), signal: abort.signal, onBlock: (p) => line.update(p) });
  } catch (err) {
    if (err instanceof StoredChainError) throw new UsageError(`--db ${dir}: ${err.message}`);
    if (err instanceof ReplayInputError) throw new UsageError(`${file}: ${err.message}`);
    throw err;
  } finally {
    line.end();
    process.off("SIGINT", stop);
    process.off("SIGTERM", stop);
    db.close();
  }
  const seconds = clock.seconds();
  const from = outcome.resumedAfter === null ? "from genesis" : `resumed after height ${outcome.resumedAfter}`;
  const end = outcome.stopped ? `stopped by ${signalName}` : outcome.mismatch !== null ? "mismatch" : "ok";
  const summary =
    `replay: ${file} into ${dir}: ${end}; ${from}, ${outcome.blocks} blocks, ${outcome.txs} txs in ${seconds.toFixed(2)} s ` +
    `(${rate(outcome.blocks, seconds)} blocks/s, ${rate(outcome.txs, seconds)} tx/s); store head ${outcome.head ?? "none"}`;
  if (o.json) {
    const m = outcome.mismatch;
    process.stdout.write(
      JSON.stringify(
        {
          format: "cbqs-replay/v1",
          fixtures: [{ file, name: fixture.name, status: m === null ? "ok" : "mismatch", blocks: String(outcome.blocks), txs: String(outcome.txs), ...(m === null ? {} : { mismatch: { ...m, height: m.height.toString() } }) }],
          blocks: String(outcome.blocks),
          txs: String(outcome.txs),
          store: { dir, resumed_after: outcome.resumedAfter?.toString() ?? null, head: outcome.head?.toString() ?? null, stopped: outcome.stopped },
        },
        null,
        2,
      ) + "\n",
    );
    process.stderr.write(summary + "\n");
  } else {
    if (outcome.mismatch !== null) process.stdout.write(mismatchLines(file, outcome.mismatch).join("\n") + "\n");
    process.stdout.write(summary + "\n");
  }
  process.exitCode = outcome.stopped ? (SIGNAL_EXIT[signalName] ?? 130) : outcome.mismatch !== null ? EXIT_REJECT : EXIT_OK;
}

/** JSON-lines output, written as it is produced (a long chain's trace does not fit in memory). */
class TraceFile {
  private readonly fd: number | null;
  constructor(path: string) {
    try {
      this.fd = path === "-" ? null : openSync(path, "w");
    } catch (err) {
      throw new UsageError(`cannot write ${path}: ${ioReason(err)}`);
    }
  }
  write(lines: string[]): void {
    if (lines.length === 0) return;
    const text = lines.join("\n") + "\n";
    if (this.fd === null) process.stdout.write(text);
    else writeSync(this.fd, text);
  }
  close(): void {
    if (this.fd !== null) closeSync(this.fd);
  }
}

function writeJson(path: string, value: unknown): void {
  const text = JSON.stringify(value, null, 2) + "\n";
  if (path === "-") process.stdout.write(text);
  else writeOutput(path, text);
}

function registerT8n(program: Command): void {
  program
    .command("t8n")
    .description("one block's state transition from an explicit pre-state (geth evm t8n convention; docs/fixtures.md)")
    .requiredOption("--input.alloc <file>", "pre-state: a cbqs-state-dump/v1 file")
    .requiredOption("--input.txs <file>", "JSON array of 0x-hex transaction envelopes")
    .requiredOption("--input.env <file>", "block env: height, timestamp, chain_id, chain_instance_id, governance, …")
    .option("--output.result <file>", "result JSON (- for stdout)", "-")
    .option("--output.alloc <file>", "post-state dump (cbqs-state-dump/v1)")
    .option("--trace <file>", "write a cbqs-trace/v1 JSON line per transaction")
    .action((opts: Record<string, string | undefined>) => {
      const input = (key: string) => {
        try {
          return readJson(opts[key]!);
        } catch (err) {
          return asUsage(err);
        }
      };
      let run: ReturnType<typeof transition>;
      const trace = opts["trace"] === undefined ? null : new TraceFile(opts["trace"]);
      try {
        const alloc = loadDump(input("input.alloc"));
        const txs = parseTxs(input("input.txs"));
        const env = parseEnv(input("input.env"));
        let tracing: TracingStore | null = null;
        run = transition(alloc, txs, env, (s) => (trace === null ? s : (tracing = new TracingStore(s))));
        if (trace !== null) trace.write(blockTraceLines(env.height, tracing!.recorder, run.included.envelopes, run.included.results.receipts, run.included.outcomes, run.included.indices));
      } catch (err) {
        if (err instanceof DumpError) throw new UsageError(`${opts["input.alloc"]}: ${err.message}`);
        if (err instanceof T8nInputError) throw new UsageError(`${err.message.startsWith("env") ? opts["input.env"] : opts["input.txs"]}: ${err.message}`);
        throw err;
      } finally {
        trace?.close();
      }
      writeJson(opts["output.result"]!, run.result);
      if (opts["output.alloc"] !== undefined) {
        writeJson(opts["output.alloc"], dumpState(run.store, { height: BigInt(run.result["height"] as string), decodeSlot: registryRecords }));
      }
      process.exitCode = EXIT_OK;
    });
}

function registerTrace(program: Command): void {
  program
    .command("trace")
    .description("replay a fixture up to block N and print the cbqs-trace/v1 lines of that block")
    .argument("<fixture>", "fixture file")
    .requiredOption("--block <n>", "height of the block to trace")
    .option("-o, --output <file>", "trace file (default stdout)", "-")
    .action((file: string, opts: { block: string; output: string }) => {
      if (!/^[0-9]+$/.test(opts.block)) throw new UsageError(`--block must be a decimal height (got ${opts.block})`);
      const height = BigInt(opts.block);
      let fixture: ReturnType<typeof readFixture>;
      try {
        fixture = readFixture(file);
      } catch (err) {
        return asUsage(err);
      }
      if (!fixture.blocks.some((b) => b.height === height)) throw new UsageError(`${file}: no block at height ${height}`);
      const tracing = new TracingStore(newStore());
      const trace = new TraceFile(opts.output);
      let outcome: ReturnType<typeof replayFixture>;
      tracing.recorder.active = fixture.blocks[0]!.height === height;
      try {
        outcome = replayFixture(fixture, {
          toHeight: height,
          store: tracing,
          onBlock: (p, executed) => {
            if (p.height === height) trace.write(blockTraceLines(height, tracing.recorder, executed.envelopes, executed.results.receipts, executed.outcomes));
            // Record only the traced block: the next block to begin is the one after p.
            const next = fixture.blocks[p.blocksDone];
            tracing.recorder.active = next !== undefined && next.height === height;
          },
        });
      } catch (err) {
        if (err instanceof ReplayInputError) throw new UsageError(`${file}: ${err.message}`);
        throw err;
      } finally {
        trace.close();
      }
      if (outcome.mismatch !== null) {
        process.stderr.write(mismatchLines(file, outcome.mismatch).join("\n") + "\n");
        process.exitCode = EXIT_REJECT;
      } else process.exitCode = EXIT_OK;
    });
}

function registerDiff(program: Command): void {
  program
    .command("diff")
    .description("first divergence between two run documents, fixtures, t8n results, state dumps or traces")
    .argument("<ours>", "the reference")
    .argument("<theirs>", "the implementation under test")
    .action((ours: string, theirs: string) => {
      let text: string | null;
      try {
        text = describeDiff(parseForDiff(readText(ours), ours), parseForDiff(readText(theirs), theirs));
      } catch (err) {
        if (err instanceof DiffInputError) throw new UsageError(err.message);
        return asUsage(err);
      }
      process.stdout.write((text ?? "same") + "\n");
      process.exitCode = text === null ? EXIT_OK : EXIT_REJECT;
    });
}

function registerProveInclusion(program: Command, kind: InclusionKind): void {
  const what = kind === "tx" ? "transaction" : "receipt";
  program
    .command(`prove-${kind}`)
    .description(`write the CIP-4 §5.4 inclusion proof of one ${what} of a fixture block (checked by verify-bmt-proof against its ${kind}_root)`)
    .argument("<fixture>", "fixture file (.json or .json.gz)")
    .requiredOption("--block <n>", "height of the block")
    .requiredOption("--index <i>", `position of the ${what} in the block`)
    .option("-o, --output <file>", "proof file (default stdout); with a file, the proven root is printed", "-")
    .action((file: string, opts: { block: string; index: string; output: string }) => {
      if (!/^[0-9]+$/.test(opts.block)) throw new UsageError(`--block must be a decimal height (got ${opts.block})`);
      if (!/^[0-9]+$/.test(opts.index)) throw new UsageError(`--index must be a decimal integer (got ${opts.index})`);
      let fixture: ReturnType<typeof readFixture>;
      try {
        fixture = readFixture(file);
      } catch (err) {
        return asUsage(err);
      }
      let proof: ReturnType<typeof proveInclusion>;
      try {
        proof = proveInclusion(fixture, kind, BigInt(opts.block), BigInt(opts.index));
      } catch (err) {
        if (!(err instanceof InclusionError)) throw err;
        if (!err.mismatch) throw new UsageError(`${file}: ${err.message}`);
        process.stderr.write(`cbqs: ${oneLine(`${file}: ${err.message}`)}\n`);
        process.exitCode = EXIT_REJECT;
        return;
      }
      const json = inclusionProofToJson(proof);
      writeJson(opts.output, json);
      if (opts.output !== "-") process.stdout.write(`${json.root}\n`);
      process.exitCode = EXIT_OK;
    });
}
