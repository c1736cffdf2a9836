// `cbqs follow <url>`: follow a node's replication feed, re-executing and verifying every block
// (docs/guides/run-a-devnet.md "Follower"). Exit 0 once synced (to the node's head, or to --until), 1 at the
// first divergence (printed as `cbqs replay` prints a mismatch) or when the node's chain no longer
// holds the follower's head block, 2 for unusable input (node unreachable or silent past
// --timeout, answers that are not the feed, a store of another chain, a node whose history starts
// above the follower's head); 130/143 when stopped by SIGINT/SIGTERM before its goal (the block in
// progress is finished and committed first; a request in flight is dropped).
import { rmSync } from "node:fs";
import { echo } from "../bounds.js";
import type { BlockRecord } from "../../state/chain-db/chain-db.js";
import { Progress, progressMode, type ProgressMode } from "../harness/progress.js";
import { count } from "../format.js";
import { DEFAULT_SNAPSHOT_MAX_BYTES, DEFAULT_SNAPSHOT_TIMEOUT_S, DEFAULT_TIMEOUT_MS, downloadSnapshot, FollowInputError, follow, MAX_BACKOFF_MS, type DownloadLimits, type WaitHow } from "../follower/follower.js";
import { errorLine, EXIT_OK, EXIT_REJECT, exitCodes, intOption, option, UsageError } from "./common.js";
import type { CommandSpec } from "./define.js";
import { importSnapshotCli, TRUSTED_BLOCK_HASH_HELP, trustedBlockHash } from "./snapshot.js";
import { mismatchLines } from "./replay-report.js";
import { openStore, storeUsageError } from "./store.js";
import { Stopped, stopRequested, watchSignals } from "../steps.js";

interface FollowOpts {
  db?: string;
  until?: string;
  watch?: boolean;
  interval: string;
  timeout: string;
  snapshot?: string;
  trustedBlockHash?: string;
  snapshotMaxBytes: string;
  snapshotTimeout: string;
  quiet?: boolean;
}

export const commands: Readonly<Record<string, CommandSpec>> = {
  follow: {
    description: "follow a cbqs node's replication feed, re-executing and verifying every root and block hash (docs/node.md)",
    arguments: [["<url>", "the node's base URL, e.g. http://127.0.0.1:8545"]],
    options: () => [
      option("--db <dir>", "the follower's store (LMDB); it resumes after its own last verified block"),
      option("--until <height>", "exit 0 once every block up to this height is verified (not with --watch)"),
      option("--watch", "keep following new blocks after catching up (not with --until): woken by the node's GET /subscribe events when it offers them, else polling"),
      option("--interval <ms>", "milliseconds between polls when there is nothing new (and no subscription)", "1000"),
      option("--timeout <seconds>", "per request: a node that sends nothing for this long is unreachable (exit 2; under --watch, retried with backoff)", String(DEFAULT_TIMEOUT_MS / 1000)),
      option("--snapshot <file|url>", "start from a snapshot (cbqs snapshot export) imported into the empty --db with cbqs snapshot import's checks, e.g. when the node's history starts at a snapshot"),
      option("--trusted-block-hash <0x…>", `with --snapshot: ${TRUSTED_BLOCK_HASH_HELP}`),
      option("--snapshot-max-bytes <n>", "with a --snapshot URL: the most bytes downloaded (a larger answer, or one whose Content-Length says so, is refused before it fills the disk)", String(DEFAULT_SNAPSHOT_MAX_BYTES)),
      option("--snapshot-timeout <seconds>", "with a --snapshot URL: the whole download's time (each read also has --timeout)", String(DEFAULT_SNAPSHOT_TIMEOUT_S)),
      option("--quiet", "no progress and no waiting notices on stderr"),
    ],
    rules: [
      // --until stops at a height and --watch never stops: together one of them would be ignored.
      { conflicts: ["--until", "--watch"], message: "--until and --watch do not combine: --until exits once that height is verified, --watch keeps following; give one" },
      { needs: ["--trusted-block-hash", "--snapshot"], message: "--trusted-block-hash checks a --snapshot: give the snapshot too" },
      { needs: ["--snapshot", "--db"], message: "--snapshot needs --db <dir>: the snapshot is imported into that store" },
    ],
    exits: exitCodes(
      "synced to the node's head or --until",
      "the first divergence (printed as cbqs replay prints a mismatch); the node's chain no longer holds our head block; a --snapshot that is not --trusted-block-hash",
      "node unreachable or silent past --timeout, answers that are not the feed, a store of another chain, a node whose history starts above ours",
      "the block in progress is finished and committed; the store resumes after it",
    ),
    action: async (url: string, opts: FollowOpts) => {
      checkUrl(url, "<url>");
      const { until, pollMs, timeoutMs, trusted, snapshotLimits } = followSettings(opts);
      const signal = watchSignals();
      if (opts.snapshot !== undefined && !(await startFromSnapshot(opts.snapshot, opts.db!, trusted, snapshotLimits, signal))) return;
      const db = openStore(opts.db);
      try {
        const result = await followNode(url, db, { watch: opts.watch === true, pollMs, timeoutMs, signal, until, mode: progressMode(opts.quiet) });
        process.exitCode = renderFollow(result, opts.db);
      } catch (err) {
        if (err instanceof FollowInputError) throw new UsageError(err.message);
        throw (opts.db === undefined ? undefined : storeUsageError(opts.db, err)) ?? err;
      } finally {
        db.close();
      }
    },
  },
};

