// `cbqs node`: a local CBQS node (docs/node.md) — the CIP-39 §3 reads, CIP-4 §5.4 proofs, the
// replication feed and a devnet (POST /tx, POST /mine, --block-time). Exit 0 after a clean
// SIGINT/SIGTERM shutdown, 1 when an imported fixture block does not verify (the replay report),
// 2 for unusable input.
import { echo } from "../bounds.js";
import type { Command } from "commander";
import { readDocument, readFixture } from "../harness/documents.js";
import { FIXTURE_FORMAT } from "../harness/fixture.js";
import { DEFAULT_GENESIS_SOURCE } from "../harness/genesis.js";
import { JsonError, parseJson } from "../json/parse.js";
import { readFileBytes } from "../json/read.js";
import { Output, writing } from "../json/write.js";
import { SCENARIO_FORMAT } from "../scenario/parse.js";
import { ImportMismatch, NodeInputError, type NodeStart } from "../node/chain-node.js";
import { DEFAULT_MAX_EXCLUSION_OPS } from "../node/proofs.js";
import { CLIENT_SHARE } from "../node/rate-limit.js";
import { runNode } from "../node/run.js";
import { DEFAULT_PROOF_RATE_LIMIT, DEFAULT_RATE_LIMIT, stderrLogger, type Logger } from "../node/server.js";
import { DEFAULT_RETAIN_BLOCKS } from "../node/store.js";
import { openStore, storeUsageError } from "./store.js";
import { SNAPSHOT_INTERVAL_HELP, snapshotInterval } from "./store-options.js";
import { EXIT_OK, EXIT_REJECT, exitCodes, intOption, UsageError, outputOption } from "./common.js";
import { mismatchLines } from "./harness.js";
import { Stopped, watchSignals } from "../steps.js";

interface NodeOpts {
  db?: string;
  host: string;
  port: string;
  fixture?: string;
  genesis?: string;
  blockTime: string;
  rateLimit: string;
  clientRateLimit?: string;
  proofRateLimit: string;
  retainBlocks: string;
  maxExclusionOps: string;
  snapshotInterval?: string;
  quiet?: boolean;
}

/**
 * A genesis file's exact bytes (CIP-39 §3: they are hashed as they are). A fixture or scenario
 * given instead is named as such, with the way to its genesis: it holds one but is not one, and
 * its bytes would define another chain instance.
 */
export function readGenesisFile(file: string): Uint8Array {
  const source = readFileBytes(file);
  let format: unknown;
  try {
    format = (parseJson(source) as { format?: unknown } | null)?.format;
  } catch (err) {
    if (!(err instanceof JsonError)) throw err;
    // Not JSON: the genesis reader says why, where it is used.
  }
  if (format === FIXTURE_FORMAT || format === SCENARIO_FORMAT) {
    const start = format === FIXTURE_FORMAT ? `cbqs node --fixture ${file} starts its chain` : `cbqs fill makes it a fixture for cbqs node --fixture`;
    throw new UsageError(`${file}: a ${format} document, not a genesis file: cbqs genesis ${file} -o genesis.json writes its genesis source; ${start}`);
  }
  return source;
}

