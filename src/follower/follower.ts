// `cbqs follow`: a verifying follower. It reads the node's genesis, pages the replication feed
// from its own last committed height, re-executes every block through the same replay as
// `cbqs replay` (src/harness/replay.ts) and commits it to its own ChainDb only once every root,
// receipt and the block hash match the node's. The first divergence stops it with replay's report.
// Every request goes through the client (src/client/): its pages are read strictly but not
// verified there, because re-execution checks more than the client can and reports it as replay does.
// Waiting for new blocks, it holds the node's GET /subscribe open when the node offers it and reads
// the feed when an event says the chain changed (src/follower/head-watch.ts), else it polls.
import { bytesEqual, toHex } from "../bytes.js";
import type { GenesisConfig } from "../engine/inputs.js";
import { closeSync, rmSync, writeSync } from "node:fs";
import { ClientError, ConnectionFailed, createClient, ProofInvalid, RateLimited, RequestAborted, RequestTimeout, type Block, type Client, type FeedPage, type Genesis } from "../client/index.js";
import { httpRequest } from "../client/http.js";
import type { FixtureBlock, Fixture } from "../harness/fixture.js";
import { genesisFromSource } from "../harness/genesis.js";
import { Replay, ReplayInputError, type Mismatch } from "../harness/replay.js";
import type { BlockRecord, ChainDb } from "../../state/chain-db/chain-db.js";
import { executedRecord, genesisRecord } from "../chain-node/chain-node.js";
import { FEED_MAX_LIMIT } from "../client/wire-bounds.js";
import { createExclusive } from "../output-file.js";
import { SNAPSHOT_MAGIC } from "../../state/lmdb/snapshot.js";
import { EventTooLarge, HeadWatch, subscribeUrl, type WaitOutcome } from "./head-watch.js";

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
  /** Before each wait for blocks the node does not have yet: the follower's and the node's heads, and how it waits. */
  onWait?: (head: bigint, nodeHeight: bigint, how: WaitHow) => void;
  /** A subscription to the node's GET /subscribe was established, or ended (the follower polls until it is back). */
  onSubscription?: (state: "up" | "down", url: string, reason: string) => void;
  /** With `watch`, an unreachable node (a restart) is waited for: told before each retry, with the wait. */
  onUnreachable?: (message: string, retryMs: number) => void;
}

/** Subscribed to the node's events (their URL), or polling every `pollMs`. */
export type WaitHow = { subscribed: string } | { pollMs: number };

export type FollowResult =
  | { status: "synced"; height: bigint; blocks: number; txs: number }
  /** height: the store's head; undefined when stopped before the store held the chain. */
  | { status: "stopped"; height: bigint | undefined; blocks: number; txs: number }
  | { status: "mismatch"; mismatch: Mismatch; source: string; blocks: number; txs: number }
  /** The node's chain no longer holds the follower's head block (a replaced or rolled-back node). */
  | { status: "diverged"; message: string; source: string; blocks: number; txs: number };

export const DEFAULT_TIMEOUT_MS = 30_000;
/**
 * Subscribed to the node's events, the follower still reads the feed at least this often (or every
 * --interval, if longer): a subscription that is open but silent — a proxy holding it to a node
 * that was replaced — never holds the follower back for longer.
 */
export const SUBSCRIBED_CHECK_MS = 30_000;
/** Under --watch, the wait between retries of an unreachable node doubles up to this (or the poll interval, if longer). */
export const MAX_BACKOFF_MS = 30_000;

/**
 * A client error as the follower reports it: a node that does not answer (or keeps refusing with
 * 429 past the client's bound) is NodeUnreachable, which --watch waits out; anything else the
 * node answered is unusable input (exit 2), the client's message naming the URL.
 */