type FollowResult = Awaited<ReturnType<typeof follow>>;

/** The values of follow's options, each checked (exit 2 naming the option). */
function followSettings(opts: FollowOpts): { until: bigint | undefined; pollMs: number; timeoutMs: number; trusted: Uint8Array | undefined; snapshotLimits: DownloadLimits } {
  if (opts.until !== undefined && !/^[0-9]{1,20}$/.test(opts.until)) throw new UsageError(`--until must be a block height (got ${echo(opts.until)})`);
  const until = opts.until === undefined ? undefined : BigInt(opts.until);
  const pollMs = intOption("--interval", opts.interval, 3_600_000);
  if (!/^[0-9]{1,4}$/.test(opts.timeout) || Number(opts.timeout) < 1 || Number(opts.timeout) > 3600) throw new UsageError(`--timeout must be a number of seconds from 1 to 3600 (got ${echo(opts.timeout)})`);
  const timeoutMs = Number(opts.timeout) * 1000;
  const trusted = trustedBlockHash(opts.trustedBlockHash);
  const maxBytes = intOption("--snapshot-max-bytes", opts.snapshotMaxBytes, Number.MAX_SAFE_INTEGER);
  const deadlineS = intOption("--snapshot-timeout", opts.snapshotTimeout, 7 * 86_400);
  if (maxBytes === 0 || deadlineS === 0) throw new UsageError(`--${maxBytes === 0 ? "snapshot-max-bytes" : "snapshot-timeout"} must be at least 1`);
  return { until, pollMs, timeoutMs, trusted, snapshotLimits: { timeoutMs, maxBytes, deadlineMs: deadlineS * 1000 } };
}

/**
 * The node's feed followed into `db`, every block verified, with a progress line and a notice on
 * stderr for each wait (once per height reached, so a wait is never mistaken for a hang), each
 * outage of the subscription, and each time the node cannot be reached (under --watch).
 */
async function followNode(url: string, db: ReturnType<typeof openStore>, o: { watch: boolean; pollMs: number; timeoutMs: number; signal: AbortSignal; until: bigint | undefined; mode: ProgressMode }): Promise<FollowResult> {
  const { until, mode, pollMs } = o;
  const line = new Progress(`follow ${url}`, mode);
  let verified = 0;
  let verifiedTxs = 0;
  let waitingFor: bigint | undefined;
  let subscriptionDown = false;
  let unreachable = false;
  const notice = (text: string) => {
    line.end();
    process.stderr.write(`follow: ${text}\n`);
  };
  try {
    return await follow({
      url,
      db,
      watch: o.watch,
      pollMs,
      timeoutMs: o.timeoutMs,
      signal: o.signal,
      onBlock: (b: BlockRecord, nodeHeight: bigint) => {
        unreachable = false;
        verified++;
        verifiedTxs += b.transactions.length;
        waitingFor = undefined;
        line.update({ done: verified, unit: "blocks", height: { at: b.height, last: until !== undefined && until < nodeHeight ? until : nodeHeight }, txs: verifiedTxs });
      },
      onWait: (head: bigint, nodeHeight: bigint, how: WaitHow) => {
        unreachable = false;
        if (mode === "off" || waitingFor === head) return;
        waitingFor = head;
        const goal = until === undefined ? "new blocks" : `height ${until}`;
        const way = "subscribed" in how ? ` (subscribed to ${how.subscribed})` : `, polling every ${how.pollMs} ms`;
        notice(`verified to height ${head} (the node's head is ${nodeHeight}); waiting for ${goal}${way}`);
      },
      // Said once per outage of the subscription: the follower polls meanwhile.
      onSubscription: (state: "up" | "down", subscribeUrl: string, reason: string) => {
        const down = state === "down";
        if (mode === "off" || down === subscriptionDown) return;
        subscriptionDown = down;
        if (down) notice(`the subscription to ${subscribeUrl} ended (${reason}); polling every ${pollMs} ms until it is back`);
      },
      onUnreachable: (message: string) => {
        if (unreachable) return;
        unreachable = true;
        notice(`${message}; retrying after ${pollMs} ms, doubling the wait up to ${Math.max(pollMs, MAX_BACKOFF_MS) / 1000} s (--watch)`);
      },
      ...(until === undefined ? {} : { until }),
    });
  } finally {
    line.end();
  }
}

