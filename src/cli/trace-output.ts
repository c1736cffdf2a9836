// The cbqs-trace/v1 output of `t8n --trace`, `replay --trace` and `trace`: JSON lines written as
// they are produced (a long chain's trace does not fit in memory), and dropped, never left
// half-written, when the command fails or is stopped.
import { Output } from "../json/write.js";

export class TraceFile {
  private readonly out: Output;
  constructor(path: string) {
    this.out = new Output(path);
  }
  write(lines: string[]): void {
    if (lines.length > 0) this.out.write(lines.join("\n") + "\n");
  }
  close(): void {
    this.out.close();
  }
  abort(): void {
    this.out.abort();
  }
}

/** Runs `produce` with a trace output (or none): closed after, dropped if `produce` throws or is stopped. */
export async function withTrace<T>(path: string | undefined, produce: (trace: TraceFile | null) => Promise<T>): Promise<T> {
  const trace = path === undefined ? null : new TraceFile(path);
  let result: T;
  try {
    result = await produce(trace);
  } catch (err) {
    trace?.abort();
    throw err;
  }
  trace?.close();
  return result;
}
