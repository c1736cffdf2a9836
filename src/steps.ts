// Long work as a sequence of units, and the one way a command stops between two of them on
// SIGINT/SIGTERM (project rule: finish or roll back the unit in progress, close the store, exit;
// nothing half-written).
//
// Why generators: Node runs a signal handler only when the event loop turns, and the work here —
// reading a document, replaying blocks, committing a pre-state, writing a dump, rebuilding a
// snapshot — is synchronous. So a long piece of work is written as a generator (`Steps<T>`) that
// yields after each unit (a block, a 1 MiB chunk read, a batch of entries, an ops record) and
// returns its result. `finish(steps)` runs it straight through (library callers and tests keep
// their synchronous API); a command runs it with `await stoppable(steps)`, which turns the event
// loop every YIELD_MS of work (a turn costs microseconds; turning after every unit would cost
// more than the work in per-entry loops) and, once a signal has arrived, throws `Stopped` into
// the generator at its yield: the generator's own catch/finally blocks then roll back (drop a
// temporary file, close a store, remove a half-built directory) exactly as for any other error,
// and the command reports what was kept and exits 130 (SIGINT) or 143 (SIGTERM).
import { setImmediate as nextTurn } from "node:timers/promises";

/** A unit-by-unit computation of a T: each `yield` ends a unit. */
export type Steps<T> = Generator<void, T, void>;

export type StopSignalName = "SIGINT" | "SIGTERM";

const EXIT_CODES: Record<StopSignalName, number> = { SIGINT: 130, SIGTERM: 143 };

/** The command was stopped by a signal between two units; `kept` says what it left behind. */
export class Stopped extends Error {
  override name = "Stopped";
  kept = "nothing written";
  constructor(readonly signal: StopSignalName) {
    super(`stopped by ${signal}`);
  }
  get exitCode(): number {
    return EXIT_CODES[this.signal];
  }
}

/** Milliseconds of work between two turns of the event loop. */
const YIELD_MS = 25;

/** The signals received since the command started (a new session per command: tests run several in one process). */
let session = { received: null as StopSignalName | null, controller: new AbortController() };
let listening = false;

function listen(): void {
  if (listening) return;
  listening = true;
  const on = (name: StopSignalName) => {
    if (session.received !== null) return;
    session.received = name;
    session.controller.abort();
  };
  process.on("SIGINT", () => on("SIGINT"));
  process.on("SIGTERM", () => on("SIGTERM"));
}

/**
 * Called when a long-running command starts: from now on SIGINT/SIGTERM no longer end the process
 * at once; they are recorded, and the work stops at its next unit boundary. Returns an AbortSignal
 * for work that turns the event loop itself (a server, a follower, replay --db).
 */
export function watchSignals(): AbortSignal {
  listen();
  session = { received: null, controller: new AbortController() };
  return session.controller.signal;
}

/** The first SIGINT/SIGTERM received since the command started, if any. */
export function stopRequested(): StopSignalName | null {
  return session.received;
}

/** Runs `steps` to the end, synchronously. */
export function finish<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done === true) return r.value;
  }
}

/** When the event loop last turned inside `stoppable`: work is timed across calls, so many short pieces of work turn it too. */
let lastTurn = performance.now();

/** Turns the event loop (so a signal handler can run) once YIELD_MS of work have passed since the last turn. */
async function turnIfDue(): Promise<void> {
  if (performance.now() - lastTurn < YIELD_MS) return;
  await nextTurn();
  lastTurn = performance.now();
}

/**
 * Runs `steps` to the end, turning the event loop between units; after a SIGINT/SIGTERM, throws
 * Stopped into the generator (so it rolls back its unit) and then to the caller. A signal that
 * arrived before the call stops it before its first unit; one that arrives during its last unit
 * lets the finished result return (nothing is lost) and stops the next call.
 */
export async function stoppable<T>(steps: Steps<T>): Promise<T> {
  listen();
  if (session.received !== null) throw new Stopped(session.received);
  for (;;) {
    const r = steps.next();
    await turnIfDue();
    if (r.done === true) return r.value;
    const received = session.received;
    if (received !== null) {
      const stop = new Stopped(received);
      steps.throw(stop);
      // The generator swallowed it (it should not): still stop.
      throw stop;
    }
  }
}

/** Reports `kept` (evaluated when stopped) as what a Stopped from `work` left behind. */
export async function keeping<T>(kept: () => string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof Stopped) err.kept = kept();
    throw err;
  }
}
