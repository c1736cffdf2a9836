// The one way every command opens a file it writes (`-o`, t8n's --output.*, --trace, a snapshot,
// a fill's fixtures, a fuzz report's files). What the name already is decides how
// (docs/reference/cli-conventions.md "Outputs", docs/decisions.md "Writing to a path that exists"):
//
//   - nothing, or a regular file: written to a new `<name>.partial-<pid>` beside it (created
//     exclusively: never a file or link already there), fsynced and renamed over it when complete,
//     so a failed or stopped command never leaves half a file under the name;
//   - a symbolic link: followed (a dangling one too: its target is created) and the rule applied to
//     what it names — the link stays a link and its target gets the content;
//   - a name of one of this process's descriptors (/dev/stdout, /dev/stderr, /dev/fd/N,
//     /proc/self/fd/N): that descriptor, written as it is (a pipe, a terminal, a file opened with >>);
//     fd 1 and fd 2 through process.stdout / process.stderr, exactly as `-` is (Node makes a pipe
//     there non-blocking: a direct write would fail with EAGAIN once the pipe is full);
//   - anything else that exists (a character device such as /dev/null or /dev/full, a FIFO, a
//     socket): opened and written in place — a device is never replaced by a regular file;
//   - a directory: refused.
//
// Every write error is an OutputError naming the file (ENOSPC from /dev/full is exit 2, never 0).
import { accessSync, closeSync, constants, fsyncSync, lstatSync, openSync, readlinkSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { describeIoError } from "./io-error.js";

/** An output that cannot be written (exit 2, one line `cannot write <file>: <reason>`). */
export class OutputError extends Error {
  override name = "OutputError";
}

/** Where the bytes for a name go, decided before anything is written. */
export type OutputTarget =
  | { kind: "replace"; path: string }
  | { kind: "in-place"; path: string }
  | { kind: "descriptor"; fd: number };

/** Symbolic links followed before giving up (Linux's own limit, MAXSYMLINKS). */
const MAX_LINKS = 40;

/** The descriptor a path names by itself (/dev/stdout, /dev/fd/3, /proc/self/fd/1), if any. */
function descriptorOf(absolute: string): number | undefined {
  if (absolute === "/dev/stdout") return 1;
  if (absolute === "/dev/stderr") return 2;
  const m = /^(?:\/dev\/fd|\/proc\/(?:self|thread-self|(\d+))\/fd)\/(\d+)$/.exec(absolute);
  if (m === null || (m[1] !== undefined && Number(m[1]) !== process.pid)) return undefined;
  return Number(m[2]);
}

/**
 * Whether output to `name` goes to this process's stdout: `-`, or a name of fd 1 (/dev/stdout,
 * /dev/fd/1, …). Then what a command would print beside a file (a root, "written to …") goes to
 * stderr, so stdout holds the document alone.
 */
export function writesToStdout(name: string): boolean {
  if (name === "-") return true;
  try {
    const target = outputTarget(name);
    return target.kind === "descriptor" && target.fd === 1;
  } catch {
    return false; // refused when it is opened
  }
}

/** The wait before a write that found a non-blocking descriptor full (EAGAIN) is tried again. */
const EAGAIN_WAIT_MS = 5;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** writeSync that waits while a non-blocking descriptor (a pipe a slow reader drains) is full. */
function writeAll(fd: number, bytes: Uint8Array): void {
  for (let off = 0; off < bytes.length; ) {
    try {
      off += writeSync(fd, bytes, off, bytes.length - off);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EAGAIN") throw err;
      Atomics.wait(sleeper, 0, 0, EAGAIN_WAIT_MS);
    }
  }
}

/** Other names tried when a temporary's name is taken (a stale one, or something planted there). */
const MAX_TEMP_NAMES = 100;

/**
 * Creates a new file `<stem><ext>` (or `<stem>-<n><ext>` when that name is taken) for writing.
 * O_CREAT|O_EXCL ("wx"): a name that exists is never reused, and a symlink planted at the
 * predictable name is not followed (the open fails and the next name is tried).
 */
export function createExclusive(stem: string, ext = ""): { fd: number; path: string } {
  for (let n = 0; ; n++) {
    const path = n === 0 ? `${stem}${ext}` : `${stem}-${n}${ext}`;
    try {
      return { fd: openSync(path, "wx"), path };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST" || n >= MAX_TEMP_NAMES) throw err;
    }
  }
}

const cannot = (name: string, err: unknown): OutputError => new OutputError(`cannot write ${name}: ${describeIoError(err)}`);

/** What writing to `name` means (the rule above); a directory or a link loop is an OutputError. */
function outputTarget(name: string): OutputTarget {
  let path = resolve(name);
  for (let links = 0; links <= MAX_LINKS; links++) {
    const fd = descriptorOf(path);
    if (fd !== undefined) return { kind: "descriptor", fd };
    let stat;
    try {
      stat = lstatSync(path);
    } catch (err) {
      // Not there yet (a new file, or the target of a dangling link): created by the rename.
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return { kind: "replace", path };
      throw cannot(name, err);
    }
    if (stat.isSymbolicLink()) {
      path = resolve(dirname(path), readlinkSync(path));
      continue;
    }
    if (stat.isFile()) return { kind: "replace", path };
    if (stat.isDirectory()) throw new OutputError(`cannot write ${name}: it is a directory (give a file name)`);
    return { kind: "in-place", path };
  }
  throw cannot(name, { code: "ELOOP" });
}

/**
 * Checks, before any work, that `name` can be written: not a directory, its directory exists and
 * is writable (a new or replaced file), or it is writable itself (a device, a FIFO). Nothing is
 * created. `-` (stdout) always can.
 */
export function checkOutputPath(name: string): void {
  if (name === "-") return;
  const target = outputTarget(name);
  if (target.kind === "descriptor") return;
  try {
    accessSync(target.kind === "replace" ? dirname(target.path) : target.path, constants.W_OK);
  } catch (err) {
    throw cannot(name, err);
  }
}

/**
 * Checks, before any work, that files can be written into the directory `name` (`fill -o`,
 * `fuzz --out`): it is a writable directory, or it is missing and its nearest existing ancestor is
 * one (it is created when the files are written). An existing file there is refused: `flag`
 * (`--out`) and `role` ("the directory the report is written into") word the refusal.
 */
export function checkOutputDirectory(name: string, flag: string, role: string): void {
  let path = resolve(name);
  for (;;) {
    let stat;
    try {
      stat = statSync(path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT" && dirname(path) !== path) {
        path = dirname(path);
        continue;
      }
      throw cannot(name, err);
    }
    if (!stat.isDirectory()) {
      if (path === resolve(name)) throw new OutputError(`${flag} ${name}: a file with that name exists; ${flag} names ${role}`);
      throw cannot(name, { code: "ENOTDIR" });
    }
    try {
      accessSync(path, constants.W_OK);
    } catch (err) {
      throw cannot(name, err);
    }
    return;
  }
}

/** An open output file (the rule above): written with write, completed with commit or dropped with discard. */
export class OutputFile {
  private done = false;

  private constructor(
    /** The name as given, for messages. */
    readonly name: string,
    private readonly target: OutputTarget,
    private readonly fd: number,
    /** The temporary file renamed onto target.path on commit (replace only). */
    private readonly temp: string | null,
  ) {}

  static open(name: string): OutputFile {
    const target = outputTarget(name);
    if (target.kind === "descriptor") return new OutputFile(name, target, target.fd, null);
    if (target.kind === "in-place") {
      // Without O_CREAT or O_TRUNC: the thing exists and is written as it is (a FIFO waits for a reader).
      try {
        return new OutputFile(name, target, openSync(target.path, constants.O_WRONLY), null);
      } catch (err) {
        throw cannot(name, err);
      }
    }
    try {
      const temp = createExclusive(`${target.path}.partial-${process.pid}`);
      return new OutputFile(name, target, temp.fd, temp.path);
    } catch (err) {
      throw cannot(name, err);
    }
  }

  /** Writes all of `data` (a short write is continued); an error drops the output and names the file. */
  write(data: string | Uint8Array): void {
    if (this.target.kind === "descriptor" && (this.fd === 1 || this.fd === 2)) {
      // The stream `-` writes through: it waits for a slow reader and keeps the order of whatever
      // else the command printed there. (EPIPE and the like surface as the stream's error, as for `-`.)
      (this.fd === 1 ? process.stdout : process.stderr).write(data);
      return;
    }
    const bytes = typeof data === "string" ? Buffer.from(data) : data;
    try {
      writeAll(this.fd, bytes);
    } catch (err) {
      this.discard();
      throw cannot(this.name, err);
    }
  }

  /** Completes the output: a replaced file is fsynced and renamed into place; a device or FIFO is closed. */
  commit(): void {
    if (this.done) return;
    this.done = true;
    if (this.target.kind === "descriptor") return;
    try {
      if (this.temp !== null) fsyncSync(this.fd);
      closeSync(this.fd);
      if (this.temp !== null) renameSync(this.temp, this.target.path);
    } catch (err) {
      if (this.temp !== null) unlinkQuietly(this.temp);
      throw cannot(this.name, err);
    }
  }

  /** Drops the output: nothing appears under its name (what reached a device or FIFO stays there). */
  discard(): void {
    if (this.done) return;
    this.done = true;
    if (this.target.kind === "descriptor") return;
    try {
      closeSync(this.fd);
    } catch {
      // already unusable: the temporary is still removed
    }
    if (this.temp !== null) unlinkQuietly(this.temp);
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // already gone
  }
}

/** Writes `data` to `name` by the rule above, in one go. */
export function writeOutputFile(name: string, data: string | Uint8Array): void {
  const file = OutputFile.open(name);
  file.write(data);
  file.commit();
}