export function register(program: Command): void {
  program
    .command("genesis <file>")
    .description("write the exact genesis source bytes of a cbqs-fixture/v1 or cbqs-scenario/v1: the file node --genesis and derive chain-instance-id take")
    .addOption(outputOption("-o, --output <file>", "output file; - is stdout", "-"))
    .addHelpText("after", exitCodes("written", "(not used)", "unreadable or malformed input (file and JSON path named), an unwritable output"))
    .action((file: string, opts: { output: string }) => {
      const doc = readDocument(file, ["fixture", "scenario"]);
      if (doc.kind !== "fixture" && doc.kind !== "scenario") throw new Error("unreachable");
      const source = doc.kind === "fixture" ? doc.fixture.genesis.source : doc.scenario.sourceBytes;
      writing(new Output(opts.output), (out) => out.write(source));
      process.exitCode = EXIT_OK;
    });

  program
    .command("node")
    .description("run a local CBQS node: CIP-39 §3 reads, CIP-4 §5.4 proofs, the replication feed and a devnet (docs/node.md)")
    .option("--db <dir>", "store directory (LMDB); a restart continues the stored chain. Without it the chain lives in memory")
    .option("--host <address>", "address to listen on", "127.0.0.1")
    .option("--port <n>", "port to listen on (0 = any free port)", "8545")
    .option("--fixture <file>", "import a cbqs-fixture/v1 chain first, verifying every block as cbqs replay does")
    .option("--genesis <file>", "start a fresh chain from this genesis file (its exact bytes define chain_instance_id); without it, --fixture or a stored chain: the default genesis (CIP-39 §3)")
    .option("--block-time <s>", "produce a block every <s> seconds; 0 = only on POST /mine", "0")
    .option("--rate-limit <n>", "global limit, requests per second on all endpoints (CIP-4 §10); 0 = off", String(DEFAULT_RATE_LIMIT))
    .option("--client-rate-limit <n>", `limit per client address on all endpoints, requests per second, checked before the global one; 0 = off. Unset: --rate-limit / ${CLIENT_SHARE} (25 at its default)`)
    .option("--proof-rate-limit <n>", "per-client limit on the /proof endpoints, requests per second; 0 = off", String(DEFAULT_PROOF_RATE_LIMIT))
    .option("--retain-blocks <n>", "blocks below the head whose state pinned reads (?block=) can still serve", String(DEFAULT_RETAIN_BLOCKS))
    .option("--max-exclusion-ops <n>", "largest exclusion proof served for an absent key, in operations", String(DEFAULT_MAX_EXCLUSION_OPS))
    .option("--snapshot-interval <n>", SNAPSHOT_INTERVAL_HELP)
    .option("--quiet", "log errors only")
    .addHelpText(
      "after",
      exitCodes(
        "stopped cleanly by SIGINT/SIGTERM",
        "an imported fixture block does not verify (the replay report)",
        "unusable start: an unreadable or malformed fixture or genesis (file and JSON path named), a bad option, --fixture with --genesis, a port in use, a store in use or of another chain",
        "while a fixture is imported: the blocks committed so far are kept (with --db, a restart continues the import); the node does not start",
      ),
    )
    .action(async (opts: NodeOpts) => {
      if (opts.fixture !== undefined && opts.genesis !== undefined) throw new UsageError("--fixture and --genesis are exclusive: a chain has one genesis");
      const port = intOption("--port", opts.port, 65_535);
      const blockTime = Number(opts.blockTime);
      if (!/^[0-9]+(\.[0-9]+)?$/.test(opts.blockTime) || blockTime > 86_400) throw new UsageError(`--block-time must be seconds from 0 to 86400 (got ${echo(opts.blockTime)})`);
      const settings = {
        host: opts.host,
        port,
        blockTime,
        rateLimit: intOption("--rate-limit", opts.rateLimit, 1_000_000),
        ...(opts.clientRateLimit === undefined ? {} : { clientRateLimit: intOption("--client-rate-limit", opts.clientRateLimit, 1_000_000) }),
        proofRateLimit: intOption("--proof-rate-limit", opts.proofRateLimit, 1_000_000),
        proofLimits: { maxExclusionOps: intOption("--max-exclusion-ops", opts.maxExclusionOps, 1 << 22) },
      };
      const retainBlocks = intOption("--retain-blocks", opts.retainBlocks, 1_000_000);
      const start = startOf(opts);
      const log: Logger = opts.quiet ? (e) => e["level"] === "error" && stderrLogger(e) : (e) => e["level"] !== "debug" && stderrLogger(e);
      const db = openStore(opts.db, { retainBlocks, snapshotInterval: snapshotInterval(opts.snapshotInterval) });
      watchSignals();
      let running: Awaited<ReturnType<typeof runNode>>;
      let fatal: ((err: Error) => void) | undefined;
      let failure: Error | undefined;
      try {
        // CIP-39 §3: no genesis file and no stored chain — the default genesis config's canonical bytes.
        const from: NodeStart = start.kind === "store" && db.genesis() === undefined ? { kind: "genesis", source: DEFAULT_GENESIS_SOURCE } : start;
        running = await runNode(db, from, { ...settings, log, onFatal: (err) => fatal?.(err) });
      } catch (err) {
        if (err instanceof Stopped) {
          const head = db.head();
          err.kept = head === undefined ? "nothing imported" : opts.db === undefined ? `imported through height ${head.height} in memory, not kept` : `the store ${opts.db} holds every block through height ${head.height}; the node did not start`;
        }
        db.close();
        if (err instanceof ImportMismatch) {
          process.stdout.write(mismatchLines(opts.fixture!, err.mismatch).join("\n") + "\n");
          process.exitCode = EXIT_REJECT;
          return;
        }
        if (err instanceof NodeInputError) {
          const source = opts.fixture ?? opts.genesis ?? (opts.db === undefined ? "the default genesis" : `--db ${opts.db}`);
          throw new UsageError(`${source}: ${err.message}`);
        }
        const code = (err as NodeJS.ErrnoException).code;
        const hint: Record<string, string> = {
          EADDRINUSE: "the port is in use (--port 0 picks a free one)",
          EACCES: "not allowed to listen there (ports below 1024 need privileges; --port 0 picks a free one)",
          ENOTFOUND: "--host is not an address of this machine",
          EADDRNOTAVAIL: "--host is not an address of this machine",
        };
        if (code !== undefined && hint[code] !== undefined) throw new UsageError(`cannot listen on ${opts.host}:${port}: ${code}: ${hint[code]}`);
        throw (opts.db === undefined ? undefined : storeUsageError(opts.db, err)) ?? err;
      }
      process.stdout.write(`listening on ${running.url}\n`);
      await new Promise<void>((resolve) => {
        const stop = (signal: string) => {
          process.off("SIGINT", stop);
          process.off("SIGTERM", stop);
          log({ level: "info", msg: "stopping", signal, height: running.node.head().height.toString() });
          void running.close().then(resolve);
        };
        process.on("SIGINT", stop);
        process.on("SIGTERM", stop);
        fatal = (err) => {
          // The store refused a block: its head cannot be read any more (the ChainDb refuses until reopened).
          failure = err;
          process.off("SIGINT", stop);
          process.off("SIGTERM", stop);
          void running.close().then(resolve);
        };
      });
      if (failure !== undefined) throw (opts.db === undefined ? undefined : storeUsageError(opts.db, failure)) ?? failure;
      process.exitCode = EXIT_OK;
    });
}

function startOf(opts: NodeOpts): NodeStart {
  if (opts.fixture !== undefined) {
    return { kind: "fixture", fixture: readFixture(opts.fixture) };
  }
  if (opts.genesis !== undefined) {
    // CIP-39 §3: the bytes are captured once; chain_instance_id and the config both come from them.
    return { kind: "genesis", source: readGenesisFile(opts.genesis) };
  }
  return { kind: "store" };
}
