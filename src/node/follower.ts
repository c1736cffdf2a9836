// `cbqs follow`: a verifying follower. It reads the node's genesis, pages the replication feed
// from its own last committed height, re-executes every block through the same replay as
// `cbqs replay` (src/harness/replay.ts) and commits it to its own ChainDb only once every root,
// receipt and the block hash match the node's. The first divergence stops it with replay's report.
import { bytesEqual, fromHex, toHex } from "../bytes.js";
import type { GenesisConfig } from "../chain/types.js";
import { echo, MAX_BUFFERED_DOCUMENT_BYTES } from "../bounds.js";
import { FIXTURE_FORMAT, FixtureError, loadFixture, type Fixture } from "../harness/fixture.js";
import { JsonError, parseJson } from "../json/parse.js";
import { genesisFromSource } from "../harness/genesis.js";
import { Replay, ReplayInputError, type Mismatch } from "../harness/replay.js";
import type { BlockRecord, ChainDb } from "../../state/chain-db.js";
import { executedRecord, genesisRecord } from "./chain-node.js";
import { MAX_LIMIT } from "./replication.js";

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
  /** Checked between blocks: the block in progress is finished and committed first. */
  signal?: AbortSignal;
  /** After every verified block, with the node's head height as the last page named it. */
  onBlock?: (block: BlockRecord, nodeHeight: bigint) => void;
  /** Before each wait for blocks the node does not have yet: the follower's and the node's heads. */
  onWait?: (head: bigint, nodeHeight: bigint) => void;
  /** With `watch`, an unreachable node (a restart) is waited for: told before each retry. */
  onUnreachable?: (message: string) => void;
}

export type FollowResult =
  | { status: "synced" | "stopped"; height: bigint; blocks: number; txs: number }
  | { status: "mismatch"; mismatch: Mismatch; source: string; blocks: number; txs: number };

const REQUEST_TIMEOUT_MS = 60_000;
const FETCH_ATTEMPTS = 3;

/**
 * GET `url` as JSON, reading at most MAX_FIXTURE_BYTES; waits out a 429 as told by Retry-After and
 * retries a failed connection twice.
 */
