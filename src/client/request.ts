// One JSON exchange with the node, with the client's two retry rules: a 429 is waited out as its
// Retry-After says, within a bounded number of retries and a bounded total wait; a failed
// connection is retried (twice by default) for requests that change nothing (a kept-alive socket the node
// closed, a node restarting). Every answer is read with the one strict JSON reader
// (docs/reference/formats/fixture.md §0), so a repeated key in a node's answer is refused as anywhere else.
import { echo } from "../bounds.js";
import { JsonError, parseJson, valuesFor } from "../json/parse.js";
import { ConnectionFailed, Gone, MalformedAnswer, NodeError, NotFound, RateLimited, RequestAborted } from "./errors.js";
import { httpRequest } from "./http.js";

export interface RequestPolicy {
  timeoutMs: number;
  /** The whole answer, however steadily it arrives. */
  answerDeadlineMs: number;
  maxRetries: number;
  maxRetryWaitMs: number;
  connectRetries: number;
  maxAnswerBytes: number;
  signal?: AbortSignal | undefined;
  /** Milliseconds since the epoch, for a Retry-After given as an HTTP date. */
  now: () => number;
}

export interface JsonRequest {
  url: string;
  method?: "GET" | "POST";
  body?: Uint8Array;
  contentType?: string;
  /** Reads only: a request that may be sent again after a failed connection without doing anything twice. */
  idempotent: boolean;
}

/** The wait after the n-th failed connection (n from 1). */
const CONNECT_BACKOFF_MS = 250;
/** The wait for a 429 that names no usable Retry-After. */
const DEFAULT_RETRY_AFTER_S = 1;

export async function requestJson(policy: RequestPolicy, req: JsonRequest): Promise<Record<string, unknown>> {
  const { url } = req;
  let connectFailures = 0;
  let rateRetries = 0;
  let waitedMs = 0;
  for (;;) {
    const chunks: Buffer[] = [];
    let size = 0;
    let answer: Awaited<ReturnType<typeof httpRequest>>;
    try {
      answer = await httpRequest(url, {
        ...(req.method === undefined ? {} : { method: req.method }),
        ...(req.body === undefined ? {} : { body: req.body }),
        ...(req.contentType === undefined ? {} : { contentType: req.contentType }),
        timeoutMs: policy.timeoutMs,
        deadlineMs: policy.answerDeadlineMs,
        signal: policy.signal,
        onChunk: (chunk) => {
          size += chunk.length;
          if (size > policy.maxAnswerBytes) throw new MalformedAnswer(url, `the answer exceeds ${policy.maxAnswerBytes} bytes`);
          chunks.push(chunk);
        },
      });
    } catch (err) {
      if (err instanceof ConnectionFailed && req.idempotent && connectFailures < policy.connectRetries) {
        connectFailures++;
        await sleep(CONNECT_BACKOFF_MS * connectFailures, policy.signal, url);
        continue;
      }
      throw err;
    }
    const { status, headers } = answer;
    const text = Buffer.concat(chunks).toString("utf8");
    if (status === 429) {
      const retryAfter = parseRetryAfter(headers["retry-after"], policy.now);
      const waitMs = (retryAfter ?? DEFAULT_RETRY_AFTER_S) * 1000;
      // Never a partial wait: a retry that cannot be made within the budget is not started.
      if (rateRetries >= policy.maxRetries || waitedMs + waitMs > policy.maxRetryWaitMs) {
        const e = errorOf(tryParse(text));
        throw new RateLimited(url, e.code || "rate_limited", e.message, retryAfter, rateRetries + 1);
      }
      rateRetries++;
      waitedMs += waitMs;
      await sleep(waitMs, policy.signal, url);
      continue;
    }
    let body: unknown;
    try {
      body = parseJson(text, { maxValues: valuesFor(size) });
    } catch (err) {
      if (!(err instanceof JsonError)) throw err;
      throw new MalformedAnswer(url, `HTTP ${status}, not a usable JSON answer (${err.message})`);
    }
    if (status !== 200) {
      const e = errorOf(body);
      const Refusal = status === 404 ? NotFound : status === 410 ? Gone : NodeError;
      throw new Refusal(url, status, echo(e.code, 60), echo(e.message));
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw new MalformedAnswer(url, "the answer is not a JSON object");
    return body as Record<string, unknown>;
  }
}

function tryParse(text: string): unknown {
  try {
    return parseJson(text, { maxValues: valuesFor(Buffer.byteLength(text)) });
  } catch {
    return undefined;
  }
}

/** The node's `{"error": {"code", "message"}}`, or empty strings when the answer has none. */
function errorOf(body: unknown): { code: string; message: string } {
  const e = typeof body === "object" && body !== null ? (body as { error?: unknown }).error : undefined;
  const field = (name: "code" | "message") => {
    const v = typeof e === "object" && e !== null ? (e as Record<string, unknown>)[name] : undefined;
    return typeof v === "string" ? v : "";
  };
  return { code: field("code"), message: field("message") };
}

/** Retry-After as whole seconds (RFC 9110 §10.2.3: delay-seconds or an HTTP date); undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now: () => number): number | undefined {
  if (typeof value !== "string") return undefined;
  const text = value.trim();
  if (/^[0-9]{1,9}$/.test(text)) return Number(text);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, Math.ceil((at - now()) / 1000));
}

/** Waits `ms`; an abort ends the wait with RequestAborted naming `url`. */
export function sleep(ms: number, signal: AbortSignal | undefined, url: string): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new RequestAborted(url));
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener("abort", aborted);
      resolve();
    }
    function aborted() {
      clearTimeout(t);
      reject(new RequestAborted(url));
    }
    signal?.addEventListener("abort", aborted, { once: true });
  });
}
