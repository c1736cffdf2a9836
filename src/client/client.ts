// The typed client of `cbqs node` (docs/guides/run-a-devnet.md; docs/guides/use-the-library.md "cbqs-emulator/client"). Every
// method is one endpoint, except where a check needs more: a proof's root is tied to the header
// of the block its answer names, which costs one feed request for that block. The chain the
// client first reads (its genesis, checked) is the one every later header is checked against.
import { MAX_ANSWER_BYTES, MAX_PROOF_KEYS } from "../bounds.js";
import { bytesEqual, toHex } from "../bytes.js";
import { txHash as envelopeHash } from "../chain/envelope.js";
import { scheduleDigest } from "../codec/derive.js";
import { accountKey, actorKey, actorStorageKey, STATE_KEY_LENGTH } from "../../state/kv/keys.js";
import { decodeStateValueAs, StateValueError, type StateValue } from "../../state/kv/value.js";
import { brokerStateAnswer, feedPageAnswer, finalizedViewOf, genesisAnswer, minedAnswer, readPoint, reading, sentAnswer } from "./answers.js";
import { InvalidArgument, MalformedAnswer, NotFound, ProofInvalid, WaitTimeout } from "./errors.js";
import { verifiedFeed } from "./feed.js";
import { bytesArg, heightArg, intArg, optionalHeight } from "./inputs.js";
import { requestJson, sleep, type JsonRequest, type RequestPolicy } from "./request.js";
import type {
  Block,
  BrokerState,
  BytesLike,
  FeedPage,
  FeedQuery,
  FinalizedView,
  Genesis,
  HeightLike,
  Mined,
  ReadPoint,
  Sent,
  VerifiedAccountProof,
  VerifiedMultiProof,
  VerifiedReceiptProof,
  VerifiedStateProof,
  VerifiedStorageProof,
  VerifiedTxProof,
} from "./types.js";
import { checkView, tieToHeader, verifyBlock, verifyGenesis, verifyMultiAnswer, verifyReceiptAnswer, verifyStateAnswer, verifyTxAnswer } from "./verify.js";

export interface ClientOptions {
  /** A request is given up when nothing arrives from the node for this long (connecting, the headers, or between two chunks of the body). Default 30,000. */
  timeoutMs?: number;
  /** Retries of a request answered 429, each after the Retry-After the node sent (1 s when it sent none). Default 5. */
  maxRetries?: number;
  /** The most one request waits in all for 429 retries: a retry that would exceed it is not made. Default 30,000. */
  maxRetryWaitMs?: number;
  /** Retries of a read whose connection failed (refused, reset), after 250 ms, then 500 ms, …; sends (POST /tx, /mine) are never repeated. Default 2. */
  connectRetries?: number;
  /** The whole answer of one request, from sending it to its last byte, however steadily it arrives (a node that drips it). Default 4 × timeoutMs. */
  answerDeadlineMs?: number;
  /** The largest answer read, in bytes (it is held whole, then parsed with at most one value per 16 bytes). Default 64 MiB. */
  maxAnswerBytes?: number;
  /** Ends every request and wait of this client at once (RequestAborted). */
  signal?: AbortSignal;
}

/** answerDeadlineMs, unless given: this many times timeoutMs. */
export const ANSWER_DEADLINE_FACTOR = 4;

export const CLIENT_DEFAULTS = { timeoutMs: 30_000, maxRetries: 5, maxRetryWaitMs: 30_000, connectRetries: 2, maxAnswerBytes: MAX_ANSWER_BYTES } as const;

export interface WaitOptions {
  /** Give up (WaitTimeout) after this long. Default 30,000. */
  timeoutMs?: number;
  /** Between two looks. Default 500. */
  pollMs?: number;
}

export interface Client {
  /** The node's base URL. */
  readonly url: string;
  genesis(): Promise<Genesis>;
  finalized(options?: { block?: BytesLike }): Promise<FinalizedView>;
  brokerState(params: { stream: BytesLike }, options?: { height?: HeightLike; block?: BytesLike }): Promise<BrokerState>;
  block(height: HeightLike): Promise<Block>;
  accountProof(address: BytesLike): Promise<VerifiedAccountProof>;
  actorProof(address: BytesLike): Promise<VerifiedStateProof>;
  storageProof(address: BytesLike, key: BytesLike): Promise<VerifiedStorageProof>;
  multiProof(keys: readonly BytesLike[]): Promise<VerifiedMultiProof>;
  txProof(txHash: BytesLike): Promise<VerifiedTxProof>;
  receiptProof(txHash: BytesLike): Promise<VerifiedReceiptProof>;
  feed(options?: { since?: HeightLike; until?: HeightLike; pageSize?: number }): AsyncGenerator<Block, void, undefined>;
  feedPage(query?: FeedQuery): Promise<FeedPage>;
  send(envelope: BytesLike): Promise<Sent>;
  waitForReceipt(txHash: BytesLike, options?: WaitOptions): Promise<VerifiedReceiptProof>;
  mine(options?: { height?: HeightLike }): Promise<Mined>;
}

