// The implementation under test, as `consume` and `fuzz` drive it: a per-call t8n command
// (src/target/command-target.ts, docs/reference/formats/fixture.md §4) or a cbqs-t8n-server/v1 server
// (src/target/server-target.ts, §4.1). This module holds what both share: the block inputs, the
// documents they write, and the check that an output is a t8n result and a state dump.
import { formatProblem } from "../json/fields.js";
import { JsonError, parseJson, valuesFor } from "../json/parse.js";
import { toHex } from "../bytes.js";
import { T8N_RESULT_FORMAT } from "../harness/t8n.js";
import { DUMP_FORMAT, DumpError, loadDump, plainDump } from "../../state/kv/dump.js";
import type { T8nEnv } from "../harness/t8n.js";
import { TargetError } from "./bounded.js";

export { TargetError };

/** A state as key/value pairs (a t8n alloc). */
export type Entries = Array<[Uint8Array, Uint8Array]>;

/** One block for an implementation under test: its pre-state, transactions and env. */
export interface T8nInputs {
  alloc: Entries;
  txs: Uint8Array[];
  env: T8nEnv;
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
   * one batch, then the block (a per-call t8n); "chain" — one history from startChain on. A
   * server says which in its hello line, so it is known only after the first startChain.
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
  /**
   * Stops what runs; resolves once it has exited. A server gets EOF and as long to exit as to
   * answer, or STOP_GRACE_MS when `interrupted` (a stop signal: the user is waiting).
   */
  close(interrupted?: boolean): Promise<void>;
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
    close: () => {
      target.close();
      return Promise.resolve();
    },
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
  const alloc = plainDump(inputs.alloc, { height: e.height - 1n });
  const json = (v: unknown) => JSON.stringify(v, null, 2) + "\n";
  return { alloc: json(alloc), txs: json(inputs.txs.map(toHex)), env: json(envJson(e)) };
}

/** A per-call t8n's two output files, checked to be a t8n result and a loadable state dump. */
export function parseTargetOutput(resultFile: string | Uint8Array, allocFile: string | Uint8Array, stderr: string): TargetOutput {
  const result = checkedResult(resultFile, "--output.result");
  const allocText = textOf(allocFile);
  return withPostState(result, textOf(resultFile), parseOutput(allocFile, DUMP_FORMAT, "--output.alloc"), () => allocText, "--output.alloc", stderr);
}

/**
 * A t8n's answer and its post-state `alloc`, already parsed (a server's answer line): checked to
 * be a loadable state dump. Its text for a report is made only if a report asks for it.
 */
export function withPostState(result: Record<string, unknown>, resultText: string, alloc: unknown, allocText: () => string, what: string, stderr: string): TargetOutput {
  const dump = checkedDocument(alloc, DUMP_FORMAT, what);
  let allocEntries: Entries;
  try {
    allocEntries = [...loadDump(dump)];
  } catch (err) {
    if (err instanceof DumpError) throw new TargetError(`${what}: ${err.message}`);
    throw err;
  }
  let text: string | null = null;
  return {
    result,
    alloc: dump,
    allocEntries,
    resultText,
    get allocText() {
      return (text ??= allocText());
    },
    stderr,
  };
}

/** A t8n result document, checked to be one (strict JSON, its format). */
export function checkedResult(text: string | Uint8Array, what: string): Record<string, unknown> {
  return parseOutput(text, T8N_RESULT_FORMAT, what);
}

function textOf(file: string | Uint8Array): string {
  return typeof file === "string" ? file : Buffer.from(file.buffer, file.byteOffset, file.byteLength).toString("utf8");
}

function parseOutput(text: string | Uint8Array, format: string, what: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = parseJson(text, { maxValues: valuesFor(typeof text === "string" ? Buffer.byteLength(text) : text.length) });
  } catch (err) {
    if (!(err instanceof JsonError)) throw err;
    throw new TargetError(`${what} is not strict JSON (${err.message})`);
  }
  return checkedDocument(doc, format, what);
}

/** `doc` checked to be a JSON object of `format`. */
function checkedDocument(doc: unknown, format: string, what: string): Record<string, unknown> {
  const got = typeof doc === "object" && doc !== null && !Array.isArray(doc) ? (doc as Record<string, unknown>)["format"] : undefined;
  if (got !== format) throw new TargetError(`${what} is not a ${format} document: ${formatProblem(got, [format])}`);
  return doc as Record<string, unknown>;
}
