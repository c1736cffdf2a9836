// The node's answers (docs/guides/run-a-devnet.md) read into the client's types. Top-level members the client
// does not use are ignored, so a node that adds one stays readable; the parts that carry
// consensus data are read strictly: a feed item is a cbqs-fixture/v1 block plus its parent_hash,
// read by the fixture loader itself (src/harness/fixture.ts), and CIP-39 records by the codec.
// Every problem is a MalformedAnswer naming the URL and the JSON path in the answer.
import { loadReceiptJson, type TxReceipt } from "../chain/receipts.js";
import type { Codec } from "../codec/core.js";
import { DecodeError, EncodeError, JsonValueError } from "../codec/errors.js";
import * as S from "../codec/schema.js";
import { loadBlock, type FixtureBlock } from "../harness/fixture.js";
import { array, count, decimal, hex, object, string } from "../json/fields.js";
import { childPath, JsonError } from "../json/parse.js";
import { MalformedAnswer } from "./errors.js";
import type { Block, BrokerState, FeedPage, Genesis, Mined, ReadPoint, Receipt, Sent } from "./types.js";

type Obj = Record<string, unknown>;

/** The node's maximum page size (docs/guides/run-a-devnet.md "Replication feed"). */
export const MAX_PAGE_ITEMS = 100;

/** Runs `read`, turning a JSON reader's or the codec's complaint into a MalformedAnswer naming `url`. */
export function reading<T>(url: string, read: () => T, prefix = ""): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof JsonError || err instanceof JsonValueError || err instanceof DecodeError || err instanceof EncodeError) {
      throw new MalformedAnswer(url, prefix + err.message);
    }
    throw err;
  }
}

/** A member that must be a JSON object. */
export function member(o: Obj, name: string, path = "$"): Obj {
  const v = o[name];
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new JsonError(childPath(path, name), "expected a JSON object");
  return v as Obj;
}

const b32 = (o: Obj, name: string, path = "$") => hex(o[name], childPath(path, name), 32);
const u64 = (o: Obj, name: string, path = "$") => decimal(o[name], childPath(path, name));

export function readPoint(o: Obj, path = "$"): ReadPoint {
  return { height: u64(o, "height", path), blockHash: b32(o, "block_hash", path), stateRoot: b32(o, "state_root", path) };
}

function codecValue<T>(codec: Codec<T>, v: unknown, path: string): T {
  return codec.fromJson(v, path, {});
}

export const finalizedViewOf = (v: unknown, path: string) => codecValue(S.FinalizedViewV1, v, path);

/** GET /genesis, as served (verify.ts checks it). */
export function genesisAnswer(url: string, body: Obj): Genesis {
  return reading(url, () => {
    const start = member(body, "history_start");
    return {
      ...readPoint(body),
      chainId: u64(body, "chain_id"),
      chainInstanceId: b32(body, "chain_instance_id"),
      timestamp: u64(body, "timestamp"),
      source: hex(body["source"], "$.source"),
      view: finalizedViewOf(body["view"], "$.view"),
      historyStart: { height: u64(start, "height", "$.history_start"), blockHash: b32(start, "block_hash", "$.history_start") },
    };
  });
}

export function receiptOf(r: TxReceipt): Receipt {
  return { txHash: r.tx_hash, status: r.status, error: r.error, events: r.events, cycles: r.cycles, cells: r.cells };
}

export function blockOf(b: FixtureBlock, parentHash: Uint8Array): Block {
  return {
    height: b.height,
    timestamp: b.timestamp,
    parentHash,
    blockHash: b.block_hash,
    stateRoot: b.state_root,
    txRoot: b.tx_root,
    receiptRoot: b.receipt_root,
    logsRoot: b.logs_root,
    effectiveRentHeight: b.effective_rent_height,
    gasVectorsSha256: b.gas_vectors_sha256,
    transactions: b.transactions,
    receipts: b.receipts.map(receiptOf),
  };
}

const DECIMAL = /^[0-9]{1,20}$/;

/**
 * GET /replication: the page and its items, each read strictly by the fixture loader (an
 * unknown field is refused). An item's problem is prefixed with the height it claims, so a
 * message says which block was malformed even when the height itself is what is wrong.
 */
