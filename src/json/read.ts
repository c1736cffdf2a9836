// The one file reader of every command (docs/reference/formats/fixture.md §0): a file, `.json` or gzipped
// (recognized by its magic bytes, so `.json.gz` works wherever a document is read), bounded
// before it is read and parsed by the strict reader of ./parse.ts in 1 MiB chunks. `-` is the
// standard input, and a pipe (`/dev/stdin`, `<(…)`) is read like a file: in order, never by
// position, bounded as it arrives. Every problem is an InputError naming the file and the JSON path.
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { MAX_BUFFERED_DOCUMENT_BYTES, MAX_DOCUMENT_BYTES } from "../bounds.js";
import { JsonError, JsonParser, shortPath, TrailingContentError, type Json, type ParseOptions } from "./parse.js";
import { finish, Stopped, type Steps } from "../steps.js";
import { describeIoError } from "../io-error.js";

/** Unusable input: `file: path: reason` (exit 2 on the command line). */
export class InputError extends Error {
  override name = "InputError";
  constructor(
    readonly file: string,
    readonly path: string,
    readonly reason: string,
    /** The file holds more than one JSON value (content after the first): JSON lines, perhaps. */
    readonly trailing = false,
  ) {
    super(path === "" ? `${file}: ${reason}` : `${file}: ${shortPath(path)}: ${reason}`);
  }

  /** A file the system will not give us: "cannot read <file>: <reason in words> (<code>)". */
  static unreadable(file: string, err: unknown): InputError {
    const e = new InputError(file, "", `cannot read: ${describeIoError(err)}`);
    e.message = `cannot read ${file}: ${describeIoError(err)}`;
    return e;
  }
}


const CHUNK = 1 << 20;
const isGzip = (head: Uint8Array): boolean => head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b;

/** Runs `read`, turning a system error into "cannot read <file>: <code>". */
function io<T>(file: string, read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof InputError || err instanceof JsonError) throw err;
    throw InputError.unreadable(file, err);
  }
}

/** The name that means the standard input wherever a file is read. */
export const STDIN = "-";

let stdinTaken = false;

/**
 * An open source of bytes: the file, or the standard input for `-` (once per command: a second
 * `-` would read nothing). `size` is known for a regular file only; a pipe is bounded as it is read.
 */
function open(file: string): { fd: number; size: number | undefined; close: () => void } {
  // /dev/stdin is taken as it is, not reopened by name: a socket there (a spawning program's
  // stdin) cannot be opened again.
  if (file === STDIN || file === "/dev/stdin") {
    if (stdinTaken) throw new InputError(file, "", "the standard input was already read by another argument");
    stdinTaken = true;
    return { fd: 0, size: undefined, close: () => {} };
  }
  const fd = openSync(file, "r");
  try {
    const stat = fstatSync(fd);
    if (stat.isDirectory()) throw InputError.unreadable(file, { code: "EISDIR" });
    return { fd, size: stat.isFile() ? stat.size : undefined, close: () => closeSync(fd) };
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/** The next bytes from the current position (0 at the end); a non-blocking pipe with nothing yet is waited for. */
export function readNext(fd: number, into: Uint8Array): number {
  for (;;) {
    try {
      return readSync(fd, into, 0, into.length, null);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== "EAGAIN") throw err;
      Atomics.wait(pause, 0, 0, 5);
    }
  }
}

/** Every byte of a source, bounded by `max` before (a file) or while (a pipe) it is read. */
function readAll(file: string, src: { fd: number; size: number | undefined }, max: number, first?: Uint8Array): Uint8Array {
  if (src.size !== undefined && src.size > max) throw new InputError(file, "", `${src.size} bytes exceed the ${max}-byte bound`);
  const parts: Uint8Array[] = first === undefined ? [] : [first];
  let total = first?.length ?? 0;
  for (;;) {
    const chunk = Buffer.allocUnsafe(CHUNK);
    const n = readNext(src.fd, chunk);
    if (n === 0) break;
    total += n;
    if (total > max) throw new InputError(file, "", `more than the ${max}-byte bound`);
    parts.push(chunk.subarray(0, n));
  }
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts, total);
}

