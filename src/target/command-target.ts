// A per-call t8n under test: any command that follows the t8n convention of docs/reference/formats/fixture.md §4.
// Per block the inputs are written to a new private temporary directory, the command runs as
// `/bin/sh -c '<command> "$@"'` with the five t8n flags as separate arguments (so the command
// string is read exactly as a shell reads it: quotes, variables, `env X=1 …`), and its two output
// files are read back through src/target/bounded.ts. The directory is removed by close().
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { lastLine, readOutputFile, TargetError, TargetProcess } from "./bounded.js";
import { inputTexts, parseTargetOutput, type T8nInputs, type T8nTarget, type TargetOutput } from "./target.js";

export class CommandTarget implements T8nTarget {
  private dir: string | null = null;
  private running: TargetProcess | null = null;
  /** Why the invocation under way was ended by stop(), or null. */
  private stopped: string | null = null;

  constructor(
    readonly command: string,
    private readonly timeoutMs: number,
  ) {}

  run(inputs: T8nInputs): Promise<TargetOutput> {
    return this.runTexts(inputTexts(inputs));
  }

  /** One invocation over the three input files' texts as given (`cbqs t8n-adapter` passes a request's documents). */
  async runTexts(texts: { alloc: string; txs: string; env: string }): Promise<TargetOutput> {
    const base = (this.dir ??= mkdtempSync(join(tmpdir(), "cbqs-fuzz-")));
    // A directory of its own for every invocation: nothing the last one left behind (a FIFO where an
    // input goes, a link) is opened; the inputs are new files (O_EXCL: never through a link).
    const dir = mkdtempSync(join(base, "call-"));
    try {
      return await this.invoke(dir, texts);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  private async invoke(dir: string, texts: { alloc: string; txs: string; env: string }): Promise<TargetOutput> {
    const file = (name: string) => join(dir, name);
    writeFileSync(file("alloc.json"), texts.alloc, { flag: "wx" });
    writeFileSync(file("txs.json"), texts.txs, { flag: "wx" });
    writeFileSync(file("env.json"), texts.env, { flag: "wx" });
    const flags = [
      "--input.alloc", file("alloc.json"),
      "--input.txs", file("txs.json"),
      "--input.env", file("env.json"),
      "--output.result", file("result.json"),
      "--output.alloc", file("post.json"),
    ];
    const proc = new TargetProcess(`${this.command} "$@"`, ["cbqs-fuzz", ...flags], "call");
    this.running = proc;
    this.stopped = null;
    proc.deadline(this.timeoutMs);
    const { code, signal, timedOut } = await proc.ended.finally(() => (this.running = null));
    const stderr = proc.stderr;
    const last = lastLine(stderr);
    const said = last === "" ? "" : `: ${last}`;
    if (timedOut) throw new TargetError(`did not finish within ${this.timeoutMs / 1000} s`, stderr);
    if (this.stopped !== null) throw new TargetError(`was stopped (${this.stopped})`, stderr);
    if (code === 127) throw new TargetError(`command not found (exit 127)${said}`, stderr);
    const how = signal === null ? `exit ${code}` : `killed by ${signal}`;
    const read = (name: string, flag: string) => {
      try {
        return readOutputFile(file(name), flag);
      } catch (err) {
        if (err instanceof TargetError) throw new TargetError(`${how}, but ${err.message}`, stderr);
        throw err;
      }
    };
    const result = read("result.json", "--output.result");
    const alloc = read("post.json", "--output.alloc");
    if (result === null || alloc === null) {
      const missing = result === null ? "--output.result" : "--output.alloc";
      if (code !== 0) throw new TargetError(`${how} without writing ${missing}${said}`, stderr);
      throw new TargetError(`exit 0 but no ${missing} file was written${said}`, stderr);
    }
    try {
      return parseTargetOutput(result, alloc, stderr);
    } catch (err) {
      if (err instanceof TargetError) throw new TargetError(err.message, stderr);
      throw err;
    }
  }

  /** Ends the invocation under way (its answer is a TargetError saying `why`); later ones run as usual. */
  stop(why: string): void {
    if (this.running === null) return;
    this.stopped = why;
    this.running.kill();
  }

  close(): void {
    this.running?.kill();
    if (this.dir !== null) rmSync(this.dir, { recursive: true, force: true });
    this.dir = null;
  }
}
