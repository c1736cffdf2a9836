// Shared by the node tests: an in-process node on 127.0.0.1:0 (every test closes what it starts),
// JSON requests, transaction builders, and the expected registry state per height from an
// independent replay through the engine's own read views (not the node's read code).
import { request as httpRequest } from "node:http";
import { networkInterfaces } from "node:os";
import { encodeEnvelope } from "../../src/chain/envelope.js";
import type { GovAction } from "../../src/engine/inputs.js";
import { encode, toJson } from "../../src/codec/core.js";
import * as S from "../../src/codec/schema.js";
import type { CbqsInstructionV1 } from "../../src/codec/types.js";
import { fromHex, toHex } from "../../src/bytes.js";
import { GAS_VECTORS_SHA256 } from "../../src/gas/pinned.js";
import { readFixture } from "../../src/harness/documents.js";
import type { Fixture } from "../../src/harness/fixture.js";
import { Replay } from "../../src/harness/replay.js";
import type { NodeStart } from "../../src/chain-node/chain-node.js";
import type { MiningMode } from "../../src/chain-node/devnet.js";
import { runNode, type RunningNode, type RunOptions } from "../../src/node/run.js";
import type { ServerOptions } from "../../src/node/server.js";
import type { ChainDb } from "../../state/chain-db/chain-db.js";
import { MemoryChainDb } from "../../state/chain-db/memory.js";
import { inCi } from "../report/tools.js";

export interface TestNode extends RunningNode {
  db: ChainDb;
  logs: Array<Record<string, unknown>>;
}

export async function startNode(
  start: NodeStart | string,
  options: Partial<Omit<ServerOptions, "log">> &
    Pick<RunOptions, "mineQueue" | "clientMineQueue" | "production"> & { retainBlocks?: number; blockTime?: number; mining?: MiningMode; db?: ChainDb } = {},
): Promise<TestNode> {
  const db = options.db ?? new MemoryChainDb(options.retainBlocks ?? 128);
  const logs: Array<Record<string, unknown>> = [];
  const from: NodeStart = typeof start === "string" ? { kind: "fixture", fixture: readFixture(start) } : start;
  const running = await runNode(db, from, {
    host: "127.0.0.1",
    port: options.port ?? 0,
    blockTime: options.blockTime ?? 0,
    ...(options.mining === undefined ? {} : { mining: options.mining }),
    rateLimit: options.rateLimit ?? 0,
    ...(options.clientRateLimit === undefined ? {} : { clientRateLimit: options.clientRateLimit }),
    proofRateLimit: options.proofRateLimit ?? 0,
    proofLimits: options.proofLimits ?? { maxExclusionOps: 4096 },
    ...(options.now === undefined ? {} : { now: options.now }),
    ...(options.maxSubscribers === undefined ? {} : { maxSubscribers: options.maxSubscribers }),
    ...(options.maxClientSubscribers === undefined ? {} : { maxClientSubscribers: options.maxClientSubscribers }),
    ...(options.mineQueue === undefined ? {} : { mineQueue: options.mineQueue }),
    ...(options.clientMineQueue === undefined ? {} : { clientMineQueue: options.clientMineQueue }),
    ...(options.production === undefined ? {} : { production: options.production }),
    ...(options.subscriberBuffer === undefined ? {} : { subscriberBuffer: options.subscriberBuffer }),
    ...(options.heartbeatMs === undefined ? {} : { heartbeatMs: options.heartbeatMs }),
    ...(options.vhosts === undefined ? {} : { vhosts: options.vhosts }),
    ...(options.corsOrigins === undefined ? {} : { corsOrigins: options.corsOrigins }),
    ...(options.exposeDevSeeds === undefined ? {} : { exposeDevSeeds: options.exposeDevSeeds }),
    ...(options.unread === undefined ? {} : { unread: options.unread }),
    log: (e) => logs.push(e),
  });
  return Object.assign(running, { db, logs });
}

export interface Answer {
  status: number;
  body: Record<string, unknown>;
  headers: Headers;
}

export async function request(url: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, body: JSON.parse(text) as Record<string, unknown>, headers: res.headers };
}

export const get = (base: string, path: string) => request(base + path);
/** A POST as a script sends it: with X-Cbqs-Client, which a devnet write needs (src/node/guard.ts). */
export const post = (base: string, path: string, body: string | Uint8Array, contentType = "text/plain") =>
  request(base + path, { method: "POST", body, headers: { "content-type": contentType, "x-cbqs-client": "test" } });

/** A request the test may hang up before it is answered: the answer, or "hung up". */
export interface Sent {
  answer: Promise<{ status: number; body: Record<string, unknown>; retryAfter: string | undefined } | "hung up">;
  hangUp(): void;
}

/**
 * A POST sent from `localAddress`: lanAddress() plays a second client to a node on 127.0.0.1 (every
 * loopback address, 127.0.0.2 as much as 127.0.0.1, is the one loopback client).
 */
export function postFrom(localAddress: string, url: string): Sent {
  let hungUp = false;
  const req = httpRequest(url, { method: "POST", localAddress, agent: false, headers: { "x-cbqs-client": "test" } });
  const answer = new Promise<Awaited<Sent["answer"]>>((resolve, reject) => {
    req.on("response", (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown>, retryAfter: res.headers["retry-after"] }));
      res.on("error", (err) => (hungUp ? resolve("hung up") : reject(err)));
    });
    req.on("error", (err) => (hungUp ? resolve("hung up") : reject(err)));
  });
  req.end();
  return {
    answer,
    hangUp: () => {
      hungUp = true;
      req.destroy();
    },
  };
}

