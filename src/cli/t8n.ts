// `cbqs t8n` (docs/fixtures.md §4): one block's state transition from an explicit pre-state, per
// call or, with --server, as the long-lived cbqs-t8n-server/v1 (§4.1); and `cbqs t8n-adapter`,
// the same protocol in front of someone else's per-call t8n. A per-call t8n loads no more than it
// runs (docs/engineering/performance.md "Start-up"): the server and the adapter are imported when asked for.
import type { Command } from "commander";
import { DEFAULT_T8N_LINE_BYTES, MAX_BUFFERED_DOCUMENT_BYTES } from "../bounds.js";
import { inFile, readDumpSteps, readJson } from "../harness/documents.js";
import { Progress, progressMode } from "../harness/progress.js";
import { registryRecords } from "../harness/records.js";
import { parseEnv, parseTxs, transitionSteps } from "../harness/t8n.js";
import { blockTraceLines, TracingStore } from "../harness/trace.js";
import { jsonDocumentSteps, Output, Streamed, writingStoppable } from "../json/write.js";
import { stoppable, watchSignals } from "../steps.js";
import { dumpEntryViews, dumpHeader } from "../../state/kv/dump.js";
import { EXIT_OK, exitCodes, intOption, option, outputOption, requiredOption, UsageError } from "./common.js";
import type { CommandSpec } from "./define.js";
import { withTrace } from "./trace-output.js";

interface T8nOpts {
  "input.alloc": string;
  "input.txs": string;
  "input.env": string;
  "output.result": string;
  "output.alloc"?: string;
  trace?: string;
  quiet?: boolean;
  server?: boolean;
  maxLineBytes: string;
}

/** What a request carries with --server: the per-call files are not used then. */
const PER_CALL_FILES = ["--input.alloc", "--input.txs", "--input.env", "--output.alloc", "--trace"];

export const commands: Readonly<Record<string, CommandSpec>> = {
  t8n: {
    description: "one block's state transition from an explicit pre-state (geth evm t8n convention; docs/fixtures.md)",
    options: () => [
      requiredOption("--input.alloc <file>", "pre-state: a cbqs-state-dump/v1 file"),
      requiredOption("--input.txs <file>", "JSON array of 0x-hex transaction envelopes"),
      requiredOption("--input.env <file>", "block env: height, timestamp, chain_id, chain_instance_id, governance, …"),
      outputOption("--output.result <file>", "result JSON; - is stdout", "-"),
      outputOption("--output.alloc <file>", "post-state dump (cbqs-state-dump/v1); not written when omitted"),
      outputOption("--trace <file>", "write a cbqs-trace/v1 JSON line per transaction"),
      option("--quiet", "no progress on stderr"),
      option("--server", "serve the cbqs-t8n-server/v1 protocol on stdin/stdout instead (docs/fixtures.md §4.1); no --input/--output/--trace"),
      option("--max-line-bytes <n>", "with --server: the longest request line accepted", String(DEFAULT_T8N_LINE_BYTES)),
    ],
    rules: [
      ...PER_CALL_FILES.map((flag) => ({ conflicts: ["--server", flag], message: `${flag} is not used with --server (a request carries the inputs, an answer the outputs)` })),
      { needs: ["--max-line-bytes", "--server"], message: "--max-line-bytes is only used with --server" },
    ],
    // With --server the inputs come in requests: the three files are no longer required.
    configure: (command) =>
      command.on("option:server", () => {
        for (const o of command.options) if (o.long?.startsWith("--input.") === true) o.mandatory = false;
      }),
    exits: exitCodes(
      "the block was executed and the result written (left-out transactions are listed in it, not an error); with --server: stdin ended, every request answered",
      "(not used)",
      undefined,
      "nothing is written (no result, post-state or trace file); with --server: after answering the request in progress",
    ),
    action: async (opts: T8nOpts, command: Command) => {
      if (opts.server === true) {
        const { LocalBackend, serveStdio } = await import("../harness/t8n-server.js");
        return serveStdio(new LocalBackend(`cbqs-emulator ${rootOf(command).version() ?? "unknown"}`), maxLineBytes(opts.maxLineBytes));
      }
      watchSignals();
      await transition(opts);
      process.exitCode = EXIT_OK;
    },
  },

  "t8n-adapter": {
    description: "serve the cbqs-t8n-server/v1 protocol on stdin/stdout in front of a per-call t8n command (docs/fixtures.md §4.1)",
    arguments: [["<command>", "per-call t8n command, run by /bin/sh with the five t8n flags appended (as cbqs fuzz runs it)"]],
    options: () => [
      option("--timeout <seconds>", "time allowed for one invocation (then the request gets a t8n_failed error)", "600"),
      option("--max-line-bytes <n>", "the longest request line accepted", String(DEFAULT_T8N_LINE_BYTES)),
    ],
    exits: exitCodes(
      "stdin ended and every request was answered (a failed request is an error answer, not an exit code)",
      "(not used)",
      "unusable options (one error line)",
      "after answering the request in progress",
    ),
    action: async (command: string, opts: { timeout: string; maxLineBytes: string }) => {
      if (command.trim() === "") throw new UsageError("the t8n command is empty: name the per-call t8n command to run, e.g. 'node dist/src/cli.js t8n --quiet'");
      const timeout = intOption("--timeout", opts.timeout, 86_400);
      if (timeout === 0) throw new UsageError("--timeout must be at least 1 second");
      const bound = maxLineBytes(opts.maxLineBytes);
      const [{ CommandBackend }, { serveStdio }] = await Promise.all([import("../target/t8n-adapter.js"), import("../harness/t8n-server.js")]);
      const backend = new CommandBackend(command, timeout * 1000);
      try {
        await serveStdio(backend, bound);
      } finally {
        backend.close();
      }
    },
  },
};

