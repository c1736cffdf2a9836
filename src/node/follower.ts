// `cbqs follow`: a verifying follower. It reads the node's genesis, pages the replication feed
// from its own last committed height, re-executes every block through the same replay as
// `cbqs replay` (src/harness/replay.ts) and commits it to its own ChainDb only once every root,
// receipt and the block hash match the node's. The first divergence stops it with replay's report.
import { bytesEqual, fromHex, toHex } from "../bytes.js";
import type { GenesisConfig } from "../engine/inputs.js";
import { closeSync, rmSync, writeSync } from "node:fs";
import type { IncomingHttpHeaders } from "node:http";
import { echo, MAX_BUFFERED_DOCUMENT_BYTES } from "../bounds.js";
import { FIXTURE_FORMAT, loadFixture, type Fixture } from "../harness/fixture.js";
import { JsonError, parseJson } from "../json/parse.js";
import { genesisFromSource } from "../harness/genesis.js";
import { Replay, ReplayInputError, type Mismatch } from "../harness/replay.js";
import type { BlockRecord, ChainDb } from "../../state/chain-db/chain-db.js";
import { executedRecord, genesisRecord } from "./chain-node.js";
import { ConnectionFailed, httpGet, RequestTimeout } from "./http-get.js";
import { MAX_LIMIT } from "./replication.js";
import { createExclusive } from "../output-file.js";

/** The node cannot be followed (unreachable, answers that are not the feed, another chain in the store): exit 2. */
export class FollowInputError extends Error {
  override name = "FollowInputError";
}

/** The node did not answer at all (connection refused, reset, timed out) after the retries. */
export class NodeUnreachable extends FollowInputError {
  override name = "NodeUnreachable";
}

export interface FollowOptions {
  /** The node's base URL, e.g. http://127.0.0.1:8545 */
  url: string;
  db: ChainDb;
  /** Stop (synced) once every block up to this height is verified and the node has passed it. */
  until?: bigint;
  /** Keep polling for new blocks after catching up. */
  watch: boolean;
  /** Milliseconds between polls when there is nothing new. */
  pollMs: number;
  /** Per request: a node that sends nothing for this long is unreachable (default DEFAULT_TIMEOUT_MS). */
  timeoutMs?: number;
  /** Checked between blocks: the block in progress is finished and committed first. */
  signal?: AbortSignal;
  /** After every verified block, with the node's head height as the last page named it. */
  onBlock?: (block: BlockRecord, nodeHeight: bigint) => void;
  /** Before each wait for blocks the node does not have yet: the follower's and the node's heads. */
  onWait?: (head: bigint, nodeHeight: bigint) => void;
  /** With `watch`, an unreachable node (a restart) is waited for: told before each retry, with the wait. */
  onUnreachable?: (message: string, retryMs: number) => void;
}

export type FollowResult =
  | { status: "synced"; height: bigint; blocks: number; txs: number }
  /** height: the store's head; undefined when stopped before the store held the chain. */
  | { status: "stopped"; height: bigint | undefined; blocks: number; txs: number }
  | { status: "mismatch"; mismatch: Mismatch; source: string; blocks: number; txs: number }
  /** The node's chain no longer holds the follower's head block (a replaced or rolled-back node). */
  | { status: "diverged"; message: string; source: string; blocks: number; txs: number };

export const DEFAULT_TIMEOUT_MS = 30_000;
const FETCH_ATTEMPTS = 3;
/** Under --watch, the wait between retries of an unreachable node doubles up to this (or the poll interval, if longer). */
export const MAX_BACKOFF_MS = 30_000;

/**
 * GET `url` as JSON, reading at most MAX_BUFFERED_DOCUMENT_BYTES; waits out a 429 as told by
 * Retry-After and retries a failed connection twice. A timeout is not retried here (the caller's
 * --watch loop retries it with backoff). Throws RequestAborted when `signal` ends it.
 */
