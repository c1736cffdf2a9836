// `cbqs node`: a local CBQS node (docs/guides/run-a-devnet.md) — the CIP-39 §3 reads, CIP-4 §5.4 proofs, the
// replication feed and a devnet (dev accounts, POST /tx, POST /mine, --mining, snapshots). Exit
// 0 after a clean SIGINT/SIGTERM shutdown, 1 when an imported fixture block does not verify (the
// replay report), 2 for unusable input.
import { echo } from "../bounds.js";
import { readDocument, readFixture } from "../harness/documents.js";
import { FIXTURE_FORMAT } from "../harness/fixture.js";
import { DEFAULT_GENESIS } from "../harness/genesis.js";
import { DEFAULT_DEV_ACCOUNTS, DEFAULT_DEV_BALANCE, devnetGenesisSource, devnetOf, DEVNET_MNEMONIC, DEVNET_SEED_DOMAIN, MAX_DEV_ACCOUNTS } from "../harness/devnet.js";
import { toHex } from "../bytes.js";
import { U64_MAX } from "../engine/math.js";
import { DEFAULT_MINE_QUEUE, MAX_CLIENT_MINE_REQUESTS, MAX_MINE_BLOCKS, MINING_MODES, type MiningMode } from "../chain-node/devnet.js";
import type { CbqsNode } from "../chain-node/chain-node.js";
import { JsonError, parseJson } from "../json/parse.js";
import { readFileBytes } from "../json/read.js";
import { Output, writing } from "../json/write.js";
import { SCENARIO_FORMAT } from "../scenario/parse.js";
import { ImportMismatch, NodeInputError, type NodeStart } from "../chain-node/chain-node.js";
import { DEFAULT_MAX_EXCLUSION_OPS } from "../node/proofs.js";
import { CLIENT_SHARE } from "../node/rate-limit.js";
import { runNode } from "../node/run.js";
import { DEFAULT_PROOF_RATE_LIMIT, DEFAULT_RATE_LIMIT, stderrLogger, type Logger } from "../node/server.js";
import { DEFAULT_RETAIN_BLOCKS } from "../store-tools/store.js";
import { DEFAULT_MAX_SUBSCRIBERS } from "../node/subscriptions.js";
import { isLoopbackHost } from "../node/guard.js";
import { openStore, storeUsageError } from "./store.js";
import { SNAPSHOT_INTERVAL_HELP, snapshotInterval } from "./store-options.js";
import { decimalOption, EXIT_OK, EXIT_REJECT, exitCodes, intOption, option, outputOption, UsageError } from "./common.js";
import type { CommandSpec } from "./define.js";
import { mismatchLines } from "./replay-report.js";
import { Stopped, watchSignals } from "../steps.js";

interface NodeOpts {
  db?: string;
  host: string;
  port: string;
  fixture?: string;
  genesis?: string;
  blockTime: string;
  mining?: string;
  accounts?: string;
  balance?: string;
  printGenesis?: boolean;
  rateLimit: string;
  clientRateLimit?: string;
  proofRateLimit: string;
  retainBlocks: string;
  maxExclusionOps: string;
  snapshotInterval?: string;
  maxSubscribers: string;
  httpVhosts?: string;
  httpCorsdomain?: string;
  exposeDevnet?: boolean;
  exposeDevSeeds?: boolean;
  maxClientSubscribers?: string;
  mineQueue: string;
  clientMineQueue?: string;
  quiet?: boolean;
}

/**
 * A genesis file's exact bytes (CIP-39 §3: they are hashed as they are). A fixture or scenario
 * given instead is named as such, with the way to its genesis: it holds one but is not one, and
 * its bytes would define another chain instance.
 */