function rootOf(command: Command): Command {
  return command.parent === null ? command : rootOf(command.parent);
}

/** `--max-line-bytes`: from 1 KiB (a request with an empty state fits) to the buffered-document bound. */
function maxLineBytes(text: string): number {
  const n = intOption("--max-line-bytes", text, MAX_BUFFERED_DOCUMENT_BYTES);
  if (n < 1024) throw new UsageError(`--max-line-bytes must be at least 1024 (got ${n})`);
  return n;
}

/** One block executed on the pre-state; the result, post-state and trace appear together: stopped or failed, none of them does. */
async function transition(opts: T8nOpts): Promise<void> {
  const allocFile = opts["input.alloc"];
  const mode = progressMode(opts.quiet);
  const reading = new Progress(`t8n ${allocFile} (reading)`, mode);
  const alloc = await stoppable(readDumpSteps(allocFile, (n) => reading.update({ done: n, unit: "entries" })));
  reading.end();
  const committing = new Progress(`t8n ${allocFile} (committing the pre-state)`, mode);
  const preState = (n: number) => committing.update({ done: n, total: alloc.length, unit: "entries" });
  const txs = inFile(opts["input.txs"], () => parseTxs(readJson(opts["input.txs"])));
  const env = inFile(opts["input.env"], () => parseEnv(readJson(opts["input.env"])));
  const result = new Output(opts["output.result"]);
  await withTrace(opts.trace, async (trace) => {
    let tracing: TracingStore | null = null;
    const r = await stoppable(transitionSteps(alloc, txs, env, (s) => (trace === null ? s : (tracing = new TracingStore(s))), preState));
    committing.end();
    trace?.write(blockTraceLines(env.height, tracing!.recorder, r.included.envelopes, r.included.results.receipts, r.included.outcomes, r.included.indices));
    try {
      result.write(JSON.stringify(r.result, null, 2) + "\n");
      if (opts["output.alloc"] !== undefined) {
        // Written entry by entry: a large post-state is never one string.
        const header = dumpHeader({ height: env.height, stateRoot: r.store.root() });
        await writingStoppable(new Output(opts["output.alloc"]), (out) => jsonDocumentSteps(out, { ...header, entries: new Streamed(dumpEntryViews(r.store.entries(), registryRecords)) }));
      }
    } catch (err) {
      result.abort();
      throw err;
    }
    result.close();
  }).catch((err: unknown) => {
    result.abort();
    throw err;
  });
}
