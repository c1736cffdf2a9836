// Deterministic long-chain generator (docs/reference/formats/fixture.md "Long chain"): a cbqs-scenario/v1 with
// >= 10,000 blocks and >= 50,000 transactions mixing every CIP-39 instruction across many
// providers and owners, governance parameter writes, emergency pauses of 0x17, suspensions and
// expiries (a small cbqs.suspend_grace_blocks), transfers and malformed payloads. A seeded PRNG
// drawn block by block makes every prefix stable: the first N blocks are the same whatever the
// total, so tests replay a short prefix of the very chain the bench replays in full.
//
//   node dist/scripts/gen-long-chain.js [--blocks 10000] [--min-txs 50000]
//        [--scenario <file.json>] [--fixture <file.json[.gz]>] [--quiet]
import { mkdirSync } from "node:fs";
import { writeOutputFile } from "../src/output-file.js";
import { dirname } from "node:path";
import { pathToFileURL } from "node:url";
import { fillScenario } from "../src/harness/fill.js";
import { fixtureJsonText } from "../src/harness/fixture.js";
import { Phases, progressMode, type ProgressMode } from "../src/harness/progress.js";
import { count } from "../src/format.js";
import { Output, writing } from "../src/json/write.js";
import { parseScenario } from "../src/scenario/parse.js";
import { mulberry32 } from "./rng.js";
import { scriptArgs } from "./script-args.js";
import { errorLine, exitCodeOf, UsageError } from "../src/cli/common.js";

/**
 * The long chain's generator version, recorded beside the cached fixture (scripts/long-chain-cache.ts):
 * bump when the generator's output or the engine semantics it is filled with change (a new
 * instruction mix, another nonce rule), so `npm start` fills the chain again instead of replaying
 * a stale one. (A change of the code is also caught by the cache's code digest; the version says so on purpose.)
 */
export const LONG_CHAIN_GENERATOR_VERSION = 1;

const SEED = 0x5eed_cb95;
const PROVIDERS = 40;
/** Providers that never change pricing (their quotes stay at pricing_generation 1). */
const QUOTE_PROVIDERS = 10;
const OWNERS = 400;
const GOV = "0x00000000000000000000000000000000000000aa";
const REGISTRY = "0x0000000000000000000000000000000000000017";

const hex = (n: number, digits: number) => n.toString(16).padStart(digits, "0");
const address = (tag: string, i: number) => `0x${tag}${hex(i, 40 - tag.length)}`;
const seed32 = (tag: string, i: number) => `0x${(tag + hex(i, 6)).repeat(8)}`;
const providerAddr = (i: number) => address("b0", i);
const ownerAddr = (i: number) => address("c0", i);

const CONFIG = {
  retention_ms: "3600000",
  max_message_bytes: "1024",
  max_append_bytes_per_sec: "0",
  max_delivered_bytes_per_sec: "0",
  max_lanes: "1",
  idempotency_horizon_ms: "60000",
  default_visibility_ms: "30000",
  max_visibility_ms: "30000",
  default_max_attempts: "10",
  fast_batch_max_ms: "0",
  fast_batch_max_records: "0",
};
const RETAINED = ["1048576", "67108864", "1073741824"];

interface StreamRef {
  owner: number;
  nonce: number;
}

export interface LongChainOptions {
  blocks: number;
  minTxs: number;
}

type Tx = Record<string, unknown>;

