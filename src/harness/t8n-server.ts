// The long-lived t8n protocol cbqs-t8n-server/v1 (docs/reference/formats/t8n-server.md): one process, one JSON
// request per stdin line, one JSON answer per stdout line, in order; stderr is free for logs.
// This module is the protocol (framing, the line bound, request checks, sessions, errors); what
// executes a block is a T8nBackend: in this process (`cbqs t8n --server`, below) or a per-call
// t8n command run once per block (`cbqs t8n-adapter`, src/target/t8n-adapter.ts).
import type { Readable, Writable } from "node:stream";
import { object, string } from "../json/fields.js";
import { JsonError, parseJson, type Json, type JsonObject } from "../json/parse.js";
import { dumpEntryViews, dumpHeader, loadDump, type DumpEntries } from "../../state/kv/dump.js";
import { MemoryStateStore, StateStoreError } from "../../state/store/store.js";
import { createStateCommitment } from "../../state/qmdb/index.js";
import { count } from "../format.js";
import { registryRecords } from "./records.js";
import { parseEnv, parseTxs, sessionBlock, transition, type T8nEnv } from "./t8n.js";
import { Stopped, stopRequested, watchSignals } from "../steps.js";
import { BlockInputError, GenesisError } from "../engine/errors.js";
import { LineSplitter, type Line } from "../lines.js";

export const T8N_SERVER_PROTOCOL = "cbqs-t8n-server/v1";
/** Open sessions at once: each holds a whole state in memory. */
export const MAX_SESSIONS = 16;

export type ErrorCode =
  | "parse_error"
  | "line_too_long"
  | "invalid_request"
  | "unknown_method"
  | "unknown_session"
  | "too_many_sessions"
  | "t8n_failed"
  | "internal_error";

/** A request that gets an error answer; the server goes on serving. */
export class RequestError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

/** A request's `txs` and `env`, checked by the protocol: parsed, and as the request gave them. */
export interface BlockInput {
  txs: Uint8Array[];
  env: T8nEnv;
  sent: { txs: Json; env: JsonObject };
}

/** A request's `alloc`, checked by the protocol: its entries loaded, and as the request gave it. */
export interface AllocInput {
  entries: DumpEntries;
  sent: JsonObject;
}

/**
 * What executes blocks: `S` is a backend's session state (a store, a post-state file's text). The
 * protocol has checked every document before a backend sees it, so a malformed request is the
 * same `invalid_request` whatever executes it.
 */
export interface T8nBackend<S> {
  /** The hello line's `implementation`. */
  readonly implementation: string;
  /**
   * The hello line's `session_state_root`: "chain" when a session's blocks continue one history
   * (its state_root is a chain's), "per_block" when each block's pre-state is committed as one
   * batch (a per-call t8n's state_root).
   */
  readonly sessionStateRoot: "chain" | "per_block";
  apply(alloc: AllocInput, block: BlockInput, wantPostState: boolean): Promise<{ result: unknown; post_state?: unknown }>;
  /** A session over `alloc`, the state after block `height`. */
  open(alloc: AllocInput, height: bigint): Promise<S>;
  /** The block on top of the session's state; on success the session holds its post-state, on failure it is unchanged. */
  applyBlock(session: S, block: BlockInput): Promise<unknown>;
  postState(session: S): Promise<unknown>;
  /** A stop signal came: end the request in progress now if it waits on something outside (it is answered, with an error). */
  stop?(signal: string): void;
}

/** A JsonError at a path under `$.<member>` of the request. */
function under<T>(member: string, work: () => T): T {
  try {
    return work();
  } catch (err) {
    if (err instanceof JsonError) throw new RequestError("invalid_request", `${err.path.replace(/^\$/, `$.${member}`)}: ${err.reason}`);
    throw err;
  }
}

/** The request line's members, checked; a problem is invalid_request naming the JSON path. */
function members(req: JsonObject, required: readonly string[], optional: readonly string[] = []): JsonObject {
  try {
    return object(req, "$", ["id", "method", ...required], optional);
  } catch (err) {
    if (err instanceof JsonError) throw new RequestError("invalid_request", err.message);
    throw err;
  }
}

function objectMember(req: JsonObject, name: string): JsonObject {
  const v = req[name];
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new RequestError("invalid_request", `$.${name}: expected a JSON object`);
  return v;
}

interface Session<S> {
  state: S;
  /** The height of the last block applied (or of the alloc); the next block must be above it. */
  height: bigint;
}

/** The methods, over one backend; sessions are named "s1", "s2", … in the order they open. */
export class T8nProtocol<S> {
  private readonly sessions = new Map<string, Session<S>>();
  private opened = 0;

  constructor(
    readonly backend: T8nBackend<S>,
    readonly maxLineBytes: number,
  ) {}

