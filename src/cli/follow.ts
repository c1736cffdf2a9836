// `cbqs follow <url>`: follow a node's replication feed, re-executing and verifying every block
// (docs/node.md "Follower"). Exit 0 once synced (to the node's head, or to --until), 1 at the
// first divergence (printed as `cbqs replay` prints a mismatch), 2 for unusable input (node
// unreachable, answers that are not the feed, a store of another chain); 130/143 when stopped by
// SIGINT/SIGTERM before its goal (the block in progress is finished and committed first).
import { echo } from "../bounds.js";
import type { Command } from "commander";
import type { BlockRecord } from "../../state/chain-db.js";
import { count, Progress, progressMode } from "../harness/progress.js";
import { FollowInputError, follow } from "../node/follower.js";
import { errorLine, EXIT_OK, EXIT_REJECT, exitCodes, UsageError } from "./common.js";
import { mismatchLines } from "./harness.js";
import { intOption } from "./node.js";
import { openStore, storeUsageError } from "./store.js";
import { Stopped, stopRequested, watchSignals } from "../steps.js";

export function register(program: Command): void {
  program
    .command("follow")
    .description("follow a cbqs node's replication feed, re-executing and verifying every root and block hash (docs/node.md)")
    .argument("<url>", "the node's base URL, e.g. http://127.0.0.1:8545")
    .option("--db <dir>", "the follower's store (LMDB); it resumes after its own last verified block")
    .option("--until <height>", "exit 0 once every block up to this height is verified")
    .option("--watch", "keep polling for new blocks after catching up")
    .option("--interval <ms>", "milliseconds between polls when there is nothing new", "1000")
    .option("--quiet", "no progress and no waiting notices on stderr")
    .addHelpText(
      "after",
      exitCodes(
        "synced to the node's head or --until",
        "the first divergence (printed as cbqs replay prints a mismatch)",
        "node unreachable, answers that are not the feed, a store of another chain",
        "the block in progress is finished and committed; the store resumes after it",
      ),
    )
    .action(async (url: string, opts: { db?: string; until?: string; watch?: boolean; interval: string; quiet?: boolean }) => {
      if (!/^https?:\/\/[^\s/]+/.test(url)) throw new UsageError(`<url> must be an http(s) URL (got ${echo(url)})`);
      let until: bigint | undefined;
      if (opts.until !== undefined) {
        if (!/^[0-9]{1,20}$/.test(opts.until)) throw new UsageError(`--until must be a block height (got ${echo(opts.until)})`);
        until = BigInt(opts.until);
      }
      const pollMs = intOption("--interval", opts.interval, 3_600_000);
      const db = openStore(opts.db);
      const signal = watchSignals();
      const mode = progressMode(opts.quiet);
      const line = new Progress(`follow ${url}`, mode);
      let verified = 0;
      let verifiedTxs = 0;
      let waitingFor: bigint | undefined;
      const onBlock = (b: BlockRecord, nodeHeight: bigint) => {
        verified++;
        verifiedTxs += b.transactions.length;
        waitingFor = undefined;
        line.update({ done: verified, unit: "blocks", height: { at: b.height, last: until !== undefined && until < nodeHeight ? until : nodeHeight }, txs: verifiedTxs });
      };
      // Said once per height reached, so a wait is never mistaken for a hang.
      const onWait = (head: bigint, nodeHeight: bigint) => {
        if (mode === "off" || waitingFor === head) return;
        waitingFor = head;
        line.end();
        const goal = until === undefined ? "new blocks" : `height ${until}`;
        process.stderr.write(`follow: verified to height ${head} (the node's head is ${nodeHeight}); waiting for ${goal}, polling every ${pollMs} ms\n`);
      };
      let unreachable = false;
      const onUnreachable = (message: string) => {
        if (unreachable) return;
        unreachable = true;
        line.end();
        process.stderr.write(`follow: ${message}; retrying every ${pollMs} ms (--watch)\n`);
      };
      try {
        const result = await follow({
          url,
          db,
          watch: opts.watch === true,
          pollMs,
          signal,
          onBlock: (b, h) => {
            unreachable = false;
            onBlock(b, h);
          },
          onWait: (head, h) => {
            unreachable = false;
            onWait(head, h);
          },
          onUnreachable,
          ...(until === undefined ? {} : { until }),
        });
        line.end();
        const counts = `${count(result.blocks, "block")}, ${count(result.txs, "tx", "txs")} verified`;
        if (result.status === "mismatch") {
          process.stdout.write(mismatchLines(result.source, result.mismatch).join("\n") + "\n");
          process.stdout.write(`follow: stopped at the first divergence; ${counts}\n`);
          process.exitCode = EXIT_REJECT;
        } else {
          process.stdout.write(`follow: ${result.status} at height ${result.height}; ${counts}\n`);
          if (result.status === "synced") process.exitCode = EXIT_OK;
          else {
            // The line every stopped command ends with (src/steps.ts).
            const stopped = new Stopped(stopRequested() ?? "SIGINT");
            stopped.kept = opts.db === undefined ? `verified through height ${result.height} in memory, not kept` : `the store ${opts.db} holds every block through height ${result.height}; run again to resume`;
            process.stderr.write(errorLine(stopped));
            process.exitCode = stopped.exitCode;
          }
        }
      } catch (err) {
        if (err instanceof FollowInputError) throw new UsageError(err.message);
        throw (opts.db === undefined ? undefined : storeUsageError(opts.db, err)) ?? err;
      } finally {
        line.end();
        db.close();
      }
    });
}