export function generateLongChainScenario({ blocks, minTxs }: LongChainOptions): Record<string, unknown> {
  const rand = mulberry32(SEED);
  const int = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const nextNonce = new Array<number>(OWNERS).fill(0);
  const streams: StreamRef[] = [];
  const draining = new Array<boolean>(PROVIDERS).fill(false);
  let pausedUntil = 0;
  let txCount = 0;

  const accounts: Record<string, { balance: string }> = {};
  for (let i = 0; i < OWNERS; i++) accounts[ownerAddr(i)] = { balance: "1000000000000000" };
  for (let i = 0; i < PROVIDERS; i++) accounts[providerAddr(i)] = { balance: "1000000000000000" };

  const register = (p: number): Tx => ({
    from: providerAddr(p),
    cbqs: {
      RegisterProvider: {
        signing_key: { ed25519_seed: seed32("51", p) },
        endpoints: [{ transport: "WebSocketTls", uri: `wss://p${p}.cbqs.example/stream` }],
        quote_key: { ed25519_seed: seed32("52", p) },
        base_rate_admission: {
          accepts_new: true,
          max_active_streams: "100000",
          max_total_retained_bytes: "1000000000000000",
          max_total_append_bytes_per_sec: "1000000000",
          max_total_delivered_bytes_per_sec: "1000000000",
        },
        metadata_hash: seed32("0f", p),
      },
    },
  });

  const streamRef = (s: StreamRef) => ({ owner: ownerAddr(s.owner), owner_nonce: String(s.nonce) });

  /** Transactions scheduled for a later height (key-generation activations). */
  const scheduled = new Map<number, Tx[]>();
  const schedule = (height: number, tx: Tx) => scheduled.set(height, [...(scheduled.get(height) ?? []), tx]);

  /** §9.3: a provider-signed key batch receipt activating generation `generation` of `s`'s key stream. */
  const activation = (s: StreamRef, provider: number, generation: number, servedAt: number): Tx => ({
    from: ownerAddr(s.owner),
    cbqs: {
      ActivateKeyGeneration: {
        receipt: {
          served_at: { height: String(servedAt) },
          key_stream_id: { key_stream_of: streamRef(s) },
          main_stream_id: streamRef(s),
          provider_epoch: "0",
          encryption_generation: String(generation),
          batch_digest: seed32("b1", generation),
          envelope_count: "1",
          envelope_root: seed32("e1", generation),
          first_sequence: "0",
          last_sequence: "1",
          previous_global_receipt: `0x${"00".repeat(32)}`,
          final_append_receipt: seed32("f1", generation),
          signer_seed: seed32("51", provider),
        },
        bump_authorization_generation: generation % 2 === 0,
      },
    },
  });

  const createStream = (height: number): Tx => {
    const owner = int(0, OWNERS - 1);
    const nonce = ++nextNonce[owner]!;
    const quoted = rand() < 0.2;
    const provider = quoted ? int(0, QUOTE_PROVIDERS - 1) : int(0, PROVIDERS - 1);
    const retained = pick(RETAINED);
    const stream = { owner, nonce };
    streams.push(stream);
    // Some streams are encrypted (§4.1 key stream); their key generations are activated later.
    const encrypted = !quoted && rand() < 0.15;
    if (encrypted) {
      const first = height + int(1, 5);
      schedule(first, activation(stream, provider, 1, first - 1));
      const second = first + int(1, 10);
      schedule(second, activation(stream, provider, 2, second - 1));
    }
    return {
      from: ownerAddr(owner),
      cbqs: {
        CreateStream: {
          owner_nonce: String(nonce),
          // Small escrows run dry within the chain: suspensions, then expiries.
          initial_escrow: String(pick([0, int(1_000, 50_000), int(50_000, 5_000_000)])),
          admin_key: { ed25519_seed: seed32("61", owner) },
          rotation_key: null,
          delivery_class: "Standard",
          encrypted,
          provider: providerAddr(provider),
          config: { ...CONFIG, retained_bytes_limit: retained },
          price_quote: quoted
            ? {
                provider: providerAddr(provider),
                owner: ownerAddr(owner),
                stream_id: { owner: ownerAddr(owner), owner_nonce: String(nonce) },
                pricing_generation: "1",
                delivery_class: "Standard",
                retained_bytes: retained,
                append_bytes_sec: "0",
                delivered_bytes_sec: "0",
                rate_per_block: String(int(5_000, 20_000)),
                valid_until_block: String(height + int(0, 50)),
                signer_seed: seed32("52", provider),
              }
            : null,
        },
      },
    };
  };

  // Mostly recent streams (still alive more often), sometimes any stream ever created.
  const anyStream = (): StreamRef | null => {
    if (streams.length === 0) return null;
    const window = rand() < 0.7 ? Math.min(streams.length, 100) : streams.length;
    return streams[streams.length - 1 - Math.floor(rand() * window)]!;
  };

  const randomTx = (height: number): Tx => {
    const r = rand();
    const s = anyStream();
    if (r < 0.22 || s === null) return createStream(height);
    if (r < 0.4) return { from: ownerAddr(int(0, OWNERS - 1)), cbqs: { TopUpStream: { stream_id: streamRef(s), amount: String(int(1, 200_000)) } } };
    if (r < 0.62) return { from: pick([ownerAddr(int(0, OWNERS - 1)), providerAddr(int(0, PROVIDERS - 1))]), cbqs: { SettleStreamRent: { stream_id: streamRef(s) } } };
    if (r < 0.68) return { from: ownerAddr(s.owner), cbqs: { CloseStream: { stream_id: streamRef(s) } } };
    if (r < 0.74) {
      return { from: ownerAddr(s.owner), cbqs: { UpdateStream: { stream_id: streamRef(s), rotation_key: "Keep", bump_authorization_generation: true } } };
    }
    if (r < 0.77) {
      const p = int(QUOTE_PROVIDERS, PROVIDERS - 1);
      return { from: providerAddr(p), cbqs: { UpdateProvider: { metadata_hash: `0x${hex(int(0, 0xffffff), 6).repeat(10)}${hex(height, 4).slice(-4)}` } } };
    }
    if (r < 0.79) {
      const p = int(QUOTE_PROVIDERS, PROVIDERS - 1);
      draining[p] = !draining[p];
      return { from: providerAddr(p), cbqs: { SetProviderStatus: { status: draining[p] ? "Draining" : "Active" } } };
    }
    if (r < 0.94) return { from: ownerAddr(int(0, OWNERS - 1)), transfer: { to: pick([ownerAddr(int(0, OWNERS - 1)), providerAddr(int(0, PROVIDERS - 1))]), amount: String(int(1, 1_000_000)) } };
    if (r < 0.955) {
      const name = pick(["cbqs.suspend_grace_blocks", "cbqs.max_streams_per_owner"]);
      const value = name === "cbqs.suspend_grace_blocks" ? int(5, 40) : int(64, 2048);
      return { from: GOV, gov: { SetParam: { name, value: String(value) } } };
    }
    if (r < 0.96) return { from: GOV, gov: { SetParams: { "cbqs.rent.provider_bps": "9000", "cbqs.rent.platform_bps": "1000" } } };
    if (r < 0.97) return { from: ownerAddr(int(0, OWNERS - 1)), raw: { opcode: "218", payload: `0x${hex(int(0, 0xffff), 4)}` } };
    // Non-governance senders try governance (always Unauthorized).
    return { from: ownerAddr(int(0, OWNERS - 1)), gov: { Pause: { actor: REGISTRY, blocks: "5" } } };
  };

  const out: Array<Record<string, unknown>> = [];
  for (let height = 1; height <= blocks || txCount < minTxs; height++) {
    const txs: Tx[] = [];
    if (height === 1) for (let p = 0; p < PROVIDERS; p++) txs.push(register(p));
    // An emergency pause every 500 blocks from block 100 (CIP-39 Denial of service), sometimes lifted early.
    if (height % 500 === 100) {
      const length = int(5, 30);
      pausedUntil = height + length;
      txs.push({ from: GOV, gov: { Pause: { actor: REGISTRY, blocks: String(length) } } });
    } else if (height < pausedUntil && rand() < 0.05) {
      pausedUntil = height;
      txs.push({ from: GOV, gov: { Unpause: { actor: REGISTRY } } });
    }
    const n = int(3, 7);
    for (let i = 0; i < n; i++) txs.push(randomTx(height));
    txs.push(...(scheduled.get(height) ?? []));
    scheduled.delete(height);
    txCount += txs.length;
    out.push({ height: String(height), txs });
  }
  return {
    format: "cbqs-scenario/v1",
    name: "long-chain",
    description:
      "Generated by scripts/gen-long-chain.ts (seeded, prefix-stable): every CIP-39 §5 instruction across 40 providers and 400 owners, " +
      "base-rate, quoted (§4.4) and encrypted (§4.1, §9.3 key generations) streams, §6.1 settlement with suspend_grace_blocks 20 (suspensions and expiries), §18 parameter writes, " +
      "emergency pauses of 0x17, transfers and malformed payloads",
    genesis: {
      chain_id: "7",
      timestamp: "2026-01-01T00:00:00Z",
      block_time_seconds: "1",
      governance: GOV,
      params: { "cbqs.suspend_grace_blocks": "20" },
      accounts,
    },
    blocks: out,
  };
}

