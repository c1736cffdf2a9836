// Everything read from an implementation under test — its process, its stderr, its answer lines,
// its output files — bounded and time-limited, in one place (docs/reference/formats/fixture.md "Reading a target").
// The implementation is someone else's code: it may hang, flood, leave a FIFO or a link to an
// endless device where a file should be, or leave a daemon holding its pipes. None of that may
// hang, stall or exhaust `consume`, `fuzz` or `t8n-adapter`.
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from "node:fs";
import { echo, MAX_ANSWER_BYTES } from "../bounds.js";
import { describeIoError } from "../io-error.js";
import { LineSplitter } from "../lines.js";

/** The command cannot be used (not found, no output, output that is not a t8n result): exit 2. */
export class TargetError extends Error {
  override name = "TargetError";
  constructor(
    message: string,
    /** What the command wrote on stderr (its last STDERR_KEEP characters), for the report. */
    readonly stderr = "",
  ) {
    super(message);
  }
}

/** How much of a command's stderr is kept for the report. */
export const STDERR_KEEP = 64 * 1024;
/**
 * After the command exits, how long its stderr may take to reach its end. A process it left
 * behind in another session (a daemon) may hold the pipe open for ever: its output is not waited for.
 */
export const STDERR_DRAIN_MS = 250;
/**
 * How long a server stopped by a signal, or one that misbehaved (SIGTERM with the EOF on its
 * stdin), has before its group is killed; one stopped at the end of its work gets its answer
 * timeout if that is longer (D-0180).
 */
export const STOP_GRACE_MS = 2_000;

/** Words of the target's own (an error message, a stderr line) as an error line may echo them: one line, cut. */
export function said(text: string): string {
  return echo(text.replace(/\s+/g, " ").trim());
}

/** The last non-empty line of a stderr tail, cut for an error line ("" when there is none). */
export function lastLine(stderr: string): string {
  const lines = stderr.trimEnd().split("\n");
  return said(lines[lines.length - 1] ?? "");
}

/** How a process ended. */
export interface Ended {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** Ended by the deadline. */
  timedOut: boolean;
}

/**
 * A target's process: `/bin/sh -c <script> <args…>` in its own process group, so a deadline or a
 * stop ends the command and everything it started in that group. Its stderr's tail is kept
 * (STDERR_KEEP characters); stdin and stdout are pipes for a server, closed for a per-call t8n.
 */
export class TargetProcess {
  readonly child: ChildProcess;
  private tail = "";
  private timer: NodeJS.Timeout | null = null;
  private timedOut = false;
  /** Resolves once the process has exited and its stderr has ended or had STDERR_DRAIN_MS to. */
  readonly ended: Promise<Ended>;

  constructor(script: string, args: readonly string[], pipes: "server" | "call") {
    this.child = spawn("/bin/sh", ["-c", script, ...args], { stdio: pipes === "server" ? ["pipe", "pipe", "pipe"] : ["ignore", "ignore", "pipe"], detached: true });
    const stderr = this.child.stderr!;
    stderr.setEncoding("utf8");
    stderr.on("data", (chunk: string) => {
      this.tail = this.tail.length + chunk.length <= STDERR_KEEP ? this.tail + chunk : (this.tail + chunk.slice(-STDERR_KEEP)).slice(-STDERR_KEEP);
    });
    const stderrEnded = new Promise<void>((resolve) => {
      stderr.once("end", resolve);
      stderr.once("close", resolve);
    });
    this.ended = new Promise<Ended>((resolve, reject) => {
      this.child.once("error", (err) => {
        this.release();
        reject(new TargetError(`cannot start /bin/sh: ${err.message}`));
      });
      this.child.once("exit", (code, signal) => {
        if (this.timer !== null) clearTimeout(this.timer);
        // Whatever the command left running in its group goes with it.
        this.killGroup();
        let drained: NodeJS.Timeout;
        void Promise.race([stderrEnded, new Promise<void>((r) => (drained = setTimeout(r, STDERR_DRAIN_MS)))]).then(() => {
          clearTimeout(drained);
          this.release();
          resolve({ code, signal, timedOut: this.timedOut });
        });
      });
    });
    // A write to a server that has exited is reported by its exit, not as an EPIPE crash here.
    this.child.stdin?.on("error", () => undefined);
  }

  /** What it wrote on stderr, its last STDERR_KEEP characters. */
  get stderr(): string {
    return this.tail;
  }

