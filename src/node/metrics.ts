// GET /metrics (docs/guides/run-a-devnet.md "Metrics"): the node's counters in the Prometheus text format,
// kept by prom-client (its exposition and histogram rules are better kept by a maintained
// library than by us). CIP-4 §9.2 names four key metrics, exposed under exactly those names —
// `block_apply_ms`, `proof_generation_ms`, `batch_commit_ms` (histograms, in milliseconds) and
// `speculative_cache_size` — so a dashboard written for a Cowboy node reads the emulator as it
// is; the node's own are prefixed `cbqs_`. Every server has its own Registry, never prom-client's
// global one: two nodes in one process (a test suite) must not share counters. Timings are taken
// with performance.now() in the node layer only (src/chain-node/chain-node.ts, src/node/server.ts):
// nothing here runs inside consensus code or changes what it computes.
import { statSync } from "node:fs";
import { join } from "node:path";
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { ChainDb } from "../../state/chain-db/chain-db.js";
import { QmdbChainDb } from "../../state/chain-db/base.js";
import { LmdbChainDb } from "../../state/lmdb/chain-db.js";
import { TextAnswer } from "./json.js";

/**
 * Upper bounds (milliseconds) of every histogram's buckets, from 50 µs (an empty block's commit, a
 * single proof on a small state) to 2.5 s (a 1,024-transaction block on a loaded machine); slower
 * observations land in +Inf only.
 */
export const MS_BUCKETS: readonly number[] = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500];

/** The `route` label of a request no endpoint matched (never its path: unbounded label values are a memory leak). */
export const UNMATCHED_ROUTE = "unmatched";

/** The `route` label of the explorer page's files (served at / and /explorer/, outside the ROUTES table). */
export const EXPLORER_ROUTE = "cbqs.explorer";

/** Which limit refused a request (docs/guides/run-a-devnet.md "Limits and errors"). */
export type LimitName = "client" | "global" | "proof";

export class NodeMetrics {
  readonly registry = new Registry();
  /** How many GET /subscribe subscribers are open now, read at each scrape (the server sets it to its hub's count). */
  subscribers: () => number = () => 0;
  /** Bytes of answers not yet sent to their clients, read at each scrape (the server sets it: src/node/unread.ts). */
  unreadBytes: () => number = () => 0;
  private readonly blockApply: Histogram;
  private readonly batchCommit: Histogram;
  private readonly proofGeneration: Histogram<"route">;
  private readonly requests: Counter<"route" | "status">;
  private readonly limited: Counter<"route" | "limit">;

  /** `db`: the node's store now (a devnet revert replaces it), read at each scrape. */
  constructor(db: () => ChainDb) {
    const registers = [this.registry];
    this.blockApply = new Histogram({
      name: "block_apply_ms",
      help: "CIP-4 §9.2: milliseconds to produce one block before its commit (transaction selection, execution, roots, header)",
      buckets: [...MS_BUCKETS],
      registers,
    });
    this.batchCommit = new Histogram({
      name: "batch_commit_ms",
      help: "CIP-4 §9.2: milliseconds of one block's ChainDb commit (its staged state, record and indexes made visible and, with --db, durable)",
      buckets: [...MS_BUCKETS],
      registers,
    });
    this.proofGeneration = new Histogram({
      name: "proof_generation_ms",
      help: "CIP-4 §9.2: milliseconds to build one proof answer, by endpoint",
      labelNames: ["route"],
      buckets: [...MS_BUCKETS],
      registers,
    });
    new Gauge({
      name: "speculative_cache_size",
      help: "CIP-4 §9.2: blocks staged and not yet committed (at most 1 here; 0 between blocks, which is when a scrape runs)",
      registers,
      collect() {
        const store = db();
        this.set(store instanceof QmdbChainDb ? store.stagedBlocks : 0);
      },
    });
    this.requests = new Counter({ name: "cbqs_http_requests_total", help: "HTTP requests answered, by endpoint name (discovery's) and status", labelNames: ["route", "status"], registers });
    this.limited = new Counter({ name: "cbqs_http_rate_limited_total", help: "Requests refused 429, by endpoint name and the limit that refused them", labelNames: ["route", "limit"], registers });
    const subscribers = () => this.subscribers();
    new Gauge({
      name: "cbqs_subscribers",
      help: "Open GET /subscribe subscriptions",
      registers,
      collect() {
        this.set(subscribers());
      },
    });
    const unreadBytes = () => this.unreadBytes();
    new Gauge({
      name: "cbqs_unread_answer_bytes",
      help: "Bytes of answers handed to their connections and not yet sent: clients that have not read them (bounded per client and in all)",
      registers,
      collect() {
        this.set(unreadBytes());
      },
    });
    new Gauge({
      name: "cbqs_head_height",
      help: "Height of the head block",
      registers,
      collect() {
        this.set(Number(db().head()?.height ?? 0n));
      },
    });
    new Gauge({
      name: "cbqs_store_state_keys",
      help: "Live state keys (CIP-4 54-byte keys holding a value) at the head",
      registers,
      collect() {
        const store = db();
        this.set(store instanceof QmdbChainDb ? store.commitment.db.any.activeKeys : 0);
      },
    });
    // Only a persistent store has a size on disk; an in-memory node has no such series at all.
    if (db() instanceof LmdbChainDb) {
      new Gauge({
        name: "cbqs_store_disk_bytes",
        help: "Bytes the --db store's LMDB data file (data.mdb) occupies on disk (allocated blocks)",
        registers,
        collect() {
          const store = db();
          if (store instanceof LmdbChainDb) this.set(statSync(join(store.env.dir, "data.mdb")).blocks * 512);
        },
      });
    }
  }

  /** One produced block: its production (`applyMs`) and its commit (`commitMs`). */
  readonly observeBlock = (applyMs: number, commitMs: number): void => {
    this.blockApply.observe(applyMs);
    this.batchCommit.observe(commitMs);
  };

  observeProof(route: string, ms: number): void {
    this.proofGeneration.observe({ route }, ms);
  }

  /** A request answered with `status` (0: none was sent, the client went away). */
  countRequest(route: string, status: number): void {
    this.requests.inc({ route, status: status === 0 ? "none" : String(status) });
  }

  countLimited(route: string, limit: LimitName): void {
    this.limited.inc({ route, limit });
  }

  /** The exposition, in the Prometheus text format (version 0.0.4). */
  async answer(): Promise<TextAnswer> {
    return new TextAnswer(this.registry.contentType, await this.registry.metrics());
  }
}