export function readGenesisFile(file: string): Uint8Array {
  const source = readFileBytes(file);
  let format: unknown;
  try {
    format = (parseJson(source) as { format?: unknown } | null)?.format;
  } catch (err) {
    if (!(err instanceof JsonError)) throw err;
    // Not JSON: the genesis reader says why, where it is used.
  }
  if (format === FIXTURE_FORMAT || format === SCENARIO_FORMAT) {
    const start = format === FIXTURE_FORMAT ? `cbqs node --fixture ${file} starts its chain` : `cbqs fill makes it a fixture for cbqs node --fixture`;
    throw new UsageError(`${file}: a ${format} document, not a genesis file: cbqs genesis ${file} -o genesis.json writes its genesis source; ${start}`);
  }
  return source;
}

export const commands: Readonly<Record<string, CommandSpec>> = {
  genesis: {
    description: "write the exact genesis source bytes of a cbqs-fixture/v1 or cbqs-scenario/v1: the file node --genesis and codec derive chain-instance-id take",
    arguments: [["<file>"]],
    options: () => [outputOption("-o, --output <file>", "output file; - is stdout", "-")],
    exits: exitCodes("written", "(not used)", "unreadable or malformed input (file and JSON path named), an unwritable output"),
    action: (file: string, opts: { output: string }) => {
      const doc = readDocument(file, ["fixture", "scenario"]);
      if (doc.kind !== "fixture" && doc.kind !== "scenario") throw new Error("unreachable");
      const source = doc.kind === "fixture" ? doc.fixture.genesis.source : doc.scenario.sourceBytes;
      writing(new Output(opts.output), (out) => out.write(source));
      process.exitCode = EXIT_OK;
    },
  },

  node: {
    description: "run a local CBQS node: CIP-39 §3 reads, CIP-4 §5.4 proofs, the replication feed and a devnet (docs/node.md)",
    options: () => [
      option("--db <dir>", "store directory (LMDB); a restart continues the stored chain. Without it the chain lives in memory"),
      option("--host <address>", "address to listen on; off loopback only with --expose-devnet", "127.0.0.1"),
      option("--port <n>", "port to listen on (0 = any free port)", "8545"),
      option("--fixture <file>", "import a cbqs-fixture/v1 chain first, verifying every block as cbqs replay does"),
      option("--genesis <file>", "start a fresh chain from this genesis file (its exact bytes define chain_instance_id); without it, --fixture or a stored chain: the devnet genesis (the default genesis config plus --accounts dev accounts, CIP-39 §3)"),
      option("--accounts <n>", `dev accounts dev0… funded in the devnet genesis, 0 to ${MAX_DEV_ACCOUNTS} (0: the default genesis config itself); default ${DEFAULT_DEV_ACCOUNTS}`),
      option("--balance <amount>", `each dev account's balance (nano-CBY, u64); default ${DEFAULT_DEV_BALANCE}`),
      option("--print-genesis", "write the devnet genesis source (--accounts, --balance) to stdout and exit: node --genesis <that file> starts the same chain"),
      option("--mining <mode>", "auto (a block per transaction), interval (a block every --block-time seconds) or manual (only POST /mine); default: interval with --block-time, else manual"),
      option("--block-time <s>", "with --mining interval: produce a block every <s> seconds; 0 = no timer", "0"),
      option("--rate-limit <n>", "global limit, requests per second on all endpoints (CIP-4 §10); 0 = off", String(DEFAULT_RATE_LIMIT)),
      option("--client-rate-limit <n>", `limit per client address on all endpoints, requests per second, checked before the global one; 0 = off. Unset: --rate-limit / ${CLIENT_SHARE} (25 at its default)`),
      option("--proof-rate-limit <n>", "per-client limit on the /proof endpoints, requests per second; 0 = off", String(DEFAULT_PROOF_RATE_LIMIT)),
      option("--retain-blocks <n>", "blocks below the head whose state pinned reads (?block=) can still serve", String(DEFAULT_RETAIN_BLOCKS)),
      option("--max-exclusion-ops <n>", "largest exclusion proof served for an absent key, in operations", String(DEFAULT_MAX_EXCLUSION_OPS)),
      option("--snapshot-interval <n>", SNAPSHOT_INTERVAL_HELP),
      option("--max-subscribers <n>", "open GET /subscribe event streams at most; one more is refused with 503; 0 = no GET /subscribe", String(DEFAULT_MAX_SUBSCRIBERS)),
      option("--http-vhosts <names>", "comma-separated Host names answered to besides IP addresses, localhost and --host; * = any (opens the node to DNS rebinding)"),
      option("--http-corsdomain <origins>", "comma-separated origins (scheme://host[:port]) whose web pages may call the node, CORS included; * = any. Default: none but the node's own page"),
      option("--expose-devnet", "allow a --host off loopback: everyone who reaches it may send transactions, mine, snapshot and revert, and read every answer and the explorer, without authentication"),
      option("--expose-dev-seeds", "with --expose-devnet: serve GET /devnet/accounts (the dev seeds) to clients off loopback too"),
      option("--max-client-subscribers <n>", "open GET /subscribe event streams per client address at most; one more is refused with 429. Unset: --max-subscribers / 4 (256 at its default)"),
      option(
        "--mine-queue <blocks>",
        `blocks of the POST /mine requests waiting or being produced, in all; one more request is refused with 503. A request whose client goes away is dropped (docs/node.md "Mining and time")`,
        String(DEFAULT_MINE_QUEUE),
      ),
      option(
        "--client-mine-queue <blocks>",
        `the same per client address (also the largest ?blocks= taken, at most ${MAX_MINE_BLOCKS}), with at most ${MAX_CLIENT_MINE_REQUESTS} requests; beyond, 429. Unset: --mine-queue / 4 (${DEFAULT_MINE_QUEUE / 4} at its default)`,
      ),
      option("--quiet", "log errors only"),
    ],
    rules: [
      { conflicts: ["--fixture", "--genesis"], message: "--fixture and --genesis are exclusive: a chain has one genesis" },
      ...["--accounts", "--balance"].flatMap((devnet) =>
        ["--fixture", "--genesis"].map((other) => ({ conflicts: [devnet, other], message: "--accounts and --balance shape the devnet genesis: not with --fixture or --genesis, which bring their own" })),
      ),
      ...["--fixture", "--genesis", "--db"].map((other) => ({
        conflicts: ["--print-genesis", other],
        message: "--print-genesis writes the devnet genesis that --accounts and --balance describe: not with --fixture, --genesis or --db (cbqs genesis <fixture> writes a fixture's)",
      })),
      { needs: ["--expose-dev-seeds", "--expose-devnet"], message: "--expose-dev-seeds serves the dev seeds off loopback: only with --expose-devnet" },
    ],
    exits: exitCodes(
      "stopped cleanly by SIGINT/SIGTERM",
      "an imported fixture block does not verify (the replay report)",
      "unusable start: an unreadable or malformed fixture or genesis (file and JSON path named), a bad option, --fixture with --genesis, a port in use, a store in use or of another chain",
      "while a fixture is imported: the blocks committed so far are kept (with --db, a restart continues the import); the node does not start",
    ),
    action: async (opts: NodeOpts) => {
      const devnetSource = devnetGenesisOption(opts);
      if (opts.printGenesis === true) {
        process.stdout.write(Buffer.from(devnetSource));
        process.exitCode = EXIT_OK;
        return;
      }
      const settings = nodeSettings(opts);
      const exposure = exposureOption(opts);
      const retainBlocks = intOption("--retain-blocks", opts.retainBlocks, 1_000_000);
      const start = startOf(opts, devnetSource);
      const log: Logger = opts.quiet ? (e) => e["level"] === "error" && stderrLogger(e) : (e) => e["level"] !== "debug" && stderrLogger(e);
      const db = openStore(opts.db, { retainBlocks, snapshotInterval: snapshotInterval(opts.snapshotInterval) });
      watchSignals();
      let fatal: ((err: Error) => void) | undefined;
      // CIP-39 §3: no genesis file and no stored chain — the canonical bytes of the node's default
      // config, the devnet genesis (D-0133 "The devnet genesis: the default config plus dev accounts").
      const from: NodeStart = start.kind === "store" && db.genesis() === undefined ? { kind: "genesis", source: devnetSource } : start;
      const running = await startNode(db, from, { ...settings, log, onFatal: (err) => fatal?.(err) }, opts);
      if (running === null) return;
      // Once it serves there (a --host it cannot listen on is only the error line).
      if (exposure !== undefined) process.stderr.write(exposure);
      if (opts.quiet !== true) process.stdout.write(devnetBanner(running.node));
      process.stdout.write(`listening on ${running.url}\n`);
      const failure = await serveUntilStopped(running, log, (stop) => (fatal = stop));
      if (failure !== undefined) throw (opts.db === undefined ? undefined : storeUsageError(opts.db, failure)) ?? failure;
      process.exitCode = EXIT_OK;
    },
  },
};