  hello(): JsonObject {
    return {
      protocol: T8N_SERVER_PROTOCOL,
      implementation: this.backend.implementation,
      max_line_bytes: this.maxLineBytes,
      max_sessions: MAX_SESSIONS,
      session_state_root: this.backend.sessionStateRoot,
    };
  }

  /** The answer line (without its newline) to one request line. */
  async answer(line: Uint8Array): Promise<string> {
    let id: Json = null;
    try {
      let req: Json;
      try {
        req = parseJson(line, { maxBytes: this.maxLineBytes });
      } catch (err) {
        if (err instanceof JsonError) throw new RequestError("parse_error", err.message);
        throw err;
      }
      if (typeof req !== "object" || req === null || Array.isArray(req)) throw new RequestError("invalid_request", "$: a request is a JSON object");
      id = requestId(req["id"]);
      if (typeof req["method"] !== "string") throw new RequestError("invalid_request", "$.method: expected a string");
      return JSON.stringify({ id, ...(await this.dispatch(req["method"], req)) });
    } catch (err) {
      const e =
        err instanceof RequestError
          ? err
          : err instanceof JsonError || err instanceof BlockInputError || err instanceof GenesisError || err instanceof StateStoreError
            ? new RequestError("invalid_request", err.message)
            : new RequestError("internal_error", err instanceof Error ? err.message : String(err));
      return JSON.stringify({ id, error: { code: e.code, message: e.message } });
    }
  }

  // Checks in this order (docs/reference/formats/t8n-server.md "Errors"): the line, `id`, `method`, the members,
  // the session, `alloc`, `env`, `txs`, then the session's height.
  private async dispatch(method: string, req: JsonObject): Promise<JsonObject> {
    switch (method) {
      case "apply": {
        const r = members(req, ["alloc", "txs", "env"], ["want_post_state"]);
        const want = r["want_post_state"] ?? false;
        if (typeof want !== "boolean") throw new RequestError("invalid_request", "$.want_post_state: expected true or false");
        const out = await this.backend.apply(allocOf(r), blockOf(r), want);
        return (want ? { result: out.result, post_state: out.post_state } : { result: out.result }) as JsonObject;
      }
      case "session.open": {
        const r = members(req, ["alloc"]);
        const sent = objectMember(r, "alloc");
        if (sent["height"] === undefined) throw new RequestError("invalid_request", "$.alloc.height: required for a session (the height of the block this state is after)");
        const alloc = allocOf(r);
        const height = BigInt(sent["height"] as string);
        if (this.sessions.size >= MAX_SESSIONS) throw new RequestError("too_many_sessions", `${MAX_SESSIONS} sessions are open; close one first`);
        const state = await this.backend.open(alloc, height);
        const name = `s${++this.opened}`;
        this.sessions.set(name, { state, height });
        return { session: name, height: height.toString() };
      }
      case "session.apply": {
        const r = members(req, ["session", "txs", "env"]);
        const s = this.session(r);
        const block = blockOf(r);
        if (block.env.height <= s.height) throw new RequestError("invalid_request", `$.env.height: block ${block.env.height} is not above the session's height ${s.height}`);
        const result = await this.backend.applyBlock(s.state, block);
        s.height = block.env.height;
        return { result: result as Json };
      }
      case "session.post_state": {
        const r = members(req, ["session"]);
        return { post_state: (await this.backend.postState(this.session(r).state)) as Json };
      }
      case "session.close": {
        const r = members(req, ["session"]);
        this.session(r);
        this.sessions.delete(r["session"] as string);
        return { closed: r["session"]! };
      }
      default:
        throw new RequestError("unknown_method", `unknown method ${JSON.stringify(method.slice(0, 80))} (expected one of: apply, session.open, session.apply, session.post_state, session.close)`);
    }
  }

  private session(r: JsonObject): Session<S> {
    const name = under("session", () => string(r["session"], "$"));
    const s = this.sessions.get(name);
    if (s === undefined) throw new RequestError("unknown_session", `no open session ${JSON.stringify(name.slice(0, 80))}`);
    return s;
  }
}

/** A request's `alloc`: a state dump whose entries load (every entry checked, as `cbqs t8n --input.alloc`). */
function allocOf(r: JsonObject): AllocInput {
  const sent = objectMember(r, "alloc");
  return { entries: loadDump(sent, "$.alloc"), sent };
}

/** A request's `env` and `txs`, checked as `cbqs t8n` checks its two files. */
function blockOf(r: JsonObject): BlockInput {
  const env = objectMember(r, "env");
  const parsed = under("env", () => parseEnv(env));
  return { env: parsed, txs: under("txs", () => parseTxs(r["txs"])), sent: { txs: r["txs"]!, env } };
}