async function getJson(url: string, timeoutMs: number, signal?: AbortSignal): Promise<Record<string, unknown>> {
  for (let attempt = 1; ; attempt++) {
    const chunks: Buffer[] = [];
    let size = 0;
    let status: number;
    let headers: IncomingHttpHeaders;
    try {
      ({ status, headers } = await httpGet(url, {
        timeoutMs,
        signal,
        onChunk: (chunk) => {
          size += chunk.length;
          if (size > MAX_BUFFERED_DOCUMENT_BYTES) throw new FollowInputError(`${url}: the answer exceeds ${MAX_BUFFERED_DOCUMENT_BYTES} bytes`);
          chunks.push(chunk);
        },
      }));
    } catch (err) {
      if (err instanceof RequestTimeout) throw new NodeUnreachable(`${url}: ${err.message} (--timeout ${timeoutMs / 1000})`);
      if (!(err instanceof ConnectionFailed)) throw err;
      // A kept-alive connection the node closed while we were verifying is not an outage: retry.
      if (attempt < FETCH_ATTEMPTS) {
        await sleep(250 * attempt, signal);
        continue;
      }
      throw new NodeUnreachable(`cannot reach ${url}: ${err.message}`);
    }
    const text = Buffer.concat(chunks).toString("utf8");
    if (status === 429) {
      await sleep(1000 * Math.min(60, Math.max(1, Number(headers["retry-after"]) || 1)), signal);
      continue;
    }
    let body: unknown;
    try {
      // The one strict reader (docs/fixtures.md §0): a repeated key in a node's answer is refused too.
      body = parseJson(text);
    } catch (err) {
      if (!(err instanceof JsonError)) throw err;
      throw new FollowInputError(`${url}: HTTP ${status}, not a usable JSON answer (${err.message})`);
    }
    if (status !== 200) {
      const e = (body as { error?: { code?: unknown; message?: unknown } }).error;
      throw new FollowInputError(`${url}: HTTP ${status} ${echo(String(e?.code ?? ""), 60)}: ${echo(String(e?.message ?? ""))}`);
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw new FollowInputError(`${url}: the answer is not a JSON object`);
    return body as Record<string, unknown>;
  }
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done);
  });
}

function field(obj: Record<string, unknown>, name: string, where: string): string {
  const v = obj[name];
  if (typeof v !== "string") throw new FollowInputError(`${where}: "${name}" is missing or not a string`);
  return v;
}

function hexField(obj: Record<string, unknown>, name: string, where: string, length?: number): Uint8Array {
  try {
    return fromHex(field(obj, name, where), length, name);
  } catch (err) {
    if (err instanceof FollowInputError) throw err;
    throw new FollowInputError(`${where}: ${(err as Error).message}`);
  }
}

const DECIMAL = /^[0-9]{1,20}$/;

function heightField(obj: Record<string, unknown>, name: string, where: string): bigint {
  const v = field(obj, name, where);
  if (!DECIMAL.test(v)) throw new FollowInputError(`${where}: "${name}" is not a block height`);
  return BigInt(v);
}

/** The message a follower gets when it would need blocks below the node's history (docs/node.md "history_start"). */
const historyStartsAt = (where: string, height: bigint): string =>
  `${where}: the node's history starts at ${height}: start from its snapshot (cbqs follow --snapshot <file|url> --db <dir>)`;

/** The chain as the node declares it at GET /genesis. */
async function nodeGenesis(base: string, timeoutMs: number, signal?: AbortSignal) {
  const where = `${base}/genesis`;
  const g = await getJson(where, timeoutMs, signal);
  const source = hexField(g, "source", where);
  let config: GenesisConfig;
  try {
    config = genesisFromSource(source);
  } catch (err) {
    throw new FollowInputError(`${where}: the node's genesis source is invalid: ${(err as Error).message}`);
  }
  const start = g["history_start"];
  if (typeof start !== "object" || start === null || Array.isArray(start)) throw new FollowInputError(`${where}: "history_start" is missing or not an object`);
  return {
    where,
    source,
    config,
    chain_instance_id: hexField(g, "chain_instance_id", where, 32),
    state_root: hexField(g, "state_root", where, 32),
    block_hash: hexField(g, "block_hash", where, 32),
    historyStart: heightField(start as Record<string, unknown>, "height", `${where}: $.history_start`),
  };
}