/** A client of the `cbqs node` at `url` (http or https, any port). */
export function createClient(url: string, options: ClientOptions = {}): Client {
  return new NodeClient(baseUrl(url), options);
}

function baseUrl(text: unknown): string {
  let url: URL | undefined;
  try {
    url = typeof text === "string" ? new URL(text) : undefined;
  } catch {
    url = undefined;
  }
  const shown = String(text).slice(0, 200);
  if (url === undefined || (url.protocol !== "http:" && url.protocol !== "https:") || url.hostname === "") {
    throw new InvalidArgument(`the node URL must be an http(s) URL (got ${shown})`, shown);
  }
  if (url.port === "0") throw new InvalidArgument(`the node URL must name a port from 1 to 65535 (got ${shown})`, shown);
  if (url.search !== "" || url.hash !== "") throw new InvalidArgument(`the node URL takes no query or fragment (got ${shown})`, shown);
  return (text as string).replace(/\/+$/, "");
}

/** A stream as broker-state takes it: a 32-byte id, or a stream-key form the node derives ("owner:0x…/nonce:1"). */
function streamParam(base: string, stream: unknown): string {
  if (typeof stream === "string" && !stream.startsWith("0x")) {
    if (stream === "") throw new InvalidArgument("stream must not be empty", base);
    return stream;
  }
  return toHex(bytesArg(base, stream, "stream", 32));
}

class NodeClient implements Client {
  private readonly policy: RequestPolicy;
  private pinned: Promise<Genesis> | undefined;

  constructor(
    readonly url: string,
    options: ClientOptions,
  ) {
    const timeoutMs = intArg(url, options.timeoutMs, "timeoutMs", CLIENT_DEFAULTS.timeoutMs, 1);
    this.policy = {
      timeoutMs,
      answerDeadlineMs: intArg(url, options.answerDeadlineMs, "answerDeadlineMs", ANSWER_DEADLINE_FACTOR * timeoutMs, 1),
      maxRetries: intArg(url, options.maxRetries, "maxRetries", CLIENT_DEFAULTS.maxRetries, 0, 1_000),
      maxRetryWaitMs: intArg(url, options.maxRetryWaitMs, "maxRetryWaitMs", CLIENT_DEFAULTS.maxRetryWaitMs),
      connectRetries: intArg(url, options.connectRetries, "connectRetries", CLIENT_DEFAULTS.connectRetries, 0, 100),
      maxAnswerBytes: intArg(url, options.maxAnswerBytes, "maxAnswerBytes", CLIENT_DEFAULTS.maxAnswerBytes, 1, Number.MAX_SAFE_INTEGER),
      signal: options.signal,
      now: () => Date.now(),
    };
  }

  private call(path: string, init: Omit<JsonRequest, "url" | "idempotent"> & { idempotent?: boolean } = {}) {
    const url = this.url + path;
    return requestJson(this.policy, { idempotent: true, ...init, url }).then((body) => ({ url, body }));
  }

  async genesis(): Promise<Genesis> {
    const { url, body } = await this.call("/genesis");
    const g = genesisAnswer(url, body);
    verifyGenesis(url, g);
    return g;
  }

  /** The chain this client checks headers against: the first genesis it read (a failed read is tried again next time). */
  private chain(): Promise<Genesis> {
    this.pinned ??= this.genesis().catch((err: unknown) => {
      this.pinned = undefined;
      throw err;
    });
    return this.pinned;
  }

  async finalized(options: { block?: BytesLike } = {}): Promise<FinalizedView> {
    const block = options.block === undefined ? "" : `?block=${toHex(bytesArg(this.url, options.block, "block", 32))}`;
    const { url, body } = await this.call(`/cbqs/finalized-view${block}`);
    const answer = reading(url, () => ({ ...readPoint(body), view: finalizedViewOf(body["view"], "$.view") }));
    checkView(url, answer.view, (await this.chain()).chainInstanceId, answer);
    return answer;
  }