type Running = Awaited<ReturnType<typeof runNode>>;
type NodeSettings = ReturnType<typeof nodeSettings>;

/** The node's settings from its options, each checked. */
function nodeSettings(opts: NodeOpts) {
  const port = intOption("--port", opts.port, 65_535);
  const blockTime = Number(opts.blockTime);
  if (!/^[0-9]+(\.[0-9]+)?$/.test(opts.blockTime) || blockTime > 86_400) throw new UsageError(`--block-time must be seconds from 0 to 86400 (got ${echo(opts.blockTime)})`);
  return {
    host: opts.host,
    port,
    blockTime,
    mining: miningOption(opts.mining, blockTime),
    rateLimit: intOption("--rate-limit", opts.rateLimit, 1_000_000),
    ...(opts.clientRateLimit === undefined ? {} : { clientRateLimit: intOption("--client-rate-limit", opts.clientRateLimit, 1_000_000) }),
    proofRateLimit: intOption("--proof-rate-limit", opts.proofRateLimit, 1_000_000),
    proofLimits: { maxExclusionOps: intOption("--max-exclusion-ops", opts.maxExclusionOps, 1 << 22) },
    maxSubscribers: intOption("--max-subscribers", opts.maxSubscribers, 100_000),
    ...(opts.httpVhosts === undefined ? {} : { vhosts: listOption("--http-vhosts", opts.httpVhosts, VHOST, "a host name (no scheme or port)") }),
    ...(opts.httpCorsdomain === undefined ? {} : { corsOrigins: listOption("--http-corsdomain", opts.httpCorsdomain, ORIGIN, "an origin: scheme://host[:port], no path") }),
    exposeDevSeeds: opts.exposeDevSeeds === true,
    ...(opts.maxClientSubscribers === undefined ? {} : { maxClientSubscribers: positiveOption("--max-client-subscribers", opts.maxClientSubscribers, 100_000) }),
    mineQueue: positiveOption("--mine-queue", opts.mineQueue, 100_000_000),
    ...(opts.clientMineQueue === undefined ? {} : { clientMineQueue: positiveOption("--client-mine-queue", opts.clientMineQueue, 100_000_000) }),
  };
}

