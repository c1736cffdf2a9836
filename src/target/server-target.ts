// The implementation under test as a long-lived server of the cbqs-t8n-server/v1 protocol
// (docs/fixtures.md §4.1): one process for a whole campaign, one session per chain, so a block
// ships only its transactions and env. The command runs as `/bin/sh -c '<command>'` in its own
// process group (a timeout or an interrupt ends it and whatever it started); requests go one at
// a time, each with a deadline. A process that exits or misses a deadline is a ServerDied: the
// fuzzer reports it, starts a new process and tries the run again (src/fuzz/fuzz.ts).
import { spawn, type ChildProcess } from "node:child_process";
import { toHex } from "../bytes.js";
import { JsonError, parseJson } from "../json/parse.js";
import { T8N_SERVER_PROTOCOL } from "../harness/t8n-server.js";
import { DUMP_FORMAT } from "../../state/kv/dump.js";
import type { Entries, T8nInputs } from "./target.js";
import { checkedResult, envJson, parseTargetOutput, TargetError, type ChainTarget, type TargetAnswer, type TargetOutput } from "./target.js";

/** The server process ended or missed a deadline: the fuzzer may start a new one. */
export class ServerDied extends TargetError {
  override name = "ServerDied";
}

/** How much of the server's stderr is kept for the report and the error line. */
const STDERR_KEEP = 64 * 1024;
/** The hello line must come within this time of the start (a server loads its code first). */
const HELLO_TIMEOUT_MS = 60_000;

type Json = Record<string, unknown>;

export class ServerTarget implements ChainTarget {
  readonly memoizable = false;
  private child: ChildProcess | null = null;
  private hello: Json | null = null;
  private buffered = "";
  private stderrTail = "";
  private nextId = 1;
  /** The one outstanding request's completion. */
  private pending: { resolve: (line: string) => void; reject: (err: Error) => void } | null = null;
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

  get stateRoot(): "chain" | "per_block" {
    return this.hello?.["session_state_root"] === "per_block" ? "per_block" : "chain";
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
    const dump = { format: DUMP_FORMAT, height: height.toString(), entries: alloc.map(([k, v]) => ({ key: toHex(k), value: toHex(v) })) };
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
    if (typeof got["post_state"] !== "object" || got["post_state"] === null) throw this.unusable(`session.post_state answered without a post_state: ${short(got)}`);
    try {
      return parseTargetOutput(answer.resultText, JSON.stringify(got["post_state"], null, 2) + "\n", this.stderrTail);
    } catch (err) {
      if (err instanceof TargetError) throw new TargetError(err.message.replace("--output.alloc", "session.post_state"), this.stderrTail);
      throw err;
    }
  }

  stderr(): string {
    return this.stderrTail;
  }