/**
 * A file's bytes, gunzipped when it is gzip: the whole content, bounded by `max` (for the genesis
 * file of `derive chain-instance-id`, a JSON-lines trace, and the gas artifact, whose bytes count).
 */
export function readFileBytes(file: string, max = MAX_BUFFERED_DOCUMENT_BYTES): Uint8Array {
  return io(file, () => {
    const src = open(file);
    try {
      const bytes = readAll(file, src, max);
      return isGzip(bytes) ? gunzip(file, bytes, max) : bytes;
    } finally {
      src.close();
    }
  });
}

function gunzip(file: string, bytes: Uint8Array, max: number): Uint8Array {
  try {
    return gunzipSync(bytes, { maxOutputLength: max });
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === "ERR_BUFFER_TOO_LARGE") throw new InputError(file, "", `unpacks to more than the ${max}-byte bound of a document held in memory (gunzip it first)`);
    throw new InputError(file, "", `not a readable gzip file (${e.message})`);
  }
}

/** `io` for a reading generator: a stop (src/steps.ts) passes through unchanged. */
function* ioSteps<T>(file: string, read: Steps<T>): Steps<T> {
  try {
    return yield* read;
  } catch (err) {
    if (err instanceof InputError || err instanceof JsonError || err instanceof Stopped) throw err;
    throw InputError.unreadable(file, err);
  }
}

/** Feeds `file` to `parser` in chunks (a gzip file is unpacked first); a unit is one chunk. */
function feedFile(file: string, parser: JsonParser, max: number): Steps<void> {
  return ioSteps(file, feedChunks(file, parser, max));
}

function* feedChunks(file: string, parser: JsonParser, max: number): Steps<void> {
  const src = open(file);
  try {
    if (src.size !== undefined && src.size > max) throw new InputError(file, "", `${src.size} bytes exceed the ${max}-byte bound`);
    let total = 0;
    for (let first = true; ; first = false) {
      const chunk = Buffer.allocUnsafe(CHUNK);
      const n = readNext(src.fd, chunk);
      if (n === 0) break;
      const bytes = chunk.subarray(0, n);
      if (first && isGzip(bytes)) {
        // Unpacked into one buffer: bounded as a document held in memory (a larger one is read unpacked).
        const inMemory = Math.min(max, MAX_BUFFERED_DOCUMENT_BYTES);
        if (src.size !== undefined && src.size > inMemory) throw new InputError(file, "", `a gzip file is unpacked in memory: ${src.size} bytes exceed the ${inMemory}-byte bound (gunzip it first)`);
        const all = gunzip(file, readAll(file, src, inMemory, bytes), inMemory);
        for (let i = 0; i < all.length; i += CHUNK) {
          parser.feed(all.subarray(i, i + CHUNK));
          yield;
        }
        return;
      }
      total += n;
      if (total > max) throw new InputError(file, "", `more than the ${max}-byte bound`);
      parser.feed(bytes);
      yield;
    }
  } finally {
    src.close();
  }
}

/**
 * Reads and parses one JSON document. With `streams`, the named arrays' elements are handed to
 * their callbacks as they are read (the callback may throw an InputError or a JsonError; a
 * JsonError is reported against this file).
 */
export function readJsonFile(file: string, options: ParseOptions = {}): Json {
  return finish(readJsonFileSteps(file, options));
}

/** readJsonFile unit by unit: a unit is one chunk of the file. */
export function* readJsonFileSteps(file: string, options: ParseOptions = {}): Steps<Json> {
  const max = options.maxBytes ?? MAX_DOCUMENT_BYTES;
  const parser = new JsonParser({ ...options, maxBytes: max });
  try {
    yield* feedFile(file, parser, max);
    return parser.end();
  } catch (err) {
    if (err instanceof JsonError) throw new InputError(file, err.path, err.reason, err instanceof TrailingContentError);
    throw err;
  }
}

/** Parses JSON text that came from somewhere other than a file (`@file` arguments, inline text), as `what`. */
export function parseJsonInput(text: string | Uint8Array, what: string, options: ParseOptions = {}): Json {
  const parser = new JsonParser(options);
  try {
    parser.feed(typeof text === "string" ? Buffer.from(text, "utf8") : text);
    return parser.end();
  } catch (err) {
    if (err instanceof JsonError) throw new InputError(what, err.path, err.reason);
    throw err;
  }
}
