// `cbqs tx`: one raw CBOR transaction envelope (docs/reference/formats/transaction.md) from a transaction written
// as a scenario writes it — what a broker or SDK author posts to a node's POST /tx. Stream
// references and signed objects with a signer seed resolve as in a scenario, against the chain
// named by --chain-id and --chain-instance, or with --node against that node's chain: its ids,
// the sender's next nonce, and its dev accounts by name; --send posts it, --wait waits for its
// receipt (docs/guides/run-a-devnet.md "cbqs tx --node").
import { setTimeout as sleep } from "node:timers/promises";
import { echo } from "../bounds.js";
import { fromHex, toHex } from "../bytes.js";
import { txHash } from "../chain/envelope.js";
import type { Address } from "../codec/types.js";
import { devAccountIndex } from "../harness/devnet.js";
import { CLIENT_DEFAULTS, ConnectionFailed, MalformedAnswer, NodeError, RequestTimeout } from "../client/index.js";
import { ANSWER_DEADLINE_FACTOR } from "../client/client.js";
// The client's one transport and JSON exchange (strict JSON, bounded answers, 429s waited out):
// `cbqs tx --node` asks for what the typed client has no call for (next_nonce, dev accounts, a
// transaction's status), so it uses the exchange underneath it.
import { requestJson, type RequestPolicy } from "../client/request.js";
import { transactionFromJson } from "../scenario/transaction.js";
import { withJsonArg } from "./codec.js";
import { decimalOption, EXIT_OK, EXIT_REJECT, exitCodes, option, report, UsageError } from "./common.js";
import type { CommandSpec } from "./define.js";

/** --wait's bound by default, and its largest value (seconds). */
export const DEFAULT_WAIT_SECONDS = 30;
const MAX_WAIT_SECONDS = 3_600;
/** Between two looks at GET /tx/{hash} while waiting. */
const POLL_MS = 100;

interface TxOpts {
  chainId?: string;
  chainInstance?: string;
  nonce?: string;
  node?: string;
  send?: boolean;
  wait?: boolean;
  timeout: string;
  json?: boolean;
}

/** Each chain value a transaction is built with: given as an option, or read from the node (--node). */
const CHAIN_VALUES = [
  ["--chain-id", "--chain-id <n>"],
  ["--chain-instance", "--chain-instance <hex>"],
  ["--nonce", "--nonce <n>"],
] as const;

export const commands: Readonly<Record<string, CommandSpec>> = {
  tx: {
    description: "build a raw transaction envelope for a node's POST /tx from one transaction written as in a scenario (docs/scenario-format.md §2); with --node, from that node's chain, and --send/--wait it",
    arguments: [["<json>", 'the transaction, inline or @file.json: {"from": "0x…", and one of "cbqs", "gov", "transfer", "raw"}']],
    options: () => [
      option("--chain-id <n>", "the chain's numeric id (a node's GET /genesis: chain_id); required without --node"),
      option("--chain-instance <hex>", "chain_instance_id, 32 bytes (a node's GET /genesis: chain_instance_id): signs quotes and receipts, derives stream ids; required without --node"),
      option("--nonce <n>", "the sender's next nonce: its account nonce (every included transaction of the sender so far, accepted or rejected), plus its transactions still queued; required without --node, which reads it (GET /account: next_nonce)"),
      option("--node <url>", "take chain_id, chain_instance_id and the sender's next nonce from this node; dev account names (dev0, …) stand for their address, or their seed where a seed goes"),
      option("--send", "with --node: POST the envelope to the node's /tx and print its answer"),
      option("--wait", "with --send: wait for the transaction's block and print GET /tx/{hash} (its receipt)"),
      option("--timeout <s>", "the longest --node request, and the longest --wait, in seconds (1 to 3600)", String(DEFAULT_WAIT_SECONDS)),
      option("--json", "print {envelope, tx_hash} as JSON"),
    ],
    rules: [
      { needs: ["--send", "--node"], message: "--send needs --node <url>: the node to send the transaction to" },
      { needs: ["--wait", "--node"], message: "--wait needs --node <url>: the node to send the transaction to" },
      ...CHAIN_VALUES.map(([flag, usage]) => ({ anyOf: [flag, "--node"] as const, message: `required option '${usage}' not specified (or give --node <url>)` })),
      ...CHAIN_VALUES.slice(0, 2).map(([flag]) => ({ conflicts: [flag, "--node"], message: `${flag} comes from the node with --node: give one or the other` })),
      { needs: ["--wait", "--send"], message: "--wait waits for a transaction --send sent: give --send too" },
      { conflicts: ["--json", "--send"], message: "--json prints the envelope; with --send the node's answer is printed, as JSON already" },
    ],
    exits: exitCodes(
      "the envelope is printed (0x-hex, the body POST /tx takes); with --send the node's answer; with --wait an included transaction whose receipt is ok",
      "with --send: the node refused the transaction (its error printed); with --wait: its receipt is rejected, or it was dropped (left out of a block)",
      "malformed JSON or transaction (its JSON path named), bad options, a node that cannot be reached or answers otherwise than a cbqs node, no block within --timeout",
    ),
    action: async (arg: string, opts: TxOpts) => {
      if (opts.node === undefined) {
        const chainId = decimalOption("--chain-id", opts.chainId!);
        const nonce = decimalOption("--nonce", opts.nonce!);
        const chainInstanceId = fromHex(opts.chainInstance!, 32, "--chain-instance");
        printEnvelope(withJsonArg(arg, (value) => transactionFromJson(value, { chainId, chainInstanceId, nonce })), opts.json === true);
        return;
      }
      const node = nodeOf(opts.node, opts.timeout);
      const envelope = await envelopeFromNode(arg, opts, node);
      if (opts.send !== true) return printEnvelope(envelope, opts.json === true);
      const sent = await send(node, envelope);
      if (sent === null) return;
      if (opts.wait !== true) {
        process.stdout.write(JSON.stringify(sent) + "\n");
        process.exitCode = EXIT_OK;
        return;
      }
      // A manual node mines on POST /mine only: say so now, not after --timeout seconds of silence.
      if (sent["mining"] === "manual") {
        process.stderr.write(`cbqs: queued as ${toHex(txHash(envelope))}; this node mines on POST /mine only (--mining manual): waiting up to ${opts.timeout} s for a block\n`);
      }
      await waitForBlock(node, toHex(txHash(envelope)), opts.timeout);
    },
  },
};

