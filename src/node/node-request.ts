// One JSON request to a `cbqs node`, for `cbqs tx --node` (GET /genesis, /account, /devnet/accounts,
// /tx/{hash}; POST /tx): on node:http for the reason the client's transport gives (src/client/http.ts:
// every port works), bounded by a timeout on the whole exchange and by the answer's size.
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";

/** Larger than any answer these requests get (an account, a transaction, 1,000 dev accounts). */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

export interface NodeAnswer {
  status: number;
  /** The parsed JSON body (the node answers JSON, errors included). */
  body: Record<string, unknown>;
}

/** The connection failed (refused, reset, unknown host): the message is the system error code. */
export class ConnectionFailed extends Error {
  override name = "ConnectionFailed";
}

/** No whole answer within the timeout. */
export class RequestTimeout extends Error {
  override name = "RequestTimeout";
}

/** An answer that is not the node's JSON (another server on that port, a truncated body). */
export class NotANodeAnswer extends Error {
  override name = "NotANodeAnswer";
}

export function nodeRequest(url: string, options: { method?: "GET" | "POST"; body?: string; timeoutMs: number }): Promise<NodeAnswer> {
  const { method = "GET", body, timeoutMs } = options;
  return new Promise((resolveAnswer, rejectAnswer) => {
    let settled = false;
    const finish = (): boolean => {
      if (settled) return false;
      settled = true;
      clearTimeout(timer);
      return true;
    };
    const resolve = (a: NodeAnswer) => finish() && resolveAnswer(a);
    const reject = (err: Error) => {
      if (!finish()) return;
      req.destroy();
      rejectAnswer(err);
    };
    const send = url.startsWith("https:") ? httpsRequest : httpRequest;
    const headers: Record<string, string> = { accept: "application/json" };
    if (body !== undefined) headers["content-type"] = "text/plain";
    const req = send(url, { method, agent: false, headers }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_ANSWER_BYTES) {
          reject(new NotANodeAnswer(`the answer exceeds ${MAX_ANSWER_BYTES} bytes`));
          return;
        }
        chunks.push(chunk);
      });
      res.on("end", () => {
        let parsed: unknown;
        try {
          parsed = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        } catch {
          reject(new NotANodeAnswer(`HTTP ${res.statusCode}: the answer is not JSON`));
          return;
        }
        if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
          reject(new NotANodeAnswer(`HTTP ${res.statusCode}: the answer is not a JSON object`));
          return;
        }
        resolve({ status: res.statusCode ?? 0, body: parsed as Record<string, unknown> });
      });
      res.on("error", (err: NodeJS.ErrnoException) => reject(new ConnectionFailed(err.code ?? err.message)));
    });
    const timer = setTimeout(() => reject(new RequestTimeout(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
    req.on("error", (err: NodeJS.ErrnoException) => reject(new ConnectionFailed(err.code ?? err.message)));
    req.end(body);
  });
}