export function feedPageAnswer(url: string, body: Obj, order: "asc" | "desc"): FeedPage {
  const items = body["items"];
  if (!Array.isArray(items) || items.length > MAX_PAGE_ITEMS) throw new MalformedAnswer(url, `"items" is not an array of at most ${MAX_PAGE_ITEMS} blocks`);
  const claimed = (j: number): string => {
    const h = (items[j] as { height?: unknown } | undefined)?.height;
    return typeof h === "string" && DECIMAL.test(h) ? `block ${h}` : j === 0 ? "the page's first block" : `the block after ${claimed(j - 1)}`;
  };
  const blocks = items.map((item, j) =>
    reading(
      url,
      () => {
        const path = `$.items[${j}]`;
        if (typeof item !== "object" || item === null || Array.isArray(item)) throw new JsonError(path, "not an object");
        const { parent_hash, ...rest } = item as Obj;
        const parent = hex(parent_hash, `${path}.parent_hash`, 32);
        return blockOf(loadBlock(rest, path), parent);
      },
      `${claimed(j)}: `,
    ),
  );
  blocks.forEach((b, j) => {
    const before = blocks[j - 1];
    if (before !== undefined && (order === "asc" ? b.height <= before.height : b.height >= before.height)) {
      throw new MalformedAnswer(url, `block ${b.height}: $.items[${j}].height: heights must strictly ${order === "asc" ? "increase" : "decrease"} (previous ${before.height})`);
    }
  });
  return reading(url, () => ({ url, ...readPoint(body), items: blocks, prev: cursor(body, "prev"), next: cursor(body, "next") }));
}

function cursor(o: Obj, name: string): bigint | null {
  const v = o[name];
  return v === null ? null : decimal(v, `$.${name}`);
}

/** GET /cbqs/broker-state. */
export function brokerStateAnswer(url: string, body: Obj): BrokerState {
  return reading(url, () => {
    const schedule = member(body, "schedule");
    const boundsJson = member(body, "bounds");
    const bounds: Record<string, bigint> = {};
    for (const name of Object.keys(boundsJson)) bounds[name] = decimal(boundsJson[name], childPath("$.bounds", name));
    const linked = (name: string) => (body[name] === undefined ? undefined : codecValue(S.StreamRecordV1, body[name], `$.${name}`));
    const keyStream = linked("key_stream");
    const mainStream = linked("main_stream");
    return {
      ...readPoint(body),
      view: finalizedViewOf(body["view"], "$.view"),
      stream: codecValue(S.StreamRecordV1, body["stream"], "$.stream"),
      ...(keyStream === undefined ? {} : { keyStream }),
      ...(mainStream === undefined ? {} : { mainStream }),
      provider: body["provider"] === null ? null : codecValue(S.ProviderRecordV1, body["provider"], "$.provider"),
      schedule: { active: codecValue(S.BaseRateScheduleV1, schedule["active"], "$.schedule.active"), scheduleDigest: b32(schedule, "schedule_digest", "$.schedule") },
      bounds,
      effectiveRentHeight: u64(body, "effective_rent_height"),
    };
  });
}

/** POST /tx. */
export function sentAnswer(url: string, body: Obj): Sent {
  return reading(url, () => {
    return { txHash: b32(body, "tx_hash"), nonce: u64(body, "nonce"), pending: count(body["pending"], "$.pending"), height: u64(body, "height") };
  });
}

/** POST /mine: receipts carry a rejection's message, which no committed receipt has. */
export function minedAnswer(url: string, body: Obj): Mined {
  return reading(url, () => {
    const receipts = array(body["receipts"], "$.receipts", Number.MAX_SAFE_INTEGER).map((raw, i) => {
      const path = `$.receipts[${i}]`;
      const r = object(raw, path, ["tx_hash", "status", "error", "events", "cycles", "cells"]);
      let message: string | undefined;
      let error: unknown = r["error"];
      if (typeof error === "object" && error !== null && !Array.isArray(error) && "message" in error) {
        const { message: m, ...rest } = error as Obj;
        message = string(m, `${path}.error.message`);
        error = rest;
      }
      const receipt = receiptOf(loadReceiptJson({ ...r, error }, path).receipt);
      return message === undefined ? receipt : { ...receipt, message };
    });
    const dropped = array(body["dropped"], "$.dropped", Number.MAX_SAFE_INTEGER).map((raw, i) => {
      const d = object(raw, `$.dropped[${i}]`, ["tx_hash", "reason"]);
      return { txHash: hex(d["tx_hash"], `$.dropped[${i}].tx_hash`, 32), reason: string(d["reason"], `$.dropped[${i}].reason`) };
    });
    return { ...readPoint(body), timestamp: u64(body, "timestamp"), effectiveRentHeight: u64(body, "effective_rent_height"), receipts, dropped };
  });
}

