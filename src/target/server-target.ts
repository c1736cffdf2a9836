// The implementation under test as a long-lived server of the cbqs-t8n-server/v1 protocol
// (docs/reference/formats/t8n-server.md): one process for a whole campaign, one session per chain, so a block
// ships only its transactions and env. The process, its answer lines and its stderr are read
// through src/target/bounded.ts (its own process group; lines split in linear time and bounded);
// requests go one at a time, each with a deadline. A process that exits or misses a deadline is a
// ServerDied: the fuzzer reports it, starts a new process and tries the run again (src/fuzz/fuzz.ts).
import { toHex } from "../bytes.js";
import { JsonError, parseJson, valuesFor } from "../json/parse.js";
import { T8N_SERVER_PROTOCOL } from "../harness/t8n-server.js";
import { plainDump } from "../../state/kv/dump.js";
import type { Entries, T8nInputs } from "./target.js";
import { checkedResult, envJson, withPostState, TargetError, type ChainTarget, type TargetAnswer, type TargetOutput } from "./target.js";
import { AnswerLines, lastLine, said, STOP_GRACE_MS, TargetProcess, type Ended } from "./bounded.js";

/** The server process ended or missed a deadline: the fuzzer may start a new one. */
export class ServerDied extends TargetError {
  override name = "ServerDied";
}

/** The hello line must come within this time of the start (a server loads its code first). */
const HELLO_TIMEOUT_MS = 60_000;

type Json = Record<string, unknown>;

/** A running server: its process and the answer lines read from it so far (a new process starts with none). */
interface Running {
  process: TargetProcess;
  lines: AnswerLines;
}

export class ServerTarget implements ChainTarget {
  readonly memoizable = false;
  private running: Running | null = null;
  /** Resolves once the last process stopped has exited. */
  private stopping: Promise<void> = Promise.resolve();
  /** The last process started, running or not: its stderr is the report's. */
  private last: TargetProcess | null = null;
  private hello: Json | null = null;
  /** What the last hello said `state_root` commits to; kept when that process ends. */
  private sessionStateRoot: "chain" | "per_block" | null = null;
  private nextId = 1;
  /** The one outstanding request's completion. */
  private pending: { resolve: (line: Uint8Array) => void; reject: (err: Error) => void } | null = null;
  private exited: string | null = null;
  private session: string | null = null;
  /** The method and block of the last request, for the report of a death. */
  lastRequest = "none";
  /** Processes started so far (1 + restarts). */
  starts = 0;

  constructor(
    readonly command: string,
    private readonly timeoutMs: number,
  ) {}

  /** Known from the server's hello line, so only after the first startChain. */
  get stateRoot(): "chain" | "per_block" {
    if (this.sessionStateRoot === null) throw new Error("a server's session_state_root is known only from its hello line: startChain first");
    return this.sessionStateRoot;
  }

  get implementation(): string {
    return typeof this.hello?.["implementation"] === "string" ? this.hello["implementation"] : "";
  }

  async startChain(alloc: Entries, height: bigint): Promise<void> {
    await this.ensureStarted();
    if (this.session !== null) {
      const name = this.session;
      this.session = null;
      await this.call({ method: "session.close", session: name }, `session.close ${name}`);
    }
    const dump = plainDump(alloc, { height });
    const answer = await this.call({ method: "session.open", alloc: dump }, `session.open at height ${height}`);
    if (typeof answer["session"] !== "string") throw this.unusable(`session.open answered without a session name: ${short(answer)}`);
    this.session = answer["session"];
  }

  async apply(inputs: T8nInputs): Promise<TargetAnswer> {
    const session = this.requireSession();
    const answer = await this.call({ method: "session.apply", session, txs: inputs.txs.map(toHex), env: envJson(inputs.env) }, `session.apply block ${inputs.env.height}`);
    const result = answer["result"];
    if (typeof result !== "object" || result === null || Array.isArray(result)) throw this.unusable(`session.apply answered without a result: ${short(answer)}`);
    const resultText = JSON.stringify(result, null, 2) + "\n";
    return { result: checkedResult(resultText, "session.apply's result"), resultText };
  }

