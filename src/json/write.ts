// Writing documents as they are produced (docs/reference/formats/fixture.md §0): `-o` is a file or `-` (stdout,
// the default everywhere). A file is opened by the one rule of src/output-file.ts: a new or
// regular file is written to `<file>.partial-<pid>` and renamed into place when complete, so a
// failed or interrupted command never leaves a half-written document under the name asked for;
// a device, FIFO or /dev/stdout is written in place. Large arrays (a dump's 1.25 M entries, a
// run's blocks) are written element by element; the text is byte-identical to
// JSON.stringify(doc, replacer, 2) + "\n". A file whose name ends in `.gz` is written gzipped:
// each flushed chunk is one gzip member (RFC 1952 §2.2: a gzip file is a series of members;
// gunzip, zcat and our reader unpack them as one stream).
import { gzipSync } from "node:zlib";
import { OutputError, OutputFile } from "../output-file.js";
import { finish, stoppable, type Steps } from "../steps.js";

export { OutputError };

const FLUSH_BYTES = 1 << 20;

/** Where a document's text goes: an Output, or a node's HTTP answer (src/node/server.ts). */
export interface TextSink {
  write(text: string): void;
}

/** A destination for text: stdout, or a file that appears only when closed. */
export class Output implements TextSink {
  private readonly file: OutputFile | null;
  private readonly gzip: boolean;
  private pending: Array<string | Uint8Array> = [];
  private pendingBytes = 0;
  private closed = false;

  /** `path` "-" is stdout. A file that cannot be created is an OutputError naming it. */
  constructor(readonly path: string) {
    this.gzip = path !== "-" && path.toLowerCase().endsWith(".gz");
    this.file = path === "-" ? null : OutputFile.open(path);
  }

  /** Text (written as UTF-8) or raw bytes. */
  write(data: string | Uint8Array): void {
    this.pending.push(data);
    this.pendingBytes += data.length;
    if (this.pendingBytes >= FLUSH_BYTES) this.flush();
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    const joined = this.pending.every((p) => typeof p === "string") ? this.pending.join("") : Buffer.concat(this.pending.map((p) => (typeof p === "string" ? Buffer.from(p) : p)));
    // Level 9, and zlib writes no modification time: the same text gives the same bytes.
    const data = this.gzip ? gzipSync(joined, { level: 9 }) : joined;
    this.pending = [];
    this.pendingBytes = 0;
    if (this.file === null) process.stdout.write(data);
    else {
      try {
        this.file.write(data); // a failed write drops the file
      } catch (err) {
        this.closed = true;
        throw err;
      }
    }
  }

  /** Completes the output: a file is renamed into place. */
  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    this.file?.commit();
  }

  /** Drops a file output (nothing appears under its name); stdout keeps what was written. */
  abort(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.file === null) {
      this.flush();
      return;
    }
    this.file.discard();
  }
}

/** Runs `produce` into `out`, closing it on success and dropping a file output on failure. */
export function writing<T>(out: Output, produce: (out: Output) => T): T {
  let result: T;
  try {
    result = produce(out);
  } catch (err) {
    out.abort();
    throw err;
  }
  out.close();
  return result;
}

/**
 * `writing` for a command that can be stopped (src/steps.ts): the output is produced unit by unit
 * and, stopped or failed, a file output is dropped (nothing under its name, no temporary left).
 */
export async function writingStoppable<T>(out: Output, produce: (out: Output) => Steps<T>): Promise<T> {
  let result: T;
  try {
    result = await stoppable(produce(out));
  } catch (err) {
    out.abort();
    throw err;
  }
  out.close();
  return result;
}

/** An array member written element by element. */
export class Streamed {
  constructor(readonly items: Iterable<unknown>) {}
}

/** A member whose value is computed only when the writer reaches it (after the arrays before it). */
export class Later {
  constructor(readonly value: () => unknown) {}
}

type Replacer = (key: string, value: unknown) => unknown;

const indent = (text: string, spaces: string): string => text.replace(/\n/g, `\n${spaces}`);

/**
 * Writes the object `doc` as JSON.stringify(doc, replacer, 2) + "\n" would, where a Streamed
 * member's elements come from its iterable one at a time and a Later member is evaluated when
 * reached; an undefined value leaves its member out, as JSON.stringify does.
 */
export function writeJsonDocument(out: TextSink, doc: Record<string, unknown>, replacer?: Replacer): void {
  finish(jsonDocumentSteps(out, doc, replacer));
}

/** writeJsonDocument unit by unit: a unit is one element of a Streamed member. */
export function* jsonDocumentSteps(out: TextSink, doc: Record<string, unknown>, replacer?: Replacer): Steps<void> {
  let first = true;
  out.write("{");
  for (const [key, member] of Object.entries(doc)) {
    const value = member instanceof Later ? member.value() : member;
    if (value === undefined) continue;
    out.write(`${first ? "" : ","}\n  ${JSON.stringify(key)}: `);
    first = false;
    if (value instanceof Streamed) {
      let any = false;
      for (const item of value.items) {
        out.write(`${any ? "," : "["}\n    ${indent(JSON.stringify(item, replacer, 2), "    ")}`);
        any = true;
        yield;
      }
      out.write(any ? "\n  ]" : "[]");
    } else {
      out.write(indent(JSON.stringify(value, replacer, 2), "  "));
    }
  }
  out.write(first ? "}\n" : "\n}\n");
}