/** Why a node cannot listen, for the system errors a user can act on. */
const LISTEN_HINTS: Readonly<Record<string, string>> = {
  EADDRINUSE: "the port is in use (--port 0 picks a free one)",
  EACCES: "not allowed to listen there (ports below 1024 need privileges; --port 0 picks a free one)",
  ENOTFOUND: "--host is not an address of this machine",
  EADDRNOTAVAIL: "--host is not an address of this machine",
};

/**
 * The node started on `db` from `from` (a fixture imported first, every block verified). An
 * imported block that does not verify is printed as replay prints a mismatch, exit 1, and null
 * returned; the store is closed on any failure.
 */
async function startNode(db: ReturnType<typeof openStore>, from: NodeStart, settings: NodeSettings & Omit<Parameters<typeof runNode>[2], keyof NodeSettings>, opts: NodeOpts): Promise<Running | null> {
  try {
    return await runNode(db, from, settings);
  } catch (err) {
    if (err instanceof Stopped) {
      const head = db.head();
      err.kept = head === undefined ? "nothing imported" : opts.db === undefined ? `imported through height ${head.height} in memory, not kept` : `the store ${opts.db} holds every block through height ${head.height}; the node did not start`;
    }
    db.close();
    if (err instanceof ImportMismatch) {
      process.stdout.write(mismatchLines(opts.fixture!, err.mismatch).join("\n") + "\n");
      process.exitCode = EXIT_REJECT;
      return null;
    }
    if (err instanceof NodeInputError) {
      const source = opts.fixture ?? opts.genesis ?? (opts.db === undefined ? "the devnet genesis" : `--db ${opts.db}`);
      throw new UsageError(`${source}: ${err.message}`);
    }
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== undefined && LISTEN_HINTS[code] !== undefined) throw new UsageError(`cannot listen on ${opts.host}:${settings.port}: ${code}: ${LISTEN_HINTS[code]}`);
    throw (opts.db === undefined ? undefined : storeUsageError(opts.db, err)) ?? err;
  }
}