function followError(err: unknown, timeoutMs: number): unknown {
  if (err instanceof RequestTimeout) return new NodeUnreachable(`${err.message} (--timeout ${timeoutMs / 1000})`);
  if (err instanceof ConnectionFailed || err instanceof RateLimited) return new NodeUnreachable(err.message);
  if (err instanceof ClientError && !(err instanceof RequestAborted)) return new FollowInputError(err.message);
  return err;
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

/** The message a follower gets when it would need blocks below the node's history (docs/guides/run-a-devnet.md "history_start"). */
const historyStartsAt = (where: string, height: bigint): string =>
  `${where}: the node's history starts at ${height}: start from its snapshot (cbqs follow --snapshot <file|url> --db <dir>)`;

type Declared = { where: string; mismatch: Mismatch } | { where: string; config: GenesisConfig; genesis: Genesis };

/**
 * The chain as the node declares it at GET /genesis, checked by the client (the chain instance is
 * the source's fingerprint, the block hash the genesis header's); a check that fails is the
 * follower's first divergence, reported as replay reports a genesis mismatch.
 */
async function nodeGenesis(client: Client): Promise<Declared> {
  const where = `${client.url}/genesis`;
  let g: Genesis;
  try {
    g = await client.genesis();
  } catch (err) {
    const field = err instanceof ProofInvalid ? GENESIS_CHECKS[err.check] : undefined;
    if (field === undefined) throw err;
    const e = err as ProofInvalid;
    // The node's value is the fixture's "expected" one, ours the "actual" (as replay reports).
    return { mismatch: { height: 0n, ...field, expected: e.actual!, actual: e.expected!, details: [] }, where };
  }
  let config: GenesisConfig;
  try {
    config = genesisFromSource(g.source);
  } catch (err) {
    throw new FollowInputError(`${where}: the node's genesis source is invalid: ${(err as Error).message}`);
  }
  return { where, config, genesis: g };
}

const GENESIS_CHECKS: Record<string, { path: string; field: string }> = {
  chain_instance_id: { path: "$.genesis.chain_instance_id", field: "chain_instance_id" },
  block_hash: { path: "$.block_hash", field: "genesis block_hash" },
};

export async function follow(options: FollowOptions): Promise<FollowResult> {
  const { db, signal } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let client: Client;
  try {
    client = createClient(options.url, { timeoutMs, ...(signal === undefined ? {} : { signal }) });
  } catch (err) {
    throw followError(err, timeoutMs);
  }
  const base = client.url;
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
      throw followError(err, timeoutMs);
    }
  };

  const declared = await get(() => nodeGenesis(client));
  if (declared === null) return stopped();
  if ("mismatch" in declared) return { status: "mismatch", mismatch: declared.mismatch, source: declared.where, blocks, txs };
  const { genesis, where } = declared;
  const fixture: Fixture = {
    name: base,
    description: "",
    genesis: { source: genesis.source, config: declared.config, chain_instance_id: genesis.chainInstanceId, state_root: genesis.stateRoot },
    blocks: [],
  };
  let replay: Replay;
  const stored = db.genesis();
  if (stored === undefined) {
    // A node started from a snapshot lacks the blocks below it: a fresh follower could not verify them.
    if (genesis.historyStart.height > 0n) throw new FollowInputError(historyStartsAt(where, genesis.historyStart.height));
    const started = Replay.start(fixture, db.state);
    if (started.mismatch !== null) return { status: "mismatch", mismatch: started.mismatch, source: where, blocks, txs };
    const record = genesisRecord(genesis.source, started.replay.chain.chainInstanceId, declared.config.timestamp, started.replay.chain.genesisStateRoot);
    // The client checked the declared block hash against the declared timestamp; the header we
    // build takes the timestamp from the source itself, so a node declaring another one differs here.
    if (!bytesEqual(record.block.block_hash, genesis.blockHash)) {
      const mismatch: Mismatch = { height: 0n, path: "$.block_hash", field: "genesis block_hash", expected: toHex(genesis.blockHash), actual: toHex(record.block.block_hash), details: [] };
      return { status: "mismatch", mismatch, source: where, blocks, txs };
    }
    db.commitGenesis(record);
    replay = started.replay;
  } else {
    if (!bytesEqual(stored.source, genesis.source)) {
      throw new FollowInputError(`the store follows another chain (chain_instance_id ${toHex(stored.chain_instance_id)}), not ${base}'s`);
    }
    if (db.head()!.height < genesis.historyStart.height) throw new FollowInputError(historyStartsAt(where, genesis.historyStart.height));
    replay = Replay.resume(fixture, db.state, db.head()!.block_hash);
  }

  let failures = 0;
  // Whether a page of this run has shown that the node still holds our head block: "synced" is
  // never said before that, not even when the store is already at --until.
  let checked = false;
  // The node's events, looked for at the first wait (undefined after that: the node has none).
  let watch: HeadWatch | undefined;
  let discovered = false;
  try {
    for (;;) {
      if (signal?.aborted) return stopped();
      const head = db.head()!;
      if (checked && options.until !== undefined && head.height >= options.until) return { status: "synced", height: head.height, blocks, txs };
      // Every page starts at our own head block (genesis is GET /genesis): the node must still hold it.
      const since = head.height > 0n ? head.height : 1n;
      // A store already above --until asks for its head block alone (the range ends there).
      const upTo = options.until === undefined ? undefined : options.until < since ? since : options.until;
      // An event arriving from here on wakes the wait after this page at once.
      const seen = watch?.seen ?? 0;
      let page: FeedPage | null;
      try {
        page = await get(() => client.feedPage({ since, limit: FEED_MAX_LIMIT, ...(upTo === undefined ? {} : { until: upTo }) }));
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
      const source = page.url;
      const nodeHeight = page.height;
      let offset = 0;
      if (head.height > 0n) {
        const problem = await ourBlockProblem(head, nodeHeight, page.items[0]);
        if (problem === null) return stopped();
        if (problem !== undefined) return diverged(source, problem);
        offset = 1;
      }
      checked = true;
      const items = page.items.slice(offset);
      fixture.blocks = items.map(fixtureBlock);
      for (let j = 0; j < items.length; j++) {
        if (signal?.aborted) return stopped();
        const b = fixture.blocks[j]!;
        const path = `$.items[${j + offset}]`;
        const parent = db.head()!;
        if (b.height <= parent.height) throw new FollowInputError(`${source}: block ${b.height}: ${path}.height: not above the verified ${parent.height}`);
        if (!bytesEqual(items[j]!.parentHash, parent.block_hash)) {
          const mismatch: Mismatch = { height: b.height, path: `${path}.parent_hash`, field: "parent_hash", expected: toHex(items[j]!.parentHash), actual: toHex(parent.block_hash), details: [] };
          return { status: "mismatch", mismatch, source, blocks, txs };
        }
        let result: ReturnType<Replay["block"]>;
        try {
          result = replay.block(j);
        } catch (err) {
          // Its path and reason only: its message names the block again.
          if (err instanceof ReplayInputError) throw new FollowInputError(`${source}: block ${b.height}: ${itemPaths(err.path, offset)}: ${err.reason}`);
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
      if (page.next !== null && items.length > 0) continue;
      // This page ended the range asked for (up to --until, or the node's head).
      if (options.until !== undefined) {
        // Blocks are only ever added above the node's head: once it has passed --until, the range
        // just read was complete, even when --until itself is a height without a block.
        if (nodeHeight >= options.until) return { status: "synced", height: db.head()!.height, blocks, txs };
      } else if (!options.watch && db.head()!.height >= nodeHeight) return { status: "synced", height: db.head()!.height, blocks, txs };
      if (!discovered) {
        discovered = true;
        const url = await subscribeUrl(base, timeoutMs, signal);
        if (url !== undefined) watch = new HeadWatch(url, timeoutMs, signal, (state, reason) => options.onSubscription?.(state, url, reason));
      }
      options.onWait?.(db.head()!.height, nodeHeight, watch === undefined ? { pollMs: options.pollMs } : { subscribed: watch.url });
      // The events only say when to look: the next page is read and verified as ever. Until the
      // node has accepted the subscription, the wait is a poll's.
      let outcome: WaitOutcome;
      try {
        outcome = watch === undefined ? "down" : await watch.wait(seen, watch.up ? Math.max(options.pollMs, SUBSCRIBED_CHECK_MS) : options.pollMs);
      } catch (err) {
        // The node sent what no node sends: it is not followed further (exit 2, naming it).
        if (err instanceof EventTooLarge) throw new FollowInputError(err.message);
        throw err;
      }
      if (outcome === "down") await sleep(options.pollMs, signal);
    }
  } finally {
    watch?.close();
  }

  /**
   * Whether the page (asked from our head's height) still starts with our head block: undefined
   * when it does, else why not (the node's chain has diverged), null when stopped meanwhile. A node
   * without a block at our height whose history now starts above us is not a divergence but a node
   * restarted from a snapshot: exit 2 as at the start.
   */
  async function ourBlockProblem(head: BlockRecord, nodeHeight: bigint, first: Block | undefined): Promise<string | undefined | null> {
    const ours = `our block ${head.height} (ours ${toHex(head.block_hash)}`;
    if (nodeHeight < head.height) return `the node's chain no longer contains ${ours}, node's head is ${nodeHeight})`;
    if (first?.height !== head.height) {
      const now = await get(() => nodeGenesis(client));
      if (now === null) return null;
      if ("mismatch" in now) throw new FollowInputError(`${now.where}: the node's genesis no longer verifies (${now.mismatch.field})`);
      if (now.genesis.historyStart.height > head.height) throw new FollowInputError(historyStartsAt(now.where, now.genesis.historyStart.height));
      return `the node's chain no longer contains ${ours}, the node has no block ${head.height})`;
    }
    if (!bytesEqual(first.blockHash, head.block_hash)) return `the node's chain no longer contains ${ours}, node's ${toHex(first.blockHash)})`;
    return undefined;
  }
}

/** Replay and the fixture loader name paths in the loaded blocks (`$.blocks[j]`): in the page they are `$.items[j + offset]`. */
function itemPaths(text: string, offset: number): string {
  return text.replace(/\$\.blocks\[(\d+)\]/g, (_, j: string) => `$.items[${Number(j) + offset}]`);
}

/** A feed item as the fixture block replay executes (the client read it with the fixture loader). */
function fixtureBlock(b: Block): FixtureBlock {
  return {
    height: b.height,
    timestamp: b.timestamp,
    transactions: b.transactions,
    effective_rent_height: b.effectiveRentHeight,
    state_root: b.stateRoot,
    tx_root: b.txRoot,
    receipt_root: b.receiptRoot,
    logs_root: b.logsRoot,
    block_hash: b.blockHash,
    gas_vectors_sha256: b.gasVectorsSha256,
    receipts: b.receipts.map((r) => ({ tx_hash: r.txHash, status: r.status, error: r.error, events: r.events, cycles: r.cycles, cells: r.cells })),
  };
}

/** What a snapshot download may take: bytes, and seconds in all (each read also has the client's timeout). */
export interface DownloadLimits {
  /** Per read: a server that sends nothing for this long has failed. */
  timeoutMs: number;
  maxBytes: number;
  deadlineMs: number;
}

/** `follow --snapshot-max-bytes`: far above any devnet's snapshot, far below a laptop's free disk. */
export const DEFAULT_SNAPSHOT_MAX_BYTES = 16 * 1024 ** 3;
/** `follow --snapshot-timeout`, seconds for the whole download. */
export const DEFAULT_SNAPSHOT_TIMEOUT_S = 3600;

/**
 * `follow --snapshot <url>`: downloads a snapshot file to a new file `<stem>.cbqs` (created
 * exclusively: a file or symlink already at that name is never written through; another name is
 * taken) and returns its path (a node serves no snapshot itself; any HTTP(S) server will do, the
 * import checks it). Nothing is written unless the answer is a 200 whose body starts with the
 * snapshot magic; the body is bounded in bytes (`--snapshot-max-bytes`, also by its
 * Content-Length) and the download in time (`--snapshot-timeout`). Removed again on any failure.
 */
export async function downloadSnapshot(url: string, stem: string, limits: DownloadLimits, signal?: AbortSignal): Promise<string> {
  const { fd, path: file } = createExclusive(stem, ".cbqs");
  const deadline = AbortSignal.timeout(limits.deadlineMs);
  let open = true;
  /** The body's first bytes, until there are enough to compare with the magic; then null. */
  let head: Buffer | null = Buffer.alloc(0);
  let size = 0;
  const tooLarge = (bytes: string) => new FollowInputError(`${url}: the snapshot has ${bytes} bytes, above --snapshot-max-bytes ${limits.maxBytes}`);
  try {
    try {
      await httpRequest(url, {
        timeoutMs: limits.timeoutMs,
        signal: signal === undefined ? deadline : AbortSignal.any([signal, deadline]),
        accept: "application/octet-stream",
        onResponse: (status, headers) => {
          if (status !== 200) throw new FollowInputError(`${url}: HTTP ${status}, not a snapshot file`);
          const length = headers["content-length"];
          if (length !== undefined && Number(length) > limits.maxBytes) throw tooLarge(length);
        },
        onChunk: (chunk) => {
          size += chunk.length;
          if (size > limits.maxBytes) throw tooLarge(`more than ${limits.maxBytes}`);
          if (head === null) {
            writeSync(fd, chunk);
            return;
          }
          head = Buffer.concat([head, chunk]);
          if (head.length < SNAPSHOT_MAGIC.length) return;
          if (!bytesEqual(head.subarray(0, SNAPSHOT_MAGIC.length), SNAPSHOT_MAGIC)) throw new FollowInputError(`${url}: not a cbqs snapshot (bad magic)`);
          writeSync(fd, head);
          head = null;
        },
      });
    } catch (err) {
      if (deadline.aborted && signal?.aborted !== true) throw new FollowInputError(`${url}: the download did not finish within --snapshot-timeout ${limits.deadlineMs / 1000} s`);
      throw followError(err, limits.timeoutMs);
    }
    if (head !== null) throw new FollowInputError(`${url}: not a cbqs snapshot (${size} bytes, shorter than its magic)`);
    open = false;
    closeSync(fd);
    return file;
  } catch (err) {
    if (open) closeSync(fd);
    rmSync(file, { force: true });
    throw err;
  }
}