/** How following ended, in words; returns the exit code. */
function renderFollow(result: FollowResult, dir: string | undefined): number {
  const counts = `${count(result.blocks, "block")}, ${count(result.txs, "tx", "txs")} verified`;
  if (result.status === "mismatch") {
    process.stdout.write(mismatchLines(result.source, result.mismatch).join("\n") + "\n");
    process.stdout.write(`follow: stopped at the first divergence; ${counts}\n`);
    return EXIT_REJECT;
  }
  if (result.status === "diverged") {
    process.stdout.write(`follow: ${result.source}: ${result.message}\n`);
    process.stdout.write(`follow: stopped; ${counts}\n`);
    return EXIT_REJECT;
  }
  if (result.status === "stopped" && result.height === undefined) {
    // Stopped before the store held the chain (a request to the node was in flight).
    return stoppedLine("nothing verified yet; the store is unchanged");
  }
  process.stdout.write(`follow: ${result.status} at height ${result.height}; ${counts}\n`);
  if (result.status === "synced") return EXIT_OK;
  return stoppedLine(dir === undefined ? `verified through height ${result.height} in memory, not kept` : `the store ${dir} holds every block through height ${result.height}; run again to resume`);
}

/** The line every stopped command ends with (src/steps.ts); returns its exit code. */
function stoppedLine(kept: string): number {
  const stopped = new Stopped(stopRequested() ?? "SIGINT");
  stopped.kept = kept;
  process.stderr.write(errorLine(stopped));
  return stopped.exitCode;
}

/** An http(s) URL node:http can request (any port 1–65535: no fetch-style block list). */
function checkUrl(text: string, name: string): void {
  let url: URL | undefined;
  try {
    url = new URL(text);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") {
    throw new UsageError(`${name} must be an http(s) URL (got ${echo(text)})`);
  }
  if (url.port === "0") throw new UsageError(`${name} must name a port from 1 to 65535 (got ${echo(text)})`);
}

/**
 * `--snapshot <file|url>`: the snapshot is imported into the (empty) store first, with `cbqs
 * snapshot import`'s checks; a URL is downloaded next to the store and removed after. Returns
 * whether following may go on (false: the anchor did not match, exit 1 is set).
 */
async function startFromSnapshot(snapshot: string, db: string, trusted: Uint8Array | undefined, limits: DownloadLimits, signal: AbortSignal): Promise<boolean> {
  if (!/^https?:\/\//i.test(snapshot)) return importSnapshotCli(snapshot, db, trusted, "follow: ");
  checkUrl(snapshot, "--snapshot");
  let file: string | undefined;
  try {
    try {
      file = await downloadSnapshot(snapshot, `${db.replace(/\/+$/, "")}.snapshot-download-${process.pid}`, limits, signal);
    } catch (err) {
      if (signal.aborted) {
        const stopped = new Stopped(stopRequested() ?? "SIGINT");
        stopped.kept = "the snapshot download was dropped; the store is unchanged";
        throw stopped;
      }
      if (err instanceof FollowInputError) throw new UsageError(err.message);
      throw err;
    }
    return await importSnapshotCli(file, db, trusted, "follow: ", snapshot);
  } finally {
    if (file !== undefined) rmSync(file, { force: true });
  }
}