/**
 * Serves until SIGINT/SIGTERM (a clean shutdown) or until the store refuses a block (`onFatal`
 * is handed the stop for that); returns that store failure, if any.
 */
async function serveUntilStopped(running: Running, log: Logger, onFatal: (stop: (err: Error) => void) => void): Promise<Error | undefined> {
  let failure: Error | undefined;
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      log({ level: "info", msg: "stopping", signal, height: running.node.head().height.toString() });
      void running.close().then(resolve);
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
    onFatal((err) => {
      // The store refused a block: its head cannot be read any more (the ChainDb refuses until reopened).
      failure = err;
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      void running.close().then(resolve);
    });
  });
  return failure;
}

/** A bound that must let something through: an integer from 1 to `max`. */
function positiveOption(name: string, text: string, max: number): number {
  if (!/^[0-9]{1,15}$/.test(text) || Number(text) < 1 || Number(text) > max) throw new UsageError(`${name} must be an integer from 1 to ${max} (got ${echo(text)})`);
  return Number(text);
}

/** The devnet genesis --accounts and --balance describe; refused beyond a u64 supply. */
function devnetGenesisOption(opts: NodeOpts): Uint8Array {
  const accounts = opts.accounts === undefined ? DEFAULT_DEV_ACCOUNTS : intOption("--accounts", opts.accounts, MAX_DEV_ACCOUNTS);
  const balance = opts.balance === undefined ? DEFAULT_DEV_BALANCE : decimalOption("--balance", opts.balance);
  const base = Object.values(DEFAULT_GENESIS["accounts"] as Record<string, { balance: string }>).reduce((sum, a) => sum + BigInt(a.balance), 0n);
  if (accounts > 0 && base + BigInt(accounts) * balance > U64_MAX) {
    throw new UsageError(`${accounts} dev accounts of ${balance} with the default accounts' ${base} exceed a u64 total supply (CIP-39 §5); the largest --balance for ${accounts} is ${(U64_MAX - base) / BigInt(accounts)}`);
  }
  return devnetGenesisSource(accounts, balance);
}