  /** Ends the process (and its group) and forgets the session: the next chain starts a new one. */
  close(): void {
    const pid = this.child?.pid;
    this.child?.stdin?.destroy();
    if (pid !== undefined) {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    this.child = null;
    this.hello = null;
    this.session = null;
    this.buffered = "";
    this.pending?.reject(new ServerDied("was stopped", this.stderrTail));
    this.pending = null;
  }

  private requireSession(): string {
    if (this.session === null) throw new TargetError("no open session (startChain first)");
    return this.session;
  }

  private unusable(message: string): TargetError {
    return new TargetError(message, this.stderrTail);
  }

  private async ensureStarted(): Promise<void> {
    if (this.child !== null) return;
    this.starts++;
    this.exited = null;
    this.stderrTail = "";
    const child = spawn("/bin/sh", ["-c", this.command], { stdio: ["pipe", "pipe", "pipe"], detached: true });
    this.child = child;
    child.stdout!.setEncoding("utf8");
    // Events of a process already ended and replaced (close() after a missed deadline) are not this one's.
    const current = () => this.child === child;
    child.stdout!.on("data", (chunk: string) => current() && this.onStdout(chunk));
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      if (current()) this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_KEEP);
    });
    // A write to a server that has exited is reported by its exit, not as an EPIPE crash here.
    child.stdin!.on("error", () => undefined);
    child.on("error", (err) => current() && this.onExit(`cannot start /bin/sh: ${err.message}`));
    child.on("exit", (code, signal) => current() && this.onExit(code === 127 ? "command not found (exit 127)" : signal !== null ? `killed by ${signal}` : `exited with status ${code}`));
    this.lastRequest = "hello";
    const line = await this.nextLine(HELLO_TIMEOUT_MS, "the hello line");
    let hello: unknown;
    try {
      hello = parseJson(line);
    } catch (err) {
      if (!(err instanceof JsonError)) throw err;
      throw this.failStart(`its first line is not a JSON hello: ${err.message}`);
    }
    const h = typeof hello === "object" && hello !== null && !Array.isArray(hello) ? (hello as Json) : {};
    if (h["protocol"] !== T8N_SERVER_PROTOCOL) throw this.failStart(`its hello names protocol ${JSON.stringify(h["protocol"] ?? null)}, not ${T8N_SERVER_PROTOCOL}`);
    if (h["session_state_root"] !== "chain" && h["session_state_root"] !== "per_block") {
      throw this.failStart(`its hello gives session_state_root ${JSON.stringify(h["session_state_root"] ?? null)} (expected "chain" or "per_block")`);
    }
    this.hello = h;
  }

  /** A hello that is not the protocol's: unusable (no restart would help). */
  private failStart(message: string): TargetError {
    const err = this.unusable(`is not a ${T8N_SERVER_PROTOCOL} server: ${message}`);
    this.close();
    return err;
  }

  private onStdout(chunk: string): void {
    this.buffered += chunk;
    for (let nl = this.buffered.indexOf("\n"); nl >= 0 && this.pending !== null; nl = this.buffered.indexOf("\n")) {
      const line = this.buffered.slice(0, nl);
      this.buffered = this.buffered.slice(nl + 1);
      const p = this.pending;
      this.pending = null;
      p.resolve(line);
    }
  }

  private onExit(how: string): void {
    const last = this.stderrTail.trim().split("\n").pop()?.trim() ?? "";
    this.exited = `${how}${last === "" ? "" : `: ${last}`}`;
    this.child = null;
    this.hello = null;
    this.session = null;
    const p = this.pending;
    this.pending = null;
    p?.reject(new ServerDied(this.exited, this.stderrTail));
  }

  /** The next line on stdout within `ms`; a death or a missed deadline is ServerDied (the process is ended). */
  private nextLine(ms: number, what: string): Promise<string> {
    if (this.child === null) return Promise.reject(new ServerDied(this.exited ?? "is not running", this.stderrTail));
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending = null;
        const err = new ServerDied(`did not answer ${what} within ${ms / 1000} s`, this.stderrTail);
        this.close();
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
      this.onStdout("");
    });
  }

  /** One request and its answer; an error answer or an answer to another id is unusable output. */
  private async call(request: Json, what: string): Promise<Json> {
    const id = this.nextId++;
    this.lastRequest = what;
    const line = JSON.stringify({ id, ...request });
    const max = this.hello?.["max_line_bytes"];
    if (typeof max === "number" && Buffer.byteLength(line) > max) throw this.unusable(`${what}: the request has ${Buffer.byteLength(line)} bytes, above the server's max_line_bytes ${max}`);
    const answered = this.nextLine(this.timeoutMs, `${what} (request ${id})`);
    this.child!.stdin!.write(line + "\n");
    const text = await answered;
    let answer: unknown;
    try {
      answer = parseJson(text);
    } catch (err) {
      if (!(err instanceof JsonError)) throw err;
      throw this.unusable(`${what}: the answer is not strict JSON (${err.message})`);
    }
    if (typeof answer !== "object" || answer === null || Array.isArray(answer)) throw this.unusable(`${what}: the answer is not a JSON object`);
    const a = answer as Json;
    if (a["id"] !== id) throw this.unusable(`${what}: answered id ${JSON.stringify(a["id"] ?? null)}, expected ${id}`);
    const error = a["error"];
    if (typeof error === "object" && error !== null) {
      const e = error as Json;
      throw this.unusable(`${what}: answered error ${String(e["code"])}: ${String(e["message"])}`);
    }
    return a;
  }
}

/** An answer shortened for an error line. */
function short(v: unknown): string {
  const text = JSON.stringify(v);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