  async postState(inputs: T8nInputs, answer: TargetAnswer): Promise<TargetOutput> {
    const session = this.requireSession();
    const got = await this.call({ method: "session.post_state", session }, `session.post_state after block ${inputs.env.height}`);
    const postState = got["post_state"];
    if (typeof postState !== "object" || postState === null) throw this.unusable(`session.post_state answered without a post_state: ${short(got)}`);
    try {
      return withPostState(answer.result, answer.resultText, postState, () => JSON.stringify(postState, null, 2) + "\n", "session.post_state", this.stderr());
    } catch (err) {
      if (err instanceof TargetError) throw this.unusable(err.message);
      throw err;
    }
  }

  /** What the last process wrote on stderr (its tail). */
  stderr(): string {
    return this.last?.stderr ?? "";
  }

  /**
   * Stops the process (EOF on its stdin, its group killed if it has not exited within its grace:
   * see end()) and forgets the session: the next chain starts a new one. `interrupted`: a stop
   * signal. Resolves once the process has exited.
   */
  close(interrupted = false): Promise<void> {
    this.end(interrupted ? "interrupted" : "done");
    return this.stopping;
  }

  /**
   * Stops the process and fails the request waiting on it. A server that misbehaved also gets
   * SIGTERM; one stopped by a signal has STOP_GRACE_MS to exit; one stopped at the end of its
   * work has as long to exit as to answer (D-0180), so its clean-up (a trace, a profile, a
   * database's close) is not cut at 2 s.
   */
  private end(why: "done" | "interrupted" | "misbehaved"): void {
    const graceMs = why === "done" ? Math.max(STOP_GRACE_MS, this.timeoutMs) : STOP_GRACE_MS;
    if (this.running !== null) this.stopping = this.running.process.stop(why === "misbehaved", graceMs);
    this.running = null;
    this.hello = null;
    this.session = null;
    this.pending?.reject(new ServerDied("was stopped", this.stderr()));
    this.pending = null;
  }

  private requireSession(): string {
    if (this.session === null) throw new TargetError("no open session (startChain first)");
    return this.session;
  }

  private unusable(message: string): TargetError {
    return new TargetError(message, this.stderr());
  }

  private async ensureStarted(): Promise<void> {
    if (this.running !== null) return;
    this.starts++;
    this.exited = null;
    const proc = new TargetProcess(this.command, [], "server");
    // A new process starts with no answer lines: nothing a dead one left half-written is read as its hello.
    const running: Running = { process: proc, lines: new AnswerLines() };
    this.running = running;
    this.last = proc;
    // Events of a process already ended and replaced (close() after a missed deadline) are not this one's.
    const current = () => this.running === running;
    proc.child.stdout!.on("data", (chunk: Buffer) => current() && this.onStdout(running, chunk));
    proc.ended.then(
      (ended) => current() && this.onExit(howEnded(ended)),
      (err: Error) => current() && this.onExit(err.message),
    );
    this.lastRequest = "hello";
    const line = await this.nextLine(HELLO_TIMEOUT_MS, "the hello line");
    let hello: unknown;
    try {
      hello = parseJson(line, { maxValues: valuesFor(line.length) });
    } catch (err) {
      if (!(err instanceof JsonError)) throw err;
      throw this.failStart(`its first line is not a JSON hello: ${err.message}`);
    }
    const h = typeof hello === "object" && hello !== null && !Array.isArray(hello) ? (hello as Json) : {};
    if (h["protocol"] !== T8N_SERVER_PROTOCOL) throw this.failStart(`its hello names protocol ${short(h["protocol"] ?? null)}, not ${T8N_SERVER_PROTOCOL}`);
    const root = h["session_state_root"];
    if (root !== "chain" && root !== "per_block") throw this.failStart(`its hello gives session_state_root ${short(root ?? null)} (expected "chain" or "per_block")`);
    this.hello = h;
    this.sessionStateRoot = root;
  }

