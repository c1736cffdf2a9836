// The implementation under test: any command that follows the t8n convention of
// docs/fixtures.md §4. Per block the inputs are written to a private temporary directory, the
// command runs as `/bin/sh -c '<command> "$@"'` with the five t8n flags as separate arguments
// (so the command string is read exactly as a shell reads it: quotes, variables, `env X=1 …`),
// and its two output files are read back. The directory is removed by close().
import { formatProblem } from "../json/fields.js";
import { JsonError, parseJson } from "../json/parse.js";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { toHex } from "../bytes.js";
import { T8N_RESULT_FORMAT } from "../harness/t8n.js";
import { DUMP_FORMAT, DumpError, loadDump } from "../../state/kv/dump.js";
import type { T8nEnv } from "../harness/t8n.js";

/** A state as key/value pairs (a t8n alloc). */
export type Entries = Array<[Uint8Array, Uint8Array]>;

/** One block for an implementation under test: its pre-state, transactions and env. */
export interface T8nInputs {
  alloc: Entries;
  txs: Uint8Array[];
  env: T8nEnv;
}

/** The command cannot be used (not found, no output, output that is not a t8n result): exit 2. */
export class TargetError extends Error {
  override name = "TargetError";
  constructor(
    message: string,
    /** What the command wrote on stderr, for the report. */
    readonly stderr = "",
  ) {
    super(message);
  }
}

export interface TargetOutput {
  /** The parsed result (format cbqs-t8n-result/v1) and post-state dump (cbqs-state-dump/v1). */
  result: Record<string, unknown>;
  alloc: Record<string, unknown>;
  allocEntries: Entries;
  /** The files as written, for the report. */
  resultText: string;
  allocText: string;
  stderr: string;
}

/** A per-call t8n: each block's answer depends only on its own inputs (alloc, txs, env). */
export interface T8nTarget {
  run(inputs: T8nInputs): Promise<TargetOutput>;
  /** Stops a running command (SIGINT/SIGTERM) and removes temporary files. */
  close(): void;
}

/** A t8n's answer to one block: its result, and its post-state when it came with it. */
export interface TargetAnswer {
  result: Record<string, unknown>;
  resultText: string;
  output?: TargetOutput;
}

/**
 * What the fuzzer drives: chains of blocks, each block on top of the one before. A per-call t8n
 * (perCall) gets each block's pre-state with it; a server (src/target/server-target.ts) keeps it
 * in a session and sends the post-state only when asked.
 */
export interface ChainTarget {
  /**
   * What `state_root` in an answer commits to: "per_block" — the block's pre-state committed as
   * one batch, then the block (a per-call t8n); "chain" — one history from startChain on.
   */
  readonly stateRoot: "per_block" | "chain";
  /** Whether an answer depends only on the block's own inputs, so one may be reused for the same inputs. */
  readonly memoizable: boolean;
  /** A new chain from `alloc`, the state after block `height`. */
  startChain(alloc: Entries, height: bigint): Promise<void>;
  /** The next block of the chain; `inputs.alloc` is the state before it. */
  apply(inputs: T8nInputs): Promise<TargetAnswer>;
  /** The full output of the last block applied (its answer plus the post-state). */
  postState(inputs: T8nInputs, answer: TargetAnswer): Promise<TargetOutput>;
  close(): void;
}

/** A per-call t8n driven as a chain target: every block carries its pre-state. */
export function perCall(target: T8nTarget): ChainTarget {
  return {
    stateRoot: "per_block",
    memoizable: true,
    startChain: () => Promise.resolve(),
    async apply(inputs) {
      const output = await target.run(inputs);
      return { result: output.result, resultText: output.resultText, output };
    },
    postState: (_inputs, answer) => Promise.resolve(answer.output!),
    close: () => target.close(),
  };
}

/** The env document of §4 (decimal strings and hex). */
export function envJson(e: T8nInputs["env"]): Record<string, string> {
  return {
    height: e.height.toString(),
    timestamp: e.timestamp.toString(),
    chain_id: e.chain_id.toString(),
    chain_instance_id: toHex(e.chain_instance_id),
    governance: toHex(e.governance),
    cycle_price: e.cycle_price.toString(),
    cell_price: e.cell_price.toString(),
    ...(e.parent_hash === null ? {} : { parent_hash: toHex(e.parent_hash) }),
  };
}

/** The three t8n input files as JSON text (scenario-format §1 conventions). */
export function inputTexts(inputs: T8nInputs): { alloc: string; txs: string; env: string } {
  const e = inputs.env;
  const alloc = {
    format: DUMP_FORMAT,
    height: (e.height - 1n).toString(),
    entries: inputs.alloc.map(([k, v]) => ({ key: toHex(k), value: toHex(v) })),
  };
  const json = (v: unknown) => JSON.stringify(v, null, 2) + "\n";
  return { alloc: json(alloc), txs: json(inputs.txs.map(toHex)), env: json(envJson(e)) };
}

/** How much of the command's stderr is kept for the report and the error line. */
const STDERR_KEEP = 64 * 1024;