/**
 * This machine's first non-loopback IPv4 address. A connection from it to a node on 127.0.0.1 is
 * a client other than the loopback one (src/node/client-key.ts), and a client off loopback.
 */
export function lanAddress(): string | undefined {
  return Object.values(networkInterfaces())
    .flat()
    .find((a) => a !== undefined && a.family === "IPv4" && !a.internal)?.address;
}

/** Outside CI a machine with no address but loopback skips a test that needs a second client, saying why; in CI it fails (.ci/run machines have one). */
export function noRemoteClient(ctx: { skip: (note: string) => void }): void {
  const why = "this machine has no non-loopback IPv4 address to play a second client through";
  if (inCi()) throw new Error(why);
  ctx.skip(why);
}

/** Waits (bounded: about 30 s) until `done()` holds; fails naming `what` otherwise. */
export async function waitFor(what: string, done: () => boolean): Promise<void> {
  for (let i = 0; i < 3_000 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!done()) throw new Error(`still waiting for ${what}`);
}

/** A raw envelope (docs/reference/formats/transaction.md) for `from` with `nonce`. */
export function cbqsTx(chainId: bigint, from: Uint8Array, nonce: bigint, instruction: CbqsInstructionV1): Uint8Array {
  return encodeEnvelope({ chain_id: chainId, nonce, tx: { from, body: { kind: "system", opcode: 218, payload: encode(S.CbqsInstructionV1, instruction) } } });
}

export function govTx(chainId: bigint, from: Uint8Array, nonce: bigint, action: GovAction): Uint8Array {
  return encodeEnvelope({ chain_id: chainId, nonce, tx: { from, body: { kind: "gov", action } } });
}

export function transferTx(chainId: bigint, from: Uint8Array, nonce: bigint, to: Uint8Array, amount: bigint): Uint8Array {
  return encodeEnvelope({ chain_id: chainId, nonce, tx: { from, body: { kind: "transfer", to, amount } } });
}

export const address = (byte: number): Uint8Array => new Uint8Array(20).fill(byte);

/** `s` as a regular expression matching exactly that text. */
export const re = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** What a broker-state answer must hold at one height, from the engine's read views. */
export interface Expected {
  block_hash: string;
  state_root: string;
  streams: Map<string, unknown>;
  providers: Map<string, unknown>;
  bounds: Record<string, string>;
  effective_rent_height: string;
}

/**
 * Replays `fixture` (blocks as the node committed them) through a fresh engine and records, per
 * height, every stream, provider, the live scalars and effective_rent_height.
 */
export function expectedByHeight(fixture: Fixture): Map<string, Expected> {
  const out = new Map<string, Expected>();
  const { replay, mismatch } = Replay.start(fixture);
  if (mismatch !== null) throw new Error(`expected replay: ${mismatch.field}`);
  const snapshot = (height: bigint, blockHash: Uint8Array, stateRoot: Uint8Array, erh: bigint) => {
    const chain = replay.chain;
    out.set(height.toString(), {
      block_hash: toHex(blockHash),
      state_root: toHex(stateRoot),
      streams: new Map(chain.streams().map((s) => [toHex(s.stream_id), toJson(S.StreamRecordV1, s)])),
      providers: new Map(chain.providers().map((p) => [toHex(p.provider), toJson(S.ProviderRecordV1, p)])),
      bounds: Object.fromEntries([...chain.params()].map(([k, v]) => [k, v.toString()])),
      effective_rent_height: erh.toString(),
    });
  };
  snapshot(0n, new Uint8Array(32), replay.chain.genesisStateRoot, 0n);
  fixture.blocks.forEach((b, i) => {
    const { executed, mismatch: m } = replay.block(i);
    if (m !== null) throw new Error(`expected replay: block ${b.height} ${m.field}`);
    snapshot(b.height, executed.blockHash, executed.stateRoot, executed.effectiveRentHeight);
  });
  return out;
}

/** The node's chain as a fixture (genesis + every committed block with its outputs). */
export function fixtureOf(db: ChainDb, config: Fixture["genesis"]["config"]): Fixture {
  const g = db.genesis()!;
  const head = db.head()!;
  return {
    name: "node",
    description: "",
    genesis: { source: g.source, config, chain_instance_id: g.chain_instance_id, state_root: g.block.state_root },
    blocks: db.blocks({ from: 1n, to: head.height, order: "asc", limit: Number.MAX_SAFE_INTEGER }).map((b) => ({
      height: b.height,
      timestamp: b.timestamp,
      transactions: b.transactions,
      effective_rent_height: b.effective_rent_height,
      state_root: b.state_root,
      tx_root: b.tx_root,
      receipt_root: b.receipt_root,
      logs_root: b.logs_root,
      block_hash: b.block_hash,
      gas_vectors_sha256: GAS_VECTORS_SHA256,
      receipts: b.receipts,
    })),
  };
}

export { fromHex, toHex };

/** A snapshot download's limits in tests: a read may be silent 5 s, the body at most 1 MiB, the whole 60 s. */
export const DOWNLOAD = { timeoutMs: 5000, maxBytes: 1 << 20, deadlineMs: 60_000 };