  /** Ends the process group after `ms` unless the process has exited by then (`ended` says timedOut). */
  deadline(ms: number): void {
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.kill();
    }, ms);
  }

  /** Ends the process group now and lets go of its pipes (a stray holding them cannot keep us waiting). */
  kill(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.killGroup();
    this.child.stdin?.destroy();
    this.child.stdout?.destroy();
  }

  /**
   * Asks a server to stop — EOF on its stdin, and SIGTERM to its group when `terminate` (it
   * misbehaved) — so it can remove what it made, and kills the group if it has not exited
   * within `graceMs`. Its answers are no longer read. Resolves once it has exited.
   */
  stop(terminate: boolean, graceMs = STOP_GRACE_MS): Promise<void> {
    const exited = this.ended.then(
      () => undefined,
      () => undefined,
    );
    if (this.timer !== null) clearTimeout(this.timer);
    if (this.child.exitCode !== null || this.child.signalCode !== null) return exited;
    this.child.stdout?.destroy();
    this.child.stdin?.end();
    if (terminate) this.killGroup("SIGTERM");
    const timer = setTimeout(() => this.kill(), graceMs);
    this.child.once("exit", () => clearTimeout(timer));
    return exited;
  }

  private killGroup(signal: NodeJS.Signals = "SIGKILL"): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // the group is gone already
    }
  }

  private release(): void {
    this.child.stdin?.destroy();
    this.child.stdout?.destroy();
    this.child.stderr?.destroy();
  }
}

/**
 * Answer lines of a server's stdout, split in linear time; a line longer than
 * MAX_ANSWER_BYTES is an error, not a buffer that grows without bound.
 */
export class AnswerLines {
  private readonly splitter = new LineSplitter(MAX_ANSWER_BYTES);
  private readonly ready: Uint8Array[] = [];

  /** Takes a chunk; throws a TargetError when a line passes the bound. */
  push(chunk: Uint8Array): void {
    for (const line of this.splitter.push(chunk)) {
      if (line.kind === "too_long") throw tooLong(line.bytes);
      this.ready.push(line.bytes);
    }
    if (this.splitter.pending > MAX_ANSWER_BYTES) throw tooLong(this.splitter.pending);
  }

  /** The oldest complete line not yet taken, or null. */
  next(): Uint8Array | null {
    return this.ready.shift() ?? null;
  }
}

function tooLong(bytes: number): TargetError {
  return new TargetError(`wrote an answer line of more than ${MAX_ANSWER_BYTES} bytes (${bytes} so far) — above the bound on what is read from a target`);
}

/**
 * One output file of a per-call t8n, or null when it does not exist. Opened without blocking and
 * without following it to a terminal, read only if it is a regular file (a link is followed to
 * what it names) and at most MAX_ANSWER_BYTES: a FIFO, a device or an endless file is
 * refused, naming what it is.
 */
export function readOutputFile(path: string, what: string, max = MAX_ANSWER_BYTES): Uint8Array | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw new TargetError(`${what} cannot be opened: ${describeIoError(err)}`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw new TargetError(`${what} is ${kindOf(stat)}, not a regular file`);
    const tooBig = (size: string) => new TargetError(`${what} has ${size} bytes, above the ${max}-byte bound on what is read from a target`);
    if (stat.size > max) throw tooBig(String(stat.size));
    // Read to its end, which may have moved since fstat (a process still appending): never past the bound.
    const chunks: Buffer[] = [];
    let total = 0;
    for (let want = stat.size + 1; ; want = 1 << 20) {
      const chunk = Buffer.allocUnsafe(Math.min(want, max + 1 - total));
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) return Buffer.concat(chunks, total);
      chunks.push(chunk.subarray(0, n));
      total += n;
      if (total > max) throw tooBig(`more than ${max}`);
    }
  } catch (err) {
    if (err instanceof TargetError) throw err;
    throw new TargetError(`${what} cannot be read: ${describeIoError(err)}`);
  } finally {
    closeSync(fd);
  }
}

function kindOf(stat: Stats): string {
  if (stat.isDirectory()) return "a directory";
  if (stat.isFIFO()) return "a FIFO";
  if (stat.isCharacterDevice()) return "a character device";
  if (stat.isBlockDevice()) return "a block device";
  if (stat.isSocket()) return "a socket";
  return "not a plain file";
}