  /** A hello that is not the protocol's: unusable (no restart would help). */
  private failStart(message: string): TargetError {
    const err = this.unusable(`is not a ${T8N_SERVER_PROTOCOL} server: ${message}`);
    this.end("misbehaved");
    return err;
  }

  private onStdout(running: Running, chunk: Buffer): void {
    try {
      running.lines.push(chunk);
    } catch (err) {
      // A line past the bound: the server cannot be read any more, and is ended.
      const p = this.pending;
      this.pending = null;
      this.end("misbehaved");
      this.exited = (err as TargetError).message;
      p?.reject(this.unusable(this.exited));
      return;
    }
    this.deliver();
  }

  /** Hands the next complete answer line to the request waiting for it. */
  private deliver(): void {
    if (this.pending === null || this.running === null) return;
    const line = this.running.lines.next();
    if (line === null) return;
    const p = this.pending;
    this.pending = null;
    p.resolve(line);
  }

  private onExit(how: string): void {
    const last = lastLine(this.stderr());
    this.exited = `${how}${last === "" ? "" : `: ${last}`}`;
    this.running = null;
    this.hello = null;
    this.session = null;
    const p = this.pending;
    this.pending = null;
    p?.reject(new ServerDied(this.exited, this.stderr()));
  }

  /** The next line on stdout within `ms`; a death or a missed deadline is ServerDied (the process is ended). */
  private nextLine(ms: number, what: string): Promise<Uint8Array> {
    if (this.running === null) return Promise.reject(new ServerDied(this.exited ?? "is not running", this.stderr()));
    return new Promise<Uint8Array>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending = null;
        const err = new ServerDied(`did not answer ${what} within ${ms / 1000} s`, this.stderr());
        this.end("misbehaved");
        reject(err);
      }, ms);
      this.pending = {
        resolve: (line) => {
          clearTimeout(timer);
          resolve(line);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      this.deliver();
    });
  }

  /** One request and its answer; an error answer or an answer to another id is unusable output. */
  private async call(request: Json, what: string): Promise<Json> {
    const id = this.nextId++;
    this.lastRequest = what;
    const line = JSON.stringify({ id, ...request });
    const max = this.hello?.["max_line_bytes"];
    if (typeof max === "number" && Buffer.byteLength(line) > max) throw this.unusable(`${what}: the request has ${Buffer.byteLength(line)} bytes, above the server's max_line_bytes ${max}`);
    const running = this.running;
    if (running === null) throw new ServerDied(this.exited ?? "is not running", this.stderr());
    const answered = this.nextLine(this.timeoutMs, `${what} (request ${id})`);
    running.process.child.stdin!.write(line + "\n");
    const text = await answered;
    let answer: unknown;
    try {
      answer = parseJson(text, { maxValues: valuesFor(text.length) });
    } catch (err) {
      if (!(err instanceof JsonError)) throw err;
      throw this.unusable(`${what}: the answer is not strict JSON (${err.message})`);
    }
    if (typeof answer !== "object" || answer === null || Array.isArray(answer)) throw this.unusable(`${what}: the answer is not a JSON object`);
    const a = answer as Json;
    if (a["id"] !== id) throw this.unusable(`${what}: answered id ${short(a["id"] ?? null)}, expected ${id}`);
    const error = a["error"];
    if (typeof error === "object" && error !== null) {
      const e = error as Json;
      throw this.unusable(`${what}: answered error ${said(String(e["code"]))}: ${said(String(e["message"]))}`);
    }
    return a;
  }
}

function howEnded(e: Ended): string {
  if (e.code === 127) return "command not found (exit 127)";
  return e.signal !== null ? `killed by ${e.signal}` : `exited with status ${e.code}`;
}

/** A value of the server's, shortened for an error line. */
function short(v: unknown): string {
  return said(JSON.stringify(v));
}
