// One HTTP(S) GET for the follower (src/node/follower.ts): on node:http rather than fetch, because
// fetch refuses the ports of the fetch spec's block list ("bad port" for http://127.0.0.1:1) and a
// node may listen on any port; with a timeout that is reset whenever data arrives (a server that
// accepts and never answers is given up on after `timeoutMs`), and an AbortSignal that ends the
// request at once (SIGINT/SIGTERM while a request hangs).
import { get as httpGetRaw, type IncomingHttpHeaders } from "node:http";
import { get as httpsGetRaw } from "node:https";

/** The connection failed (refused, reset, DNS…): `code` is the system error code when there is one. */
export class ConnectionFailed extends Error {
  override name = "ConnectionFailed";
}

/** Nothing arrived for `timeoutMs` (no answer, or an answer that stalled). */
export class RequestTimeout extends Error {
  override name = "RequestTimeout";
}

/** The caller's signal ended the request. */
export class RequestAborted extends Error {
  override name = "RequestAborted";
}

export interface GetOptions {
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** Each chunk of the body as it arrives; a throw ends the request with that error. */
  onChunk: (chunk: Buffer) => void;
}

/** GETs `url`, streaming its body to `onChunk`; resolves with the status once the body has ended. */
export function httpGet(url: string, options: GetOptions): Promise<{ status: number; headers: IncomingHttpHeaders }> {
  const { timeoutMs, signal, onChunk } = options;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new RequestAborted("aborted"));
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const settle = () => {
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    const fail = (err: Error) => {
      if (settled) return;
      settle();
      req.destroy();
      reject(err);
    };
    const arm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => fail(new RequestTimeout(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
    };
    const onAbort = () => fail(new RequestAborted("aborted"));
    const connectionError = (err: NodeJS.ErrnoException) => fail(new ConnectionFailed(err.code ?? err.message));
    const get = url.startsWith("https:") ? httpsGetRaw : httpGetRaw;
    // A kept-alive socket would hold the process open after its last request (until the server drops it).
    const req = get(url, { agent: false, headers: { accept: "application/json" } }, (res) => {
      arm();
      res.on("data", (chunk: Buffer) => {
        if (settled) return;
        arm();
        try {
          onChunk(chunk);
        } catch (err) {
          fail(err as Error);
        }
      });
      res.on("end", () => {
        if (settled) return;
        settle();
        resolve({ status: res.statusCode ?? 0, headers: res.headers });
      });
      res.on("error", connectionError);
      res.on("aborted", () => fail(new ConnectionFailed("ECONNRESET")));
    });
    req.on("error", connectionError);
    arm();
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
