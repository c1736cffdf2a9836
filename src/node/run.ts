// A running node: the chain (opened from genesis, a fixture or its store), the HTTP server, and
// devnet block production by its mining mode: a block per transaction (auto), every `blockTime`
// seconds (interval), or only on POST /mine (manual). `cbqs node` is this plus argument parsing
// and signals; tests start it in-process the same way.
import { bytesEqual, toHex } from "../bytes.js";
import { DEFAULT_GENESIS_SOURCE } from "../harness/genesis.js";
import { devnetOf } from "../harness/devnet.js";
import { clientShare, DEFAULT_MINE_QUEUE, Devnet, type MiningMode } from "../chain-node/devnet.js";
import type { ChainDb } from "../../state/chain-db/chain-db.js";
import { CbqsNode, DEFAULT_PRODUCTION, type NodeStart, type ProductionLimits } from "../chain-node/chain-node.js";
import { startServer, type Logger, type ServerOptions } from "./server.js";
import type { NodeMetrics } from "./metrics.js";
import type { Subscriptions } from "./subscriptions.js";
import { stoppable } from "../steps.js";
import { StoreError } from "../../state/lmdb/errors.js";

export interface RunOptions extends Omit<ServerOptions, "log"> {
  /** Seconds between produced blocks under interval mining; 0 = no timer. */
  blockTime: number;
  /** Default: interval when blockTime > 0, else manual (the node's behaviour before --mining). */
  mining?: MiningMode;
  log: Logger;
  /** Called once when the node cannot go on (its store refused a block); the caller closes it. */
  onFatal?: (err: Error) => void;
  /** POST /mine: blocks of the requests waiting or running, in all. Default DEFAULT_MINE_QUEUE. */
  mineQueue?: number;
  /** The same per client address. Default a quarter of mineQueue. */
  clientMineQueue?: number;
  /** What a produced block and the pool hold in bytes. Default DEFAULT_PRODUCTION. */
  production?: Partial<ProductionLimits>;
}

export interface RunningNode {
  readonly url: string;
  readonly node: CbqsNode;
  readonly devnet: Devnet;
  /** GET /metrics' counters (src/node/metrics.ts). */
  readonly metrics: NodeMetrics;
  /** GET /subscribe's subscribers (how many, how many dropped). */
  readonly subscriptions: Subscriptions;
  /** Stops block production (after the block in progress), closes the server and the store. */
  close(): Promise<void>;
}

export async function runNode(db: ChainDb, start: NodeStart, options: RunOptions): Promise<RunningNode> {
  const log = options.log;
  // A fixture's import can take a while: it stops between two committed blocks on SIGINT/SIGTERM (src/steps.ts).
  const node = await stoppable(CbqsNode.openSteps(db, start, (b) => log({ level: "debug", msg: "imported", height: b.height.toString(), txs: b.transactions.length })));
  // A store kept with a larger --retain-blocks: the undo rows below the window go (after a fixture's stored blocks are verified).
  const pruned = db.pruneUndo();
  if (pruned !== null) log({ level: "info", msg: "pruned undo rows", from: pruned.from.toString(), to: pruned.to.toString(), blocks: pruned.blocks, retain_blocks: db.retainBlocks });
  node.onMined = (mined) => log({ level: "info", msg: "block", height: mined.block.height.toString(), txs: mined.block.transactions.length, dropped: mined.dropped.length });
  const mining = options.mining ?? (options.blockTime > 0 ? "interval" : "manual");
  if ((mining === "interval") !== options.blockTime > 0) throw new Error(`internal: mining ${mining} with a block time of ${options.blockTime} s`);
  node.production = { ...DEFAULT_PRODUCTION, ...options.production };
  const queueBlocks = options.mineQueue ?? DEFAULT_MINE_QUEUE;
  const devnet = new Devnet(node, mining, log, { queueBlocks, clientBlocks: Math.min(queueBlocks, options.clientMineQueue ?? clientShare(queueBlocks)) });
  const server = await startServer(devnet, { ...options, log });
  // The chain instance with the URL: what a client needs first (cbqs tx --chain-instance). The
  // default genesis (CIP-39 §3: no genesis file given) is named, so it is not mistaken for a file's.
  const defaultGenesis = bytesEqual(node.genesis.source, DEFAULT_GENESIS_SOURCE);
  const dev = defaultGenesis ? undefined : devnetOf(node.genesis.source, node.config.accounts);
  const kind = defaultGenesis ? { genesis: "default" } : dev !== undefined ? { genesis: "devnet", dev_accounts: dev.accounts.length } : {};
  log({ level: "info", msg: "serving", url: server.url, chain_instance_id: toHex(node.chainInstanceId), height: node.head().height.toString(), ...kind, mining });
  let timer: NodeJS.Timeout | undefined;
  node.onStoreFailed = (err) => {
    // No further block can be committed until the store is reopened: stop producing.
    if (timer !== undefined) clearInterval(timer);
    timer = undefined;
    // A StoreError is the store's own refusal (a full disk); anything else is a bug: its stack.
    log({ level: "error", msg: "the store refused a block; stopping", error: err instanceof StoreError ? err.message : (err.stack ?? err.message) });
    options.onFatal?.(err);
  };
  if (mining === "interval") {
    // Block production is synchronous: a timer tick runs one whole block, so a shutdown can only
    // happen between blocks ("finish the block in progress"). A tick that finds a devnet write
    // running or queued (a batch, a revert) passes: the chain is theirs until they end.
    timer = setInterval(() => {
      if (!devnet.idle) return;
      try {
        node.mine();
      } catch (err) {
        if (timer === undefined) return; // the store refused the block: reported by onStoreFailed, production has stopped
        // Logged and retried at the next tick: the node keeps serving, and production resumes as
        // soon as the cause is gone (docs/guides/run-a-devnet.md "Running it").
        log({ level: "error", msg: "block production failed", error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
      }
    }, options.blockTime * 1000);
  }
  let closing: Promise<void> | undefined;
  return {
    url: server.url,
    node,
    devnet,
    metrics: server.metrics,
    subscriptions: server.subscriptions,
    close: () =>
      (closing ??= (async () => {
        if (timer !== undefined) clearInterval(timer);
        devnet.stop();
        await server.close();
        // A revert replaces the in-memory store: close the one the node holds now, and the first.
        node.db.close();
        db.close();
      })()),
  };
}
