// Sending a StreamedAnswer (src/node/json.ts; GET /fixture): status and headers first, then the
// text of each unit as it is produced (chunked transfer encoding), the event loop turned between
// units so that the node keeps answering and producing blocks meanwhile. Other answers are built
// from one block without yielding; a streamed one spans many turns, which is sound only because
// what it reads never changes once committed (the blocks at or below a height fixed when it was
// asked for). Bounded: one at a time per server (the caller's slot), backpressure from the
// socket, and a client that keeps it waiting is cut off: one that reads nothing for STALL_MS, or
// that the node has waited on for longer, in all, than the grace plus one second per
// `minBytesPerSecond` sent (src/node/unread.ts: the rate every answer is held to) — a slow reader
// cannot hold the slot for much longer than a reader at that rate would.
import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { StreamedAnswer } from "./json.js";
import { DEFAULT_UNREAD_LIMITS, readDeadlineMs, type UnreadLimits } from "./unread.js";

/** Text gathered before a socket write: a block with a large post_state is written in pieces of about this size. */
const WRITE_BYTES = 64 * 1024;
/** Milliseconds of work between two turns of the event loop (as src/steps.ts). */
const YIELD_MS = 25;
/** A client that takes nothing for this long is cut off: it would hold the export slot. */
export const STALL_MS = 30_000;

type Logger = (entry: Record<string, unknown>) => void;

/** How fast a client must take a streamed answer: the rate every answer is held to. */
export type Pace = Pick<UnreadLimits, "graceMs" | "minBytesPerSecond">;

/**
 * Streams `answer` as a 200. The status is already sent when the body is produced, so a failure
 * afterwards (a stored block that does not re-execute, a bug) cannot become an error answer: it
 * is logged and the connection is cut before the end of the body, so no client takes the
 * truncated text for a whole document (curl: "transfer closed with outstanding read data").
 */
export async function sendStreamed(res: ServerResponse, answer: StreamedAnswer, headers: Record<string, string>, log: Logger, pace: Pace = DEFAULT_UNREAD_LIMITS): Promise<void> {
  res.writeHead(200, { "content-type": "application/json; charset=utf-8", ...headers });
  let pending: string[] = [];
  let size = 0;
  /** What the client was given, and the milliseconds the node has waited for it to take it. */
  const client = { sent: 0, waitedMs: 0 };
  const steps = answer.produce({
    write(text) {
      pending.push(text);
      size += text.length;
    },
  });
  let last = performance.now();
  try {
    for (;;) {
      // A client gone, or the server closing (it destroys every streamed answer): stop here.
      if (res.destroyed) return;
      const r = steps.next();
      if (r.done === true || size >= WRITE_BYTES) {
        const text = pending.join("");
        pending = [];
        size = 0;
        if (text !== "") {
          client.sent += text.length;
          if (!res.write(text)) {
            await drained(res, client, pace, log);
            // Cut, or gone: the slot is freed now, not a turn of the event loop later.
            if (res.destroyed) return;
          }
        }
      }
      if (r.done === true) {
        res.end();
        log({ level: "info", ...r.value });
        return;
      }
      if (performance.now() - last >= YIELD_MS) {
        await nextTurn();
        last = performance.now();
      }
    }
  } catch (err) {
    const id = randomUUID();
    log({ level: "error", msg: "streamed answer failed; connection cut", id, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    res.destroy();
  } finally {
    steps.return({});
  }
}

/**
 * Resolves once the socket takes more, or is gone. A client that reads nothing for STALL_MS is cut
 * off, and so is one whose waits, added up, pass the grace plus one second per minBytesPerSecond
 * it was sent.
 */
function drained(res: ServerResponse, client: { sent: number; waitedMs: number }, pace: Pace, log: Logger): Promise<void> {
  return new Promise((resolve) => {
    const started = performance.now();
    const allowed = readDeadlineMs(pace, client.sent) - client.waitedMs;
    const done = (): void => {
      clearTimeout(timer);
      client.waitedMs += performance.now() - started;
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    const timer = setTimeout(
      () => {
        const reason = allowed < STALL_MS ? `read slower than ${pace.minBytesPerSecond} bytes per second on average` : `read nothing for ${STALL_MS / 1000} s`;
        log({ level: "info", msg: "streamed answer cut", reason, sent_bytes: client.sent });
        res.destroy();
        done();
      },
      Math.max(0, Math.min(STALL_MS, allowed)),
    );
    res.on("drain", done);
    res.on("close", done);
  });
}
