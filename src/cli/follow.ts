// `cbqs follow <url>`: follow a node's replication feed, re-executing and verifying every block
// (docs/node.md "Follower"). Exit 0 once synced (to the node's head, or to --until), 1 at the
// first divergence (printed as `cbqs replay` prints a mismatch), 2 for unusable input (node
// unreachable, answers that are not the feed, a store of another chain); 130/143 when stopped by
// SIGINT/SIGTERM before its goal (the block in progress is finished and committed first).
import type { Command } from "commander";
import { FollowInputError, follow } from "../node/follower.js";
import { DB_IS_MEMORY_ONLY, openChainDb } from "../node/store.js";
import { EXIT_OK, EXIT_REJECT, UsageError } from "./common.js";
import { mismatchLines } from "./harness.js";
import { intOption } from "./node.js";

const SIGNAL_EXIT: Record<string, number> = { SIGINT: 130, SIGTERM: 143 };

export function register(program: Command): void {
  program
    .command("follow")
    .description("follow a cbqs node's replication feed, re-executing and verifying every root and block hash (docs/node.md)")
    .argument("<url>", "the node's base URL, e.g. http://127.0.0.1:8545")
    .option("--db <dir>", "the follower's store; it resumes from its own last height (temporary: kept in memory in this build)")
    .option("--until <height>", "exit 0 once every block up to this height is verified")
    .option("--watch", "keep polling for new blocks after catching up")
    .option("--interval <ms>", "milliseconds between polls when there is nothing new", "1000")
    .action(async (url: string, opts: { db?: string; until?: string; watch?: boolean; interval: string }) => {
      if (!/^https?:\/\/[^\s/]+/.test(url)) throw new UsageError(`<url> must be an http(s) URL (got ${url})`);
      let until: bigint | undefined;
      if (opts.until !== undefined) {
        if (!/^[0-9]{1,20}$/.test(opts.until)) throw new UsageError(`--until must be a block height (got ${opts.until})`);
        until = BigInt(opts.until);
      }
      const pollMs = intOption("--interval", opts.interval, 3_600_000);
      if (opts.db !== undefined && DB_IS_MEMORY_ONLY) {
        process.stderr.write(`cbqs: note: --db ${opts.db}: this build keeps the chain in memory (temporary); a restart verifies from genesis again\n`);
      }
      const db = openChainDb(opts.db);
      const abort = new AbortController();
      let signalName: string | undefined;
      const stop = (name: string) => {
        signalName = name;
        abort.abort();
      };
      process.once("SIGINT", stop);
      process.once("SIGTERM", stop);
      try {
        const result = await follow({ url, db, watch: opts.watch === true, pollMs, signal: abort.signal, ...(until === undefined ? {} : { until }) });
        const counts = `${result.blocks} block(s), ${result.txs} tx(s) verified`;
        if (result.status === "mismatch") {
          process.stdout.write(mismatchLines(result.source, result.mismatch).join("\n") + "\n");
          process.stdout.write(`follow: stopped at the first divergence; ${counts}\n`);
          process.exitCode = EXIT_REJECT;
        } else {
          process.stdout.write(`follow: ${result.status} at height ${result.height}; ${counts}\n`);
          process.exitCode = result.status === "synced" ? EXIT_OK : (SIGNAL_EXIT[signalName ?? ""] ?? 130);
        }
      } catch (err) {
        if (err instanceof FollowInputError) throw new UsageError(err.message);
        throw err;
      } finally {
        process.off("SIGINT", stop);
        process.off("SIGTERM", stop);
        db.close();
      }
    });
}
