// Progress of long work, for people, on stderr (docs/reference/formats/fixture.md "Progress"): on a terminal a
// single self-overwriting line; anywhere else (a CI log) a plain line at most every 10 s of work,
// e.g. `replay: height 4,000/10,000, 410 blocks/s, 2,100 tx/s, ETA 15 s`; `--quiet` neither.
// One module for every command (replay, fill, run, t8n, the long-chain generator). Wall-clock
// time is used for display only; nothing consensus-related reads it.
import { performance } from "node:perf_hooks";
import { rate, thousands } from "../format.js";

export type ProgressMode = "tty" | "plain" | "off";

export interface Clock {
  /** Milliseconds since an arbitrary origin. */
  now(): number;
}

export const wallClock: Clock = { now: () => performance.now() };

/** Where progress goes: the terminal line when stderr is a TTY, plain lines otherwise, nothing with --quiet. */
export function progressMode(quiet: boolean | undefined, stream: { isTTY?: boolean } = process.stderr): ProgressMode {
  return quiet ? "off" : stream.isTTY === true ? "tty" : "plain";
}

export interface ProgressState {
  /** Units done, and the total when known. */
  done: number;
  total?: number;
  /** Plural noun of the unit: "blocks", "entries", "fixtures". */
  unit: string;
  /** For chains: the height reached and the last height. */
  height?: { at: bigint; last: bigint };
  /** Transactions done so far (adds a tx/s rate). */
  txs?: number;
  /** What the counts do not say, last on the line ("smallest so far 2 blocks, 3 txs"). */
  detail?: string;
}

const REDRAW_MS = 250;
export const PLAIN_INTERVAL_MS = 10_000;

/** CBQS_PROGRESS_MS (milliseconds) overrides the plain-line interval: a test waits for a line to know the work began. */
function plainInterval(): number {
  const text = process.env["CBQS_PROGRESS_MS"];
  return text !== undefined && /^[0-9]{1,9}$/.test(text) ? Number(text) : PLAIN_INTERVAL_MS;
}

export class Stopwatch {
  private readonly started: number;
  constructor(private readonly clock: Clock = wallClock) {
    this.started = clock.now();
  }
  seconds(): number {
    return (this.clock.now() - this.started) / 1000;
  }
}

export class Progress {
  private readonly clock: Clock;
  private readonly started: number;
  private last: number;
  private drawn = false;

  constructor(
    private readonly label: string,
    private readonly mode: ProgressMode,
    private readonly out: { write(text: string): unknown } = process.stderr,
    clock: Clock = wallClock,
  ) {
    this.clock = clock;
    this.started = clock.now();
    this.last = this.started;
  }

  /** The line for `s` after `seconds` of work. */
  line(s: ProgressState, seconds: number): string {
    const where = s.height !== undefined ? `height ${thousands(s.height.at)}/${thousands(s.height.last)}` : `${thousands(s.done)}${s.total !== undefined ? `/${thousands(s.total)}` : ""} ${s.unit}`;
    const parts = [where, `${rate(s.done, seconds)} ${s.unit}/s`];
    if (s.txs !== undefined) parts.push(`${rate(s.txs, seconds)} tx/s`);
    if (s.total !== undefined && s.done > 0 && s.done < s.total && seconds > 0) parts.push(`ETA ${Math.ceil(((s.total - s.done) * seconds) / s.done)} s`);
    if (s.detail !== undefined) parts.push(s.detail);
    return `${this.label}: ${parts.join(", ")}`;
  }

  update(s: ProgressState): void {
    if (this.mode === "off") return;
    const now = this.clock.now();
    const interval = this.mode === "tty" ? REDRAW_MS : plainInterval();
    if (now - this.last < interval) return;
    this.last = now;
    const text = this.line(s, (now - this.started) / 1000);
    if (this.mode === "tty") {
      this.out.write(`\r\x1b[K${text}`);
      this.drawn = true;
    } else {
      this.out.write(`${text}\n`);
    }
  }

  /** Clears the terminal line (plain lines stay in the log). */
  end(): void {
    if (this.drawn) this.out.write("\r\x1b[K");
    this.drawn = false;
  }
}

/** Work in phases (a fill executes, then checks by replay): one Progress per phase label, each with its own rates. */
export class Phases {
  private readonly phases = new Map<string, Progress>();

  constructor(private readonly mode: ProgressMode) {}

  update(label: string, s: ProgressState): void {
    let phase = this.phases.get(label);
    if (phase === undefined) this.phases.set(label, (phase = new Progress(label, this.mode)));
    phase.update(s);
  }

  end(): void {
    this.phases.forEach((p) => p.end());
  }
}