/** Fills the long chain into `fixturePath` (gzip when it ends in .gz) with progress on stderr. */
export function fillLongChain(fixturePath: string, options: LongChainOptions & { progress: ProgressMode }): void {
  const scenario = generateLongChainScenario(options);
  const chain = scenario["blocks"] as Array<{ txs: unknown[] }>;
  process.stderr.write(`long-chain: ${count(chain.length, "block")}, ${count(chain.reduce((n, b) => n + b.txs.length, 0), "transaction")}\n`);
  mkdirSync(dirname(fixturePath), { recursive: true });
  // The progress line gives the rate and ETA: a fixed time estimate would be wrong for any other --blocks.
  process.stderr.write(`long-chain: filling ${fixturePath} (executes the chain, then checks it by replay)\n`);
  const phases = new Phases(options.progress);
  const fixture = fillScenario(parseScenario(scenario), "final", (phase, state) => phases.update(`long-chain fill (${phase})`, state));
  phases.end();
  const text = fixtureJsonText(fixture);
  writing(new Output(fixturePath), (out) => out.write(text)); // a .gz name is written gzipped
  process.stderr.write(`long-chain: wrote ${fixturePath}\n`);
}

const USAGE = `Usage: node dist/scripts/gen-long-chain.js [--blocks <n>] [--min-txs <n>] [--scenario <file.json>] [--fixture <file.json[.gz]>] [--quiet]

Generates the deterministic long chain (docs/fixtures.md §7): the same seed, so every prefix is stable.

Options:
  --blocks <n>       blocks (default 10000)
  --min-txs <n>      at least this many transactions: blocks are added past --blocks until there are (default 50000)
  --scenario <file>  write the cbqs-scenario/v1
  --fixture <file>   fill it into a cbqs-fixture/v1 (gzipped when the name ends in .gz), checked by replay
  --quiet            no progress on stderr
  -h, --help         this text

At least one of --scenario and --fixture.

Exit codes:
  0  written
  1  (not used)
  2  unknown option, bad value, neither --scenario nor --fixture, unwritable file
`;

export function main(argv: string[]): void {
  const args = scriptArgs(argv, USAGE, ["blocks", "min-txs", "scenario", "fixture"], ["quiet"]);
  if (args === null) return;
  const blocks = args.integer("blocks", 10_000, 1);
  const minTxs = args.integer("min-txs", 50_000, 0);
  const scenarioPath = args.value("scenario");
  const fixturePath = args.value("fixture");
  if (scenarioPath === undefined && fixturePath === undefined) throw new UsageError("give --scenario <file> or --fixture <file> (see --help)");
  if (scenarioPath !== undefined) writeOutputFile(scenarioPath, JSON.stringify(generateLongChainScenario({ blocks, minTxs })) + "\n");
  if (fixturePath !== undefined) fillLongChain(fixturePath, { blocks, minTxs, progress: progressMode(args.flag("quiet")) });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    main(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(errorLine(err));
    process.exitCode = exitCodeOf(err);
  }
}