export async function follow(options: FollowOptions): Promise<FollowResult> {
  const base = options.url.replace(/\/+$/, "");
  const { db, signal } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let blocks = 0;
  let txs = 0;
  const stopped = (): FollowResult => ({ status: "stopped", height: db.head()?.height, blocks, txs });
  const diverged = (source: string, message: string): FollowResult => ({ status: "diverged", message, source, blocks, txs });
  // A signal while a request is in flight ends the request: that is a stop, not an error.
  const get = async <T>(request: () => Promise<T>): Promise<T | null> => {
    try {
      return await request();
    } catch (err) {
      if (signal?.aborted) return null;
      throw err;
    }
  };

  const genesis = await get(() => nodeGenesis(base, timeoutMs, signal));
  if (genesis === null) return stopped();
  const fixture: Fixture = {
    name: base,
    description: "",
    genesis: { source: genesis.source, config: genesis.config, chain_instance_id: genesis.chain_instance_id, state_root: genesis.state_root },
    blocks: [],
  };
  let replay: Replay;
  const stored = db.genesis();
  if (stored === undefined) {
    // A node started from a snapshot lacks the blocks below it: a fresh follower could not verify them.
    if (genesis.historyStart > 0n) throw new FollowInputError(historyStartsAt(genesis.where, genesis.historyStart));
    const started = Replay.start(fixture, db.state);
    if (started.mismatch !== null) return { status: "mismatch", mismatch: started.mismatch, source: genesis.where, blocks, txs };
    const record = genesisRecord(genesis.source, started.replay.chain.chainInstanceId, genesis.config.timestamp, started.replay.chain.genesisStateRoot);
    if (!bytesEqual(record.block.block_hash, genesis.block_hash)) {
      const mismatch: Mismatch = { height: 0n, path: "$.block_hash", field: "genesis block_hash", expected: toHex(genesis.block_hash), actual: toHex(record.block.block_hash), details: [] };
      return { status: "mismatch", mismatch, source: genesis.where, blocks, txs };
    }
    db.commitGenesis(record);
    replay = started.replay;
  } else {
    if (!bytesEqual(stored.source, genesis.source)) {
      throw new FollowInputError(`the store follows another chain (chain_instance_id ${toHex(stored.chain_instance_id)}), not ${base}'s`);
    }
    if (db.head()!.height < genesis.historyStart) throw new FollowInputError(historyStartsAt(genesis.where, genesis.historyStart));
    replay = Replay.resume(fixture, db.state, db.head()!.block_hash);
  }

  let failures = 0;
  // Whether a page of this run has shown that the node still holds our head block: "synced" is
  // never said before that, not even when the store is already at --until.
  let checked = false;
  for (;;) {
    if (signal?.aborted) return stopped();
    const head = db.head()!;
    if (checked && options.until !== undefined && head.height >= options.until) return { status: "synced", height: head.height, blocks, txs };
    // Every page starts at our own head block (genesis is GET /genesis): the node must still hold it.
    const since = head.height > 0n ? head.height : 1n;
    // A store already above --until asks for its head block alone (the range ends there).
    const upTo = options.until === undefined ? undefined : options.until < since ? since : options.until;
    const query = `since=${since}&limit=${MAX_LIMIT}${upTo === undefined ? "" : `&until=${upTo}`}`;
    const source = `${base}/replication?${query}`;
    let page: Record<string, unknown> | null;
    try {
      page = await get(() => getJson(source, timeoutMs, signal));
    } catch (err) {
      if (!(options.watch && err instanceof NodeUnreachable)) throw err;
      // A restart, or a node too busy to answer in time: wait longer after each failure.
      failures++;
      const retryMs = Math.min(Math.max(options.pollMs, MAX_BACKOFF_MS), options.pollMs * 2 ** Math.min(failures - 1, 20));
      options.onUnreachable?.(err.message, retryMs);
      await sleep(retryMs, signal);
      continue;
    }
    if (page === null) return stopped();
    failures = 0;
    const items = page["items"];
    if (!Array.isArray(items) || items.length > MAX_LIMIT) throw new FollowInputError(`${source}: "items" is not an array of at most ${MAX_LIMIT} blocks`);
    const nodeHeight = heightField(page, "height", source);
    let offset = 0;
    if (head.height > 0n) {
      const problem = await ourBlockProblem(head, nodeHeight, items[0], source);
      if (problem === null) return stopped();
      if (problem !== undefined) return diverged(source, problem);
      offset = 1;
    }
    checked = true;
    const loaded = loadItems(fixture, items.slice(offset), offset, source);
    fixture.blocks = loaded.blocks;
    for (let j = 0; j < loaded.blocks.length; j++) {
      if (signal?.aborted) return stopped();
      const b = loaded.blocks[j]!;
      const path = `$.items[${j + offset}]`;
      const parent = db.head()!;
      if (b.height <= parent.height) throw new FollowInputError(`${source}: block ${b.height}: ${path}.height: not above the verified ${parent.height}`);
      if (!bytesEqual(loaded.parents[j]!, parent.block_hash)) {
        const mismatch: Mismatch = { height: b.height, path: `${path}.parent_hash`, field: "parent_hash", expected: toHex(loaded.parents[j]!), actual: toHex(parent.block_hash), details: [] };
        return { status: "mismatch", mismatch, source, blocks, txs };
      }
      let result: ReturnType<Replay["block"]>;
      try {
        result = replay.block(j);
      } catch (err) {
        if (err instanceof ReplayInputError) throw new FollowInputError(`${source}: block ${b.height}: ${itemPaths(err.message, offset)}`);
        throw err;
      }
      if (result.mismatch !== null) {
        const m = result.mismatch;
        return { status: "mismatch", mismatch: { ...m, path: itemPaths(m.path, offset) }, source, blocks, txs };
      }
      const record = executedRecord(b.height, b.timestamp, parent.block_hash, b.transactions, result.executed);
      db.commitBlock(record);
      blocks++;
      txs += b.transactions.length;
      options.onBlock?.(record, nodeHeight);
    }
    if (page["next"] !== null && loaded.blocks.length > 0) continue;
    // This page ended the range asked for (up to --until, or the node's head).
    if (options.until !== undefined) {
      // Blocks are only ever added above the node's head: once it has passed --until, the range
      // just read was complete, even when --until itself is a height without a block.
      if (nodeHeight >= options.until) return { status: "synced", height: db.head()!.height, blocks, txs };
    } else if (!options.watch && db.head()!.height >= nodeHeight) return { status: "synced", height: db.head()!.height, blocks, txs };
    options.onWait?.(db.head()!.height, nodeHeight);
    await sleep(options.pollMs, signal);
  }

  /**
   * Whether the page (asked from our head's height) still starts with our head block: undefined
   * when it does, else why not (the node's chain has diverged), null when stopped meanwhile. A node
   * without a block at our height whose history now starts above us is not a divergence but a node
   * restarted from a snapshot: exit 2 as at the start.
   */
  async function ourBlockProblem(head: BlockRecord, nodeHeight: bigint, first: unknown, source: string): Promise<string | undefined | null> {
    const ours = `our block ${head.height} (ours ${toHex(head.block_hash)}`;
    if (nodeHeight < head.height) return `the node's chain no longer contains ${ours}, node's head is ${nodeHeight})`;
    const item = typeof first === "object" && first !== null && !Array.isArray(first) ? (first as Record<string, unknown>) : undefined;
    if (item === undefined && first !== undefined) throw new FollowInputError(`${source}: $.items[0] is not an object`);
    const height = item === undefined ? undefined : heightField(item, "height", `${source}: $.items[0]`);
    if (height !== head.height) {
      const now = await get(() => nodeGenesis(base, timeoutMs, signal));
      if (now === null) return null;
      if (now.historyStart > head.height) throw new FollowInputError(historyStartsAt(now.where, now.historyStart));
      return `the node's chain no longer contains ${ours}, the node has no block ${head.height})`;
    }
    const hash = hexField(item!, "block_hash", `${source}: $.items[0]`, 32);
    if (!bytesEqual(hash, head.block_hash)) return `the node's chain no longer contains ${ours}, node's ${toHex(hash)})`;
    return undefined;
  }
}