  async brokerState(params: { stream: BytesLike }, options: { height?: HeightLike; block?: BytesLike } = {}): Promise<BrokerState> {
    const stream = streamParam(this.url, params?.stream);
    if (options.height !== undefined && options.block !== undefined) throw new InvalidArgument("brokerState pins by height or by block hash, not both", this.url);
    let pin: ReadPoint | undefined;
    let block: Uint8Array | undefined;
    if (options.height !== undefined) {
      pin = await this.header(heightArg(this.url, options.height, "height"));
      block = pin.blockHash;
    } else if (options.block !== undefined) {
      block = bytesArg(this.url, options.block, "block", 32);
    }
    const query = `?stream=${encodeURIComponent(stream)}${block === undefined ? "" : `&block=${toHex(block)}`}`;
    const { url, body } = await this.call(`/cbqs/broker-state${query}`);
    const answer = brokerStateAnswer(url, body);
    checkView(url, answer.view, (await this.chain()).chainInstanceId, answer);
    if (pin !== undefined) tieToHeader(url, answer, pin);
    else if (block !== undefined && !bytesEqual(answer.blockHash, block)) {
      throw new ProofInvalid(url, "block_hash", `the answer is read at ${toHex(answer.blockHash)}, not the pinned block ${toHex(block)}`, answer.height, toHex(block), toHex(answer.blockHash));
    }
    const digest = scheduleDigest(answer.schedule.active);
    if (!bytesEqual(digest, answer.schedule.scheduleDigest)) {
      throw new ProofInvalid(url, "schedule_digest", `the active schedule's digest is ${toHex(digest)}, the answer says ${toHex(answer.schedule.scheduleDigest)}`, answer.height);
    }
    return answer;
  }

  async feedPage(query: FeedQuery = {}): Promise<FeedPage> {
    const since = optionalHeight(this.url, query.since, "since");
    const until = optionalHeight(this.url, query.until, "until");
    const limit = optionalHeight(this.url, query.limit, "limit");
    const order = query.order ?? "asc";
    if (order !== "asc" && order !== "desc") throw new InvalidArgument(`order must be "asc" or "desc" (got ${String(order)})`, this.url);
    // The follower's page URLs (and its messages) name since, limit and until in this order.
    const parts = [
      ...(since === undefined ? [] : [`since=${since}`]),
      ...(limit === undefined ? [] : [`limit=${limit}`]),
      ...(until === undefined ? [] : [`until=${until}`]),
      ...(query.order === undefined ? [] : [`order=${order}`]),
    ];
    const { url, body } = await this.call(`/replication${parts.length === 0 ? "" : `?${parts.join("&")}`}`);
    return feedPageAnswer(url, body, order);
  }

  async block(height: HeightLike): Promise<Block> {
    const h = heightArg(this.url, height, "height");
    if (h === 0n) throw new InvalidArgument("height 0 is genesis, which is not a feed block: use genesis()", this.url);
    const page = await this.feedPage({ since: h, limit: 1, until: h });
    const block = page.items[0];
    if (block === undefined) throw new NotFound(page.url, 404, "block_not_found", `no block at height ${h} (the node's head is ${page.height})`);
    if (block.height !== h) throw new ProofInvalid(page.url, "height", `the node answered block ${block.height} for height ${h}`, h);
    verifyBlock(page.url, block, (await this.chain()).chainInstanceId);
    return block;
  }

  /** The header at `height`, checked: genesis, or the verified block. */
  private async header(height: bigint): Promise<ReadPoint> {
    return height === 0n ? this.chain() : this.block(height);
  }

  private async stateProof(path: string, key: Uint8Array): Promise<VerifiedStateProof> {
    const { url, body } = await this.call(path);
    const proof = verifyStateAnswer(url, body, key);
    tieToHeader(url, proof, await this.header(proof.height));
    return proof;
  }

  private address(value: BytesLike): Uint8Array {
    return bytesArg(this.url, value, "address", 20);
  }

  async accountProof(address: BytesLike): Promise<VerifiedAccountProof> {
    const a = this.address(address);
    const proof = await this.stateProof(`/proof/account/${toHex(a)}`, accountKey(a));
    const account = proof.value === null ? null : this.value(proof, "Account");
    return { ...proof, account: account === null ? null : { nonce: account.nonce, balance: account.balance } };
  }

  actorProof(address: BytesLike): Promise<VerifiedStateProof> {
    const a = this.address(address);
    return this.stateProof(`/proof/actor/${toHex(a)}`, actorKey(a));
  }

  async storageProof(address: BytesLike, key: BytesLike): Promise<VerifiedStorageProof> {
    const a = this.address(address);
    const userKey = bytesArg(this.url, key, "key");
    const proof = await this.stateProof(`/proof/storage/${toHex(a)}/${toHex(userKey)}`, actorStorageKey(a, userKey));
    return { ...proof, data: proof.value === null ? null : this.value(proof, "StorageSlot").bytes };
  }

