// Sending a StreamedAnswer (src/node/json.ts; GET /fixture): status and headers first, then the
// text of each unit as it is produced (chunked transfer encoding), the event loop turned between
// units so that the node keeps answering and producing blocks meanwhile. Other answers are built
// from one block without yielding; a streamed one spans many turns, which is sound only because
// what it reads never changes once committed (the blocks at or below a height fixed when it was
// asked for). Bounded: one at a time per server (the caller's slot), backpressure from the
// socket, and a client that reads nothing for STALL_MS is cut off.
import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { StreamedAnswer } from "./json.js";

/** Text gathered before a socket write: a block with a large post_state is written in pieces of about this size. */
const WRITE_BYTES = 64 * 1024;
/** Milliseconds of work between two turns of the event loop (as src/steps.ts). */
const YIELD_MS = 25;
/** A client that takes nothing for this long is cut off: it would hold the export slot. */
export const STALL_MS = 30_000;

type Logger = (entry: Record<string, unknown>) => void;

/**
 * Streams `answer` as a 200. The status is already sent when the body is produced, so a failure
 * afterwards (a stored block that does not re-execute, a bug) cannot become an error answer: it
 * is logged and the connection is cut before the end of the body, so no client takes the
 * truncated text for a whole document (curl: "transfer closed with outstanding read data").
 */
export async function sendStreamed(res: ServerResponse, answer: StreamedAnswer, headers: Record<string, string>, log: Logger): Promise<void> {
  res.writeHead(200, { "content-type": "application/json; charset=utf-8", ...headers });
  let pending: string[] = [];
  let size = 0;
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
        if (text !== "" && !res.write(text)) await drained(res);
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

/** Resolves once the socket takes more, or is gone; a client that reads nothing for STALL_MS is cut off. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    const timer = setTimeout(() => {
      res.destroy();
      done();
    }, STALL_MS);
    res.on("drain", done);
    res.on("close", done);
  });
}