export class CommandTarget implements T8nTarget {
  private dir: string | null = null;
  private child: ChildProcess | null = null;

  constructor(
    readonly command: string,
    private readonly timeoutMs: number,
  ) {}

  run(inputs: T8nInputs): Promise<TargetOutput> {
    return this.runTexts(inputTexts(inputs));
  }

  /** One invocation over the three input files' texts as given (`cbqs t8n-adapter` passes a request's documents). */
  async runTexts(texts: { alloc: string; txs: string; env: string }): Promise<TargetOutput> {
    const dir = (this.dir ??= mkdtempSync(join(tmpdir(), "cbqs-fuzz-")));
    const file = (name: string) => join(dir, name);
    rmSync(file("result.json"), { force: true });
    rmSync(file("post.json"), { force: true });
    writeFileSync(file("alloc.json"), texts.alloc);
    writeFileSync(file("txs.json"), texts.txs);
    writeFileSync(file("env.json"), texts.env);
    const flags = [
      "--input.alloc", file("alloc.json"),
      "--input.txs", file("txs.json"),
      "--input.env", file("env.json"),
      "--output.result", file("result.json"),
      "--output.alloc", file("post.json"),
    ];
    const { code, signal, stderr, timedOut } = await this.spawn(flags);
    const resultText = readIfThere(file("result.json"));
    const allocText = readIfThere(file("post.json"));
    const lastLine = stderr.trim().split("\n").pop()?.trim() ?? "";
    const said = lastLine === "" ? "" : `: ${lastLine}`;
    if (timedOut) throw new TargetError(`did not finish within ${this.timeoutMs / 1000} s`, stderr);
    if (code === 127) throw new TargetError(`command not found (exit 127)${said}`, stderr);
    if (resultText === null || allocText === null) {
      const missing = resultText === null ? "--output.result" : "--output.alloc";
      if (code !== 0) throw new TargetError(`${signal === null ? `exit ${code}` : `killed by ${signal}`} without writing ${missing}${said}`, stderr);
      throw new TargetError(`exit 0 but no ${missing} file was written${said}`, stderr);
    }
    try {
      return parseTargetOutput(resultText, allocText, stderr);
    } catch (err) {
      if (err instanceof TargetError) throw new TargetError(err.message, stderr);
      throw err;
    }
  }

  private spawn(flags: string[]): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string; timedOut: boolean }> {
    return new Promise((resolve, reject) => {
      // Its own process group, so a timeout or an interrupt ends the command and whatever it started.
      const child = spawn("/bin/sh", ["-c", `${this.command} "$@"`, "cbqs-fuzz", ...flags], { stdio: ["ignore", "ignore", "pipe"], detached: true });
      this.child = child;
      let stderr = "";
      let timedOut = false;
      child.stderr!.setEncoding("utf8");
      child.stderr!.on("data", (chunk: string) => {
        stderr = (stderr + chunk).slice(-STDERR_KEEP);
      });
      const timer = setTimeout(() => {
        timedOut = true;
        this.killChild();
      }, this.timeoutMs);
      child.on("error", (err) => {
        clearTimeout(timer);
        this.child = null;
        reject(new TargetError(`cannot start /bin/sh: ${err.message}`));
      });
      child.on("close", (code, signal) => {
        clearTimeout(timer);
        this.child = null;
        resolve({ code, signal, stderr, timedOut });
      });
    });
  }

  private killChild(): void {
    const pid = this.child?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // already gone
    }
  }

  close(): void {
    this.killChild();
    if (this.dir !== null) rmSync(this.dir, { recursive: true, force: true });
    this.dir = null;
  }
}

/** A t8n's two output files, checked to be a t8n result and a loadable state dump. */
export function parseTargetOutput(resultText: string, allocText: string, stderr: string): TargetOutput {
  const result = checkedResult(resultText, "--output.result");
  const alloc = parseOutput(allocText, DUMP_FORMAT, "--output.alloc");
  let allocEntries: Entries;
  try {
    allocEntries = [...loadDump(alloc)];
  } catch (err) {
    if (err instanceof DumpError) throw new TargetError(`--output.alloc: ${err.message}`);
    throw err;
  }
  return { result, alloc, allocEntries, resultText, allocText, stderr };
}

/** A t8n result document, checked to be one (strict JSON, its format). */
export function checkedResult(text: string, what: string): Record<string, unknown> {
  return parseOutput(text, T8N_RESULT_FORMAT, what);
}

function readIfThere(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

function parseOutput(text: string, format: string, flag: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = parseJson(text);
  } catch (err) {
    if (!(err instanceof JsonError)) throw err;
    throw new TargetError(`${flag} is not strict JSON (${err.message})`);
  }
  const got = typeof doc === "object" && doc !== null && !Array.isArray(doc) ? (doc as Record<string, unknown>)["format"] : undefined;
  if (got !== format) throw new TargetError(`${flag} is not a ${format} document: ${formatProblem(got, [format])}`);
  return doc as Record<string, unknown>;
}