  /** The proven value as the state value its key holds (an account under 0x01, a slot under 0x03). */
  private value<K extends "Account" | "StorageSlot">(proof: VerifiedStateProof, kind: K): Extract<StateValue, { kind: K }> {
    try {
      return decodeStateValueAs(proof.value!, kind);
    } catch (err) {
      if (err instanceof StateValueError) throw new MalformedAnswer(this.url, `the proven value of ${toHex(proof.key)} is not a ${kind}: ${err.message}`);
      throw err;
    }
  }

  async multiProof(keys: readonly BytesLike[]): Promise<VerifiedMultiProof> {
    if (!Array.isArray(keys) || keys.length === 0 || keys.length > MAX_PROOF_KEYS) {
      throw new InvalidArgument(`keys must be an array of 1 to ${MAX_PROOF_KEYS} state keys`, this.url);
    }
    const parsed = keys.map((k, i) => bytesArg(this.url, k, `keys[${i}]`, STATE_KEY_LENGTH));
    const body = new TextEncoder().encode(JSON.stringify({ keys: parsed.map(toHex) }));
    const { url, body: answer } = await this.call("/proof/multi", { method: "POST", body, contentType: "application/json" });
    const proof = verifyMultiAnswer(url, answer, parsed);
    tieToHeader(url, proof, await this.header(proof.height));
    return proof;
  }

  /** The verified block an inclusion answer names, tied to the answer's read point. */
  private inclusionHeader(url: string) {
    return async (at: ReadPoint): Promise<Block> => {
      const block = await this.block(at.height);
      tieToHeader(url, at, block);
      return block;
    };
  }

  async txProof(txHash: BytesLike): Promise<VerifiedTxProof> {
    const hash = bytesArg(this.url, txHash, "txHash", 32);
    const { url, body } = await this.call(`/proof/tx/${toHex(hash)}`);
    return verifyTxAnswer(url, body, hash, this.inclusionHeader(url));
  }

  async receiptProof(txHash: BytesLike): Promise<VerifiedReceiptProof> {
    const hash = bytesArg(this.url, txHash, "txHash", 32);
    const { url, body } = await this.call(`/proof/receipt/${toHex(hash)}`);
    return verifyReceiptAnswer(url, body, hash, this.inclusionHeader(url));
  }

  feed(options: { since?: HeightLike; until?: HeightLike; pageSize?: number } = {}): AsyncGenerator<Block, void, undefined> {
    const since = heightArg(this.url, options.since ?? 1n, "since");
    const until = optionalHeight(this.url, options.until, "until");
    const pageSize = intArg(this.url, options.pageSize, "pageSize", 100, 1, 100);
    return verifiedFeed({ chain: () => this.chain(), feedPage: (q) => this.feedPage(q), block: (h) => this.block(h) }, since, until, pageSize);
  }

  async send(envelope: BytesLike): Promise<Sent> {
    const raw = bytesArg(this.url, envelope, "envelope");
    const { url, body } = await this.call("/tx", { method: "POST", body: raw, contentType: "application/cbor", idempotent: false });
    const sent = sentAnswer(url, body);
    const hash = envelopeHash(raw);
    if (!bytesEqual(hash, sent.txHash)) throw new ProofInvalid(url, "tx_hash", `the envelope hashes to ${toHex(hash)}, the node names ${toHex(sent.txHash)}`, undefined, toHex(hash), toHex(sent.txHash));
    return sent;
  }

  /**
   * Polls GET /proof/receipt/{tx_hash} — the node's one per-transaction read — until the
   * transaction is included: the receipt comes back verified, with its inclusion proof.
   */
  async waitForReceipt(txHash: BytesLike, options: WaitOptions = {}): Promise<VerifiedReceiptProof> {
    const hash = bytesArg(this.url, txHash, "txHash", 32);
    const timeoutMs = intArg(this.url, options.timeoutMs, "timeoutMs", 30_000);
    const pollMs = intArg(this.url, options.pollMs, "pollMs", 500, 1);
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      try {
        return await this.receiptProof(hash);
      } catch (err) {
        if (!(err instanceof NotFound && err.code === "tx_not_found")) throw err;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new WaitTimeout(this.url, toHex(hash), timeoutMs);
      await sleep(Math.min(pollMs, left), this.policy.signal, this.url);
    }
  }

  async mine(options: { height?: HeightLike } = {}): Promise<Mined> {
    const height = optionalHeight(this.url, options.height, "height");
    const { url, body } = await this.call(`/mine${height === undefined ? "" : `?height=${height}`}`, { method: "POST", idempotent: false });
    return minedAnswer(url, body);
  }
}