function printEnvelope(envelope: Uint8Array, json: boolean): void {
  report(json, toHex(envelope), { envelope: toHex(envelope), tx_hash: toHex(txHash(envelope)) });
  process.exitCode = EXIT_OK;
}

/** The node of --node: its base URL, the request policy of --timeout, and a read whose refusal is exit 2. */
interface NodeAccess {
  base: string;
  timeoutMs: number;
  policy: RequestPolicy;
  ask: (path: string, what?: string) => Promise<Record<string, unknown>>;
}

function nodeOf(url: string, timeout: string): NodeAccess {
  if (!/^https?:\/\/[^/?#\s]+\/?$/.test(url)) throw new UsageError(`--node must be a node's base URL, http://host:port (got ${echo(url)})`);
  if (!/^[0-9]{1,4}$/.test(timeout) || Number(timeout) < 1 || Number(timeout) > MAX_WAIT_SECONDS) {
    throw new UsageError(`--timeout must be a number of seconds from 1 to ${MAX_WAIT_SECONDS} (got ${echo(timeout)})`);
  }
  const base = url.replace(/\/$/, "");
  const timeoutMs = Number(timeout) * 1000;
  const policy: RequestPolicy = { ...CLIENT_DEFAULTS, timeoutMs, answerDeadlineMs: ANSWER_DEADLINE_FACTOR * timeoutMs, now: () => Date.now() };
  return { base, timeoutMs, policy, ask: (path, what = path) => refusedAs(what, askNode(policy, base, path)) };
}

/** The envelope built with the node's chain_id and chain_instance_id, its dev account names, and the sender's next nonce (unless --nonce). */
async function envelopeFromNode(arg: string, opts: TxOpts, node: NodeAccess): Promise<Uint8Array> {
  const genesis = await node.ask("/genesis");
  const chainId = decimalOption("--node's chain_id", String(genesis["chain_id"]));
  const chainInstanceId = fromHex(String(genesis["chain_instance_id"]), 32, "--node's chain_instance_id");
  const names = await devNames(arg, node.ask);
  const build = (nonce: bigint | ((from: Address) => bigint)) =>
    withJsonArg(arg, (value) => transactionFromJson(names === undefined ? value : withDevAccounts(value, names, "$"), { chainId, chainInstanceId, nonce }));
  if (opts.nonce !== undefined) return build(decimalOption("--nonce", opts.nonce));
  // Built once to check it and learn its sender (no request for a transaction that is refused anyway), then with the nonce.
  let from: Address | undefined;
  build((sender) => ((from = sender), 0n));
  return build(BigInt(String((await node.ask(`/account/${toHex(from!)}`, "/account"))["next_nonce"])));
}

/** POST /tx: the node's answer, or null when it refused the transaction (its error printed, exit 1). */
async function send(node: NodeAccess, envelope: Uint8Array): Promise<Record<string, unknown> | null> {
  try {
    return await askNode(node.policy, node.base, "/tx", toHex(envelope));
  } catch (err) {
    if (!(err instanceof NodeError)) throw err;
    process.stdout.write(JSON.stringify({ error: { code: err.code, message: err.nodeMessage } }) + "\n");
    process.stderr.write(`cbqs: the node refused the transaction: ${errorText(err)}\n`);
    process.exitCode = EXIT_REJECT;
    return null;
  }
}

/** --wait: GET /tx/{hash} until the transaction is included or dropped, printing that answer; a pending one past --timeout is exit 2. */
async function waitForBlock(node: NodeAccess, hash: string, timeout: string): Promise<void> {
  const deadline = performance.now() + node.timeoutMs;
  for (;;) {
    const seen = await node.ask(`/tx/${hash}`, "/tx");
    const status = seen["status"];
    if (status === "included" || status === "dropped") {
      process.stdout.write(JSON.stringify(seen) + "\n");
      const accepted = status === "included" && (seen["receipt"] as { status?: unknown } | undefined)?.status === "ok";
      process.exitCode = accepted ? EXIT_OK : EXIT_REJECT;
      return;
    }
    if (performance.now() >= deadline) {
      throw new UsageError(`${node.base}: transaction ${hash} is still ${String(status)} after ${timeout} s (--timeout ${timeout}); a node with --mining manual produces blocks on POST /mine only`);
    }
    await sleep(POLL_MS);
  }
}

/**
 * One exchange with the node through the client's transport: a GET (retried after a failed
 * connection, as reads are) or, with `body`, POST /tx (never repeated). A node refusing the
 * request is the client's NodeError, left to the caller; the rest is exit 2 naming the node.
 */
async function askNode(policy: RequestPolicy, base: string, path: string, body?: string): Promise<Record<string, unknown>> {
  try {
    return await requestJson(policy, {
      url: base + path,
      idempotent: body === undefined,
      ...(body === undefined ? {} : { method: "POST" as const, body: Buffer.from(body), contentType: "text/plain" }),
    });
  } catch (err) {
    if (err instanceof ConnectionFailed) throw new UsageError(`cannot reach ${base}: ${err.code}`);
    if (err instanceof RequestTimeout) throw new UsageError(err.message);
    if (err instanceof MalformedAnswer) throw new UsageError(`${err.url}: not a cbqs node's answer: ${err.problem}`);
    throw err;
  }
}

function errorText(err: NodeError): string {
  return `${err.status} ${err.code}: ${err.nodeMessage}`;
}

/** A read's answer; the node refusing it is exit 2, its error named. */
async function refusedAs(what: string, answer: Promise<Record<string, unknown>>): Promise<Record<string, unknown>> {
  try {
    return await answer;
  } catch (err) {
    if (err instanceof NodeError) throw new UsageError(`the node refused ${what}: ${errorText(err)}`);
    throw err;
  }
}

interface DevKeys {
  address: string;
  seed: string;
  public_key: string;
}

/** The node's dev accounts by name, when the transaction names one (else no request). */
async function devNames(arg: string, ask: (path: string) => Promise<Record<string, unknown>>): Promise<Map<string, DevKeys> | undefined> {
  let named = false;
  withJsonArg(arg, (value) => {
    named = mentionsDevName(value);
  });
  if (!named) return undefined;
  const accounts = (await ask("/devnet/accounts"))["accounts"] as Array<DevKeys & { name: string }>;
  return new Map(accounts.map((a) => [a.name, a]));
}

function mentionsDevName(v: unknown): boolean {
  if (typeof v === "string") return devAccountIndex(v) !== undefined;
  if (Array.isArray(v)) return v.some(mentionsDevName);
  if (typeof v === "object" && v !== null) return Object.values(v).some(mentionsDevName);
  return false;
}

/** Seed-taking fields (docs/reference/formats/scenario.md §1, §2): a dev name there is the account's seed. */
const SEED_FIELDS = new Set(["signer_seed", "ed25519_seed"]);

/**
 * `value` with every string that is a dev account's name ("dev3") replaced: by its seed under a
 * seed field, its public key under `ed25519`, else its address. Exact strings only: no other
 * field of the format takes a value spelled like that (enum names are capitalised, numbers are
 * digits, bytes are 0x hex), so nothing else can be mistaken for one.
 */
function withDevAccounts(value: unknown, names: ReadonlyMap<string, DevKeys>, path: string, field?: string): unknown {
  if (typeof value === "string") {
    if (devAccountIndex(value) === undefined) return value;
    const dev = names.get(value);
    if (dev === undefined) throw new UsageError(`${path}: ${value} is not a dev account of the node (it has ${names.size}: GET /devnet/accounts)`);
    return field !== undefined && SEED_FIELDS.has(field) ? dev.seed : field === "ed25519" ? dev.public_key : dev.address;
  }
  if (Array.isArray(value)) return value.map((v, i) => withDevAccounts(v, names, `${path}[${i}]`));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withDevAccounts(v, names, `${path}.${k}`, k)]));
  }
  return value;
}
