// Replay progress for people: a single self-overwriting stderr line (blocks/s, tx/s, height of
// total, ETA) only when stderr is a TTY, and the final summary's throughput. Wall-clock time is
// used here for display only; nothing consensus-related reads it.
import { performance } from "node:perf_hooks";
import type { ReplayProgress } from "./replay.js";

const REDRAW_MS = 250;

export class Stopwatch {
  private readonly started = performance.now();
  seconds(): number {
    return (performance.now() - this.started) / 1000;
  }
}

export function rate(count: number, seconds: number): string {
  return seconds > 0 ? (count / seconds).toFixed(count / seconds >= 100 ? 0 : 1) : "-";
}

export class ProgressLine {
  private lastDraw = 0;
  private readonly clock = new Stopwatch();
  private drawn = false;

  constructor(
    private readonly label: string,
    private readonly enabled: boolean,
  ) {}

  update(p: ReplayProgress): void {
    if (!this.enabled) return;
    const now = performance.now();
    if (now - this.lastDraw < REDRAW_MS && p.blocksDone !== p.blocksTotal) return;
    this.lastDraw = now;
    const s = this.clock.seconds();
    const left = p.blocksTotal - p.blocksDone;
    const eta = p.blocksDone > 0 && s > 0 ? `${Math.ceil((left * s) / p.blocksDone)} s` : "-";
    process.stderr.write(
      `\r\x1b[K${this.label}: height ${p.height} of ${p.lastHeight}, ${rate(p.blocksDone, s)} blocks/s, ${rate(p.txsDone, s)} tx/s, ETA ${eta}`,
    );
    this.drawn = true;
  }

  end(): void {
    if (this.drawn) process.stderr.write("\r\x1b[K");
  }
}