/** Replay and the fixture loader name paths in the loaded blocks (`$.blocks[j]`): in the page they are `$.items[j + offset]`. */
function itemPaths(text: string, offset: number): string {
  return text.replace(/\$\.blocks\[(\d+)\]/g, (_, j: string) => `$.items[${Number(j) + offset}]`);
}

/** Feed items are fixture blocks plus parent_hash: the fixture loader checks them strictly. */
function loadItems(fixture: Fixture, items: unknown[], offset: number, source: string): { blocks: Fixture["blocks"]; parents: Uint8Array[] } {
  const parents: Uint8Array[] = [];
  // The height each item claims, for an error's "block N" (the loader has not checked it yet).
  const claimed = (j: number): string => {
    const h = (items[j] as { height?: unknown } | undefined)?.height;
    return typeof h === "string" && DECIMAL.test(h) ? `block ${h}` : `the block after ${j === 0 ? "our head" : claimed(j - 1)}`;
  };
  const rest = items.map((item, j) => {
    if (typeof item !== "object" || item === null || Array.isArray(item)) throw new FollowInputError(`${source}: ${claimed(j)}: $.items[${j + offset}]: not an object`);
    const { parent_hash, ...block } = item as Record<string, unknown>;
    parents.push(hexField({ parent_hash }, "parent_hash", `${source}: ${claimed(j)}: $.items[${j + offset}]`, 32));
    return block;
  });
  try {
    const doc = {
      format: FIXTURE_FORMAT,
      name: fixture.name,
      description: "",
      genesis: { source: toHex(fixture.genesis.source), chain_instance_id: toHex(fixture.genesis.chain_instance_id), state_root: toHex(fixture.genesis.state_root) },
      blocks: rest,
    };
    return { blocks: loadFixture(doc).blocks, parents };
  } catch (err) {
    // The loader's JsonError names the path in the document it was given (`$.blocks[j]…`).
    if (err instanceof JsonError) {
      const j = /^\$\.blocks\[(\d+)\]/.exec(err.path)?.[1];
      throw new FollowInputError(`${source}: ${j === undefined ? "" : `${claimed(Number(j))}: `}${itemPaths(err.message, offset)}`);
    }
    throw err;
  }
}