async function getJson(url: string, signal?: AbortSignal): Promise<Record<string, unknown>> {
  for (let attempt = 1; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(url, { signal: signal === undefined ? AbortSignal.timeout(REQUEST_TIMEOUT_MS) : AbortSignal.any([signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]) });
    } catch (err) {
      if (signal?.aborted) throw err;
      // A kept-alive connection the node closed while we were verifying is not an outage: retry.
      if (attempt < FETCH_ATTEMPTS) {
        await sleep(250 * attempt, signal);
        continue;
      }
      const cause = (err as { cause?: { code?: string; message?: string } }).cause;
      throw new NodeUnreachable(`cannot reach ${url}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
    }
    const text = await boundedText(res, url);
    if (res.status === 429) {
      await sleep(1000 * Math.min(60, Math.max(1, Number(res.headers.get("retry-after")) || 1)), signal);
      continue;
    }
    let body: unknown;
    try {
      // The one strict reader (docs/fixtures.md §0): a repeated key in a node's answer is refused too.
      body = parseJson(text);
    } catch (err) {
      if (!(err instanceof JsonError)) throw err;
      throw new FollowInputError(`${url}: HTTP ${res.status}, not a usable JSON answer (${err.message})`);
    }
    if (res.status !== 200) {
      const e = (body as { error?: { code?: unknown; message?: unknown } }).error;
      throw new FollowInputError(`${url}: HTTP ${res.status} ${echo(String(e?.code ?? ""), 60)}: ${echo(String(e?.message ?? ""))}`);
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) throw new FollowInputError(`${url}: the answer is not a JSON object`);
    return body as Record<string, unknown>;
  }
}

async function boundedText(res: Response, url: string): Promise<string> {
  const reader = res.body?.getReader();
  if (reader === undefined) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > MAX_BUFFERED_DOCUMENT_BYTES) {
      await reader.cancel();
      throw new FollowInputError(`${url}: the answer exceeds ${MAX_BUFFERED_DOCUMENT_BYTES} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
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

/** The chain as the node declares it at GET /genesis. */
async function nodeGenesis(base: string, signal?: AbortSignal) {
  const where = `${base}/genesis`;
  const g = await getJson(where, signal);
  const source = hexField(g, "source", where);
  let config: GenesisConfig;
  try {
    config = genesisFromSource(source);
  } catch (err) {
    throw new FollowInputError(`${where}: the node's genesis source is invalid: ${(err as Error).message}`);
  }
  return {
    source,
    config,
    chain_instance_id: hexField(g, "chain_instance_id", where, 32),
    state_root: hexField(g, "state_root", where, 32),
    block_hash: hexField(g, "block_hash", where, 32),
  };
}

export async function follow(options: FollowOptions): Promise<FollowResult> {
  const base = options.url.replace(/\/+$/, "");
  const { db, signal } = options;
  const genesis = await nodeGenesis(base, signal);
  const fixture: Fixture = {
    name: base,
    description: "",
    genesis: { source: genesis.source, config: genesis.config, chain_instance_id: genesis.chain_instance_id, state_root: genesis.state_root },
    blocks: [],
  };
  let blocks = 0;
  let txs = 0;
  let replay: Replay;
  const stored = db.genesis();
  if (stored === undefined) {
    const started = Replay.start(fixture, db.state);
    if (started.mismatch !== null) return { status: "mismatch", mismatch: started.mismatch, source: `${base}/genesis`, blocks, txs };
    const record = genesisRecord(genesis.source, started.replay.chain.chainInstanceId, genesis.config.timestamp, started.replay.chain.genesisStateRoot);
    if (!bytesEqual(record.block.block_hash, genesis.block_hash)) {
      const mismatch: Mismatch = { height: 0n, path: "$.block_hash", field: "genesis block_hash", expected: toHex(genesis.block_hash), actual: toHex(record.block.block_hash), details: [] };
      return { status: "mismatch", mismatch, source: `${base}/genesis`, blocks, txs };
    }
    db.commitGenesis(record);
    replay = started.replay;
  } else {
    if (!bytesEqual(stored.source, genesis.source)) {
      throw new FollowInputError(`the store follows another chain (chain_instance_id ${toHex(stored.chain_instance_id)}), not ${base}'s`);
    }
    replay = Replay.resume(fixture, db.state, db.head()!.block_hash);
  }

  for (;;) {
    if (signal?.aborted) return { status: "stopped", height: db.head()!.height, blocks, txs };
    const head = db.head()!;
    if (options.until !== undefined && head.height >= options.until) return { status: "synced", height: head.height, blocks, txs };
    const query = `since=${head.height + 1n}&limit=${MAX_LIMIT}${options.until === undefined ? "" : `&until=${options.until}`}`;
    const source = `${base}/replication?${query}`;
    const page = await getJson(source, signal).catch((err: unknown) => {
      if (signal?.aborted) return null;
      if (options.watch && err instanceof NodeUnreachable) {
        options.onUnreachable?.(err.message);
        return "unreachable" as const;
      }
      throw err;
    });
    if (page === null) continue;
    if (page === "unreachable") {
      await sleep(options.pollMs, signal);
      continue;
    }
    const items = page["items"];
    if (!Array.isArray(items) || items.length > MAX_LIMIT) throw new FollowInputError(`${source}: "items" is not an array of at most ${MAX_LIMIT} blocks`);
    const nodeHeight = BigInt(/^[0-9]{1,20}$/.test(String(page["height"])) ? String(page["height"]) : "0");
    const loaded = loadItems(fixture, items, source);
    fixture.blocks = loaded.blocks;
    for (let j = 0; j < loaded.blocks.length; j++) {
      if (signal?.aborted) return { status: "stopped", height: db.head()!.height, blocks, txs };
      const b = loaded.blocks[j]!;
      const parent = db.head()!;
      if (b.height <= parent.height) throw new FollowInputError(`${source}: item ${j} has height ${b.height}, not above the verified ${parent.height}`);
      if (!bytesEqual(loaded.parents[j]!, parent.block_hash)) {
        const mismatch: Mismatch = { height: b.height, path: `$.items[${j}].parent_hash`, field: "parent_hash", expected: toHex(loaded.parents[j]!), actual: toHex(parent.block_hash), details: [] };
        return { status: "mismatch", mismatch, source, blocks, txs };
      }
      let result: ReturnType<Replay["block"]>;
      try {
        result = replay.block(j);
      } catch (err) {
        if (err instanceof ReplayInputError) throw new FollowInputError(`${source}: ${err.message.replace(/\$\.blocks\[/g, "$.items[")}`);
        throw err;
      }
      if (result.mismatch !== null) {
        const m = result.mismatch;
        return { status: "mismatch", mismatch: { ...m, path: m.path.replace(/^\$\.blocks\[/, "$.items[") }, source, blocks, txs };
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
}

/** Feed items are fixture blocks plus parent_hash: the fixture loader checks them strictly. */
function loadItems(fixture: Fixture, items: unknown[], source: string): { blocks: Fixture["blocks"]; parents: Uint8Array[] } {
  const parents: Uint8Array[] = [];
  const rest = items.map((item, j) => {
    if (typeof item !== "object" || item === null || Array.isArray(item)) throw new FollowInputError(`${source}: $.items[${j}] is not an object`);
    const { parent_hash, ...block } = item as Record<string, unknown>;
    parents.push(hexField({ parent_hash }, "parent_hash", `${source}: $.items[${j}]`, 32));
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
    if (err instanceof FixtureError) throw new FollowInputError(`${source}: ${err.message.replace(/^\$\.blocks\[/, "$.items[")}`);
    throw err;
  }
}
