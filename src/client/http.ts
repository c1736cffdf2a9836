// One HTTP(S) exchange on node:http rather than fetch (D-0131 "Client requests:
// node:http with an inactivity timeout"): fetch refuses the ports of the fetch spec's block list ("bad
// port" for http://127.0.0.1:6000) and a node may listen on any port; and its timeout is reset
// whenever data arrives, so a large answer that keeps arriving is never cut while a server that
// accepts and never answers is given up on after `timeoutMs`. An AbortSignal ends the request at
// once (SIGINT while a request hangs).
import { request as httpRequestRaw, type IncomingHttpHeaders } from "node:http";
import { request as httpsRequestRaw } from "node:https";
import { ConnectionFailed, RequestAborted, RequestTimeout } from "./errors.js";

export interface HttpOptions {
  method?: "GET" | "POST";
  body?: Uint8Array;
  contentType?: string;
  /** The Accept header; default application/json. */
  accept?: string;
  timeoutMs: number;
  signal?: AbortSignal | undefined;
  /** Each chunk of the body as it arrives; a throw ends the request with that error. */
  onChunk: (chunk: Buffer) => void;
  /** The status and headers, before the body; a throw ends the request with that error (an answer never meant to end, GET /subscribe, is judged here). */
  onResponse?: (status: number, headers: IncomingHttpHeaders) => void;
  /** The whole exchange, however steadily the answer arrives (a server that drips it); none for an answer never meant to end. */
  deadlineMs?: number;
}

/** Sends one request, streaming the answer's body to `onChunk`; resolves with the status once the body has ended. */
export function httpRequest(url: string, options: HttpOptions): Promise<{ status: number; headers: IncomingHttpHeaders }> {
  const { timeoutMs, signal, onChunk } = options;
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new RequestAborted(url));
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const whole = options.deadlineMs === undefined ? undefined : setTimeout(() => fail(new RequestTimeout(url, options.deadlineMs!, true)), options.deadlineMs);
    const settle = () => {
      settled = true;
      clearTimeout(timer);
      clearTimeout(whole);
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
      timer = setTimeout(() => fail(new RequestTimeout(url, timeoutMs)), timeoutMs);
    };
    const onAbort = () => fail(new RequestAborted(url));
    const connectionError = (err: NodeJS.ErrnoException) => fail(new ConnectionFailed(url, err.code ?? err.message));
    const send = url.startsWith("https:") ? httpsRequestRaw : httpRequestRaw;
    // X-Cbqs-Client: a node's devnet writes need it (docs/spec/security-model.md); the client names itself on every request.
    const headers: Record<string, string> = { accept: options.accept ?? "application/json", "x-cbqs-client": "cbqs-emulator" };
    if (options.body !== undefined) {
      headers["content-type"] = options.contentType ?? "application/octet-stream";
      headers["content-length"] = String(options.body.length);
    }
    // A kept-alive socket would hold the process open after its last request (until the server drops it).
    const req = send(url, { method: options.method ?? "GET", agent: false, headers }, (res) => {
      arm();
      try {
        options.onResponse?.(res.statusCode ?? 0, res.headers);
      } catch (err) {
        fail(err as Error);
        return;
      }
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
    });
    req.on("error", connectionError);
    arm();
    signal?.addEventListener("abort", onAbort, { once: true });
    req.end(options.body === undefined ? undefined : Buffer.from(options.body.buffer, options.body.byteOffset, options.body.length));
  });
}