/**
 * `follow --snapshot <url>`: downloads a snapshot file to a new file `<stem>.cbqs` (created
 * exclusively: a file or symlink already at that name is never written through; another name is
 * taken) and returns its path (a node serves no snapshot itself; any HTTP(S) server will do, the
 * import checks it). Removed again on any failure.
 */
export async function downloadSnapshot(url: string, stem: string, timeoutMs: number, signal?: AbortSignal): Promise<string> {
  const { fd, path: file } = createExclusive(stem, ".cbqs");
  let open = true;
  try {
    let status: number;
    try {
      ({ status } = await httpGet(url, { timeoutMs, signal, onChunk: (chunk) => writeSync(fd, chunk) }));
    } catch (err) {
      if (err instanceof RequestTimeout) throw new NodeUnreachable(`${url}: ${err.message} (--timeout ${timeoutMs / 1000})`);
      if (err instanceof ConnectionFailed) throw new NodeUnreachable(`cannot reach ${url}: ${err.message}`);
      throw err;
    }
    if (status !== 200) throw new FollowInputError(`${url}: HTTP ${status}, not a snapshot file`);
    open = false;
    closeSync(fd);
    return file;
  } catch (err) {
    if (open) closeSync(fd);
    rmSync(file, { force: true });
    throw err;
  }
}