/** `id`: a string of at most 200 characters (Unicode code points) or an unsigned integer, echoed as given. */
function requestId(v: Json | undefined): Json {
  if ((typeof v === "string" && v.length <= 400 && [...v].length <= 200) || typeof v === "number") return v;
  throw new RequestError("invalid_request", "$.id: expected a string (at most 200 characters) or an unsigned integer");
}

// ---- the in-process backend (`cbqs t8n --server`) ---------------------------------------------

/** Blocks executed here, as `cbqs t8n` executes them; a session keeps its store and its history. */
export class LocalBackend implements T8nBackend<MemoryStateStore> {
  readonly sessionStateRoot = "chain";
  constructor(readonly implementation: string) {}

  apply(alloc: AllocInput, block: BlockInput, wantPostState: boolean): Promise<{ result: unknown; post_state?: unknown }> {
    const run = transition(alloc.entries, block.txs, block.env);
    return Promise.resolve({ result: run.result, ...(wantPostState ? { post_state: postStateJson(run.store) } : {}) });
  }

  open(alloc: AllocInput, height: bigint): Promise<MemoryStateStore> {
    return Promise.resolve(MemoryStateStore.fromEntries(alloc.entries, height, createStateCommitment()));
  }

  applyBlock(store: MemoryStateStore, block: BlockInput): Promise<unknown> {
    return Promise.resolve(sessionBlock(store, block.txs, block.env).result);
  }

  postState(store: MemoryStateStore): Promise<unknown> {
    return Promise.resolve(postStateJson(store));
  }
}

/** The post-state exactly as `cbqs t8n --output.alloc` writes it (decoded views included). */
function postStateJson(store: MemoryStateStore): unknown {
  const height = store.height;
  return { ...dumpHeader({ ...(height === undefined ? {} : { height }), stateRoot: store.root() }), entries: [...dumpEntryViews(store.entries(), registryRecords)] };
}

// ---- framing: lines in, lines out ------------------------------------------------------------

/** The lines of `input`, split by src/lines.ts (a last line without LF counts). */
export async function* lines(input: AsyncIterable<Uint8Array>, max: number): AsyncGenerator<Line> {
  const splitter = new LineSplitter(max);
  for await (const chunk of input) yield* splitter.push(chunk);
  const last = splitter.end();
  if (last !== null) yield last;
}

/**
 * Serves `protocol` from `input` to `output` until EOF (every line answered, then it returns) or
 * a SIGINT/SIGTERM (the request in progress is answered, then Stopped is thrown: exit 130/143).
 */
export async function serve<S>(protocol: T8nProtocol<S>, input: Readable, output: Writable, signal: AbortSignal): Promise<void> {
  let answered = 0;
  const write = (text: string) =>
    new Promise<void>((resolve, reject) => {
      output.write(text + "\n", (err) => (err ? reject(err) : resolve()));
    });
  let stopping: Stopped | null = null;
  const kept = () => `${count(answered, "request")} answered, none left half-done`;
  const stopped = new Promise<never>((_, reject) => {
    const stop = () => {
      const received = stopRequested() ?? "SIGTERM";
      protocol.backend.stop?.(received);
      stopping = new Stopped(received);
      stopping.kept = kept();
      reject(stopping);
    };
    if (signal.aborted) stop();
    else signal.addEventListener("abort", stop, { once: true });
  });
  stopped.catch(() => undefined);
  await write(JSON.stringify(protocol.hello()));
  const it = lines(input as AsyncIterable<Uint8Array>, protocol.maxLineBytes)[Symbol.asyncIterator]();
  for (;;) {
    const next = await Promise.race([it.next(), stopped]);
    if (next.done === true) return;
    const line = next.value;
    if (line.kind === "too_long") {
      await write(JSON.stringify({ id: null, error: { code: "line_too_long", message: `the request line has ${line.bytes} bytes, above max_line_bytes ${protocol.maxLineBytes}; it was discarded` } }));
    } else if (line.bytes.some((b) => b !== 0x20 && b !== 0x09 && b !== 0x0d)) {
      await write(await protocol.answer(line.bytes));
    } else continue; // a blank line is no request
    answered++;
    // A signal that came during the request stops the server now, before the next line.
    if (stopping !== null) {
      (stopping as Stopped).kept = kept();
      throw stopping;
    }
  }
}


/** `cbqs t8n --server` / `cbqs t8n-adapter`: serves stdin → stdout; SIGINT/SIGTERM are handled by `serve`. */
export async function serveStdio<S>(backend: T8nBackend<S>, maxLineBytes: number): Promise<void> {
  const signal = watchSignals();
  await serve(new T8nProtocol(backend, maxLineBytes), process.stdin, process.stdout, signal);
}