const VHOST = /^(\*|[a-z0-9]([a-z0-9.-]*[a-z0-9])?)$/i;
const ORIGIN = /^(\*|null|[a-z][a-z0-9+.-]*:\/\/[^/?#\s]+)$/i;

/** A comma-separated list of --http-vhosts or --http-corsdomain, each entry checked. */
function listOption(name: string, text: string, form: RegExp, what: string): string[] {
  const entries = text.split(",").map((e) => e.trim());
  const bad = entries.find((e) => !form.test(e));
  if (bad !== undefined) throw new UsageError(`${name} takes a comma-separated list, each entry * or ${what} (got ${JSON.stringify(echo(bad))})`);
  return entries;
}

/**
 * A --host off loopback serves the devnet to the network, unauthenticated: refused without
 * --expose-devnet, and with it the warning to print (docs/spec/security-model.md).
 */
function exposureOption(opts: NodeOpts): string | undefined {
  if (isLoopbackHost(opts.host)) return undefined;
  if (opts.exposeDevnet !== true) {
    throw new UsageError(
      `--host ${echo(opts.host)} is reachable from other machines: everyone who reaches it could send transactions, mine and revert without authentication; add --expose-devnet to serve it there`,
    );
  }
  const seeds = opts.exposeDevSeeds === true ? "and the dev seeds (GET /devnet/accounts, --expose-dev-seeds)" : "(the dev seeds, GET /devnet/accounts, stay loopback-only)";
  return `cbqs: warning: --host ${echo(opts.host)} --expose-devnet: anyone who reaches this node may send transactions, mine, snapshot and revert (POST /tx, /mine, /devnet/*) without authentication, and read every answer and the explorer page ${seeds}\n`;
}

function miningOption(text: string | undefined, blockTime: number): MiningMode {
  if (text === undefined) return blockTime > 0 ? "interval" : "manual";
  if (!(MINING_MODES as readonly string[]).includes(text)) throw new UsageError(`--mining must be auto, interval or manual (got ${echo(text)})`);
  const mode = text as MiningMode;
  if (mode === "interval" && blockTime === 0) throw new UsageError("--mining interval needs --block-time <s> above 0: the seconds between blocks");
  if (mode !== "interval" && blockTime > 0) throw new UsageError(`--block-time sets --mining interval's timer: not with --mining ${mode}`);
  return mode;
}

/**
 * What anvil prints at start: the chain and every dev account with its balance (at the head, so
 * a restarted store shows what is left) and its seed. Only for a devnet genesis: a fixture's or a
 * genesis file's accounts have no keys the node knows.
 */
function devnetBanner(node: CbqsNode): string {
  const dev = devnetOf(node.genesis.source, node.config.accounts);
  if (dev === undefined) return "";
  const lines = [
    `cbqs devnet: chain_id ${node.config.chain_id}, chain_instance_id ${toHex(node.chainInstanceId)}, head ${node.head().height}`,
    "",
    "Dev accounts (address, balance in nano-CBY, nonce):",
    ...dev.accounts.map((a) => {
      const { nonce, balance } = node.chain.account(a.address);
      return `(${a.index}) ${a.name} ${toHex(a.address)} ${balance} ${nonce}`;
    }),
    "",
    "Ed25519 seeds (public test keys: never hold value with them):",
    ...dev.accounts.map((a) => `(${a.index}) ${a.name} ${toHex(a.seed)}`),
    "",
    `Mnemonic: ${DEVNET_MNEMONIC}`,
    `Seed i: SHA-256("${DEVNET_SEED_DOMAIN}" + mnemonic + ":" + i); address: the last 20 bytes of keccak256(Ed25519 public key) (docs/node.md "Dev accounts")`,
    "",
  ];
  return lines.join("\n") + "\n";
}

function startOf(opts: NodeOpts, devnetSource: Uint8Array): NodeStart {
  if (opts.fixture !== undefined) {
    return { kind: "fixture", fixture: readFixture(opts.fixture) };
  }
  if (opts.genesis !== undefined) {
    // CIP-39 §3: the bytes are captured once; chain_instance_id and the config both come from them.
    return { kind: "genesis", source: readGenesisFile(opts.genesis) };
  }
  // Given explicitly, --accounts/--balance name a genesis: a store holding another chain is refused, as for --genesis.
  if (opts.accounts !== undefined || opts.balance !== undefined) return { kind: "genesis", source: devnetSource };
  return { kind: "store" };
}
