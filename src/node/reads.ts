// CIP-39 §3 reads. The node exposes the finalized chain instance, height and block hash in one
// read (FinalizedViewV1), and one ATOMICALLY CONSTRUCTED broker-state response holding the
// StreamRecord, ProviderRecord, active schedule (§4.5 active_at and digest), protocol bounds (the
// §18.1 live scalars) and effective_rent_height (Denial of service) — every part read from the
// same block's state with no await in between. `?block=<hash>` pins a read to a retained block;
// one the node can no longer serve is refused (410 block_not_retained), never answered from newer
// state. Every committed block is final on this single-producer chain.
import { fromHex, HexError, toHex } from "../bytes.js";
import { decode, toJson } from "../codec/core.js";
import { scheduleDigest } from "../codec/derive.js";
import { activeScheduleAt } from "../codec/schedule.js";
import * as S from "../codec/schema.js";
import type { Address, StreamRecordV1 } from "../codec/types.js";
import { decodeScalar } from "../engine/context.js";
import { readPauseRecord } from "../engine/governance.js";
import { providerKey, REGISTRY_ADDRESS, schedulesKey, streamKey, paramKey } from "../engine/layout.js";
import { effectiveRentHeight } from "../engine/pause.js";
import { LIVE_SCALARS } from "../params.js";
import type { BlockRecord, ChainDb, StateReader } from "../../state/chain-db/chain-db.js";
import { decodeStateValueAs } from "../../state/kv/value.js";
import { badRequest, notFound, RequestError } from "./errors.js";
import { finalizedViewJson, JsonText, readPointJson } from "./json.js";

/** A committed block and its state: what one answer is read at. */
export interface ReadPoint {
  block: BlockRecord;
  state: StateReader;
}

export function parseHash(text: string, what: string, length = 32): Uint8Array {
  if (text.length !== 2 + 2 * length) throw badRequest(`invalid_${what}`, `${what} must be 0x-prefixed ${length}-byte hex`);
  try {
    return fromHex(text, length, what);
  } catch (err) {
    if (err instanceof HexError) throw badRequest(`invalid_${what}`, `${what} must be 0x-prefixed ${length}-byte hex`);
    throw err;
  }
}

/** The block named by `?block=<hash>` (any committed block), or the head. */
export function blockAt(db: ChainDb, blockParam: string | undefined): BlockRecord {
  if (blockParam === undefined) return db.head()!;
  const block = db.blockByHash(parseHash(blockParam, "block"));
  if (block === undefined) throw notFound("block_not_found", `no committed block has hash ${blockParam}`);
  return block;
}

/** The block and its state; a pinned block whose state is no longer retained is refused. */
export function readPointAt(db: ChainDb, blockParam: string | undefined): ReadPoint {
  return stateOf(db, blockAt(db, blockParam));
}

/** The state of `block`, or 410 when it is below the retained window (docs/guides/run-a-devnet.md "Pinned reads"). */
export function stateOf(db: ChainDb, block: BlockRecord): ReadPoint {
  const state = db.stateAt(block.height);
  if (state === undefined) {
    const head = db.head()!;
    throw new RequestError(
      410,
      "block_not_retained",
      `block ${block.height} is below the retained window (the head ${head.height} and the ${db.retainBlocks} blocks before it): its state can no longer be served`,
      readPointJson(head),
    );
  }
  return { block, state };
}

export function finalizedView(db: ChainDb, chainInstanceId: Uint8Array, blockParam: string | undefined): Record<string, unknown> {
  const block = blockAt(db, blockParam);
  return { ...readPointJson(block), view: finalizedViewJson(chainInstanceId, block) };
}

function slot(state: StateReader, key: Uint8Array): Uint8Array | undefined {
  const bytes = state.read(key);
  return bytes === undefined ? undefined : decodeStateValueAs(bytes, "StorageSlot").bytes;
}

function streamAt(state: StateReader, id: Uint8Array): StreamRecordV1 | null {
  const bytes = slot(state, streamKey(id));
  return bytes === undefined ? null : decode(S.StreamRecordV1, bytes);
}

/** The governance scalars a broker decision reads, by name (§18.1 order). */
function boundsAt(state: StateReader): Record<string, string> {
  const bounds: Record<string, string> = {};
  for (const name of LIVE_SCALARS) bounds[name] = decodeScalar(state.read(paramKey(name)), name).toString();
  return bounds;
}

/** The parts of a broker-state answer that depend on the block only, not on the stream. */
interface BlockParts {
  view: Record<string, string>;
  schedule: Record<string, unknown>;
  bounds: Record<string, string>;
  effective_rent_height: string;
}

/** A map that forgets its oldest entry beyond `size`. */
class Recent<V> {
  private readonly entries = new Map<string, V>();
  constructor(private readonly size: number) {}
  get(key: string, make: () => V): V {
    let v = this.entries.get(key);
    if (v === undefined) {
      v = make();
      if (this.entries.size >= this.size) this.entries.delete(this.entries.keys().next().value!);
      this.entries.set(key, v);
    }
    return v;
  }
}

/**
 * Broker-state answers by (block hash, stream id), and the block-level parts by block hash. A
 * committed block's state never changes, so a kept entry is exact; the pinned-read retention
 * check runs before any lookup, so a cached answer is never served for a block no longer retained.
 */
export class BrokerStateCache {
  readonly parts = new Recent<BlockParts>(16);
  readonly answers = new Recent<JsonText>(1_024);
}

function blockParts({ block, state }: ReadPoint, chainInstanceId: Uint8Array, governance: Address): BlockParts {
  const schedulesBytes = slot(state, schedulesKey());
  if (schedulesBytes === undefined) throw new Error(`the base-rate schedule record is missing at height ${block.height}`);
  // §4.5: the active schedule at H is active_at(H), never `active` read unconditionally.
  const schedule = activeScheduleAt(decode(S.BaseRateSchedulesV1, schedulesBytes), block.height);
  const pause = readPauseRecord((k) => state.read(k), governance, REGISTRY_ADDRESS);
  return {
    view: finalizedViewJson(chainInstanceId, block),
    schedule: { active: toJson(S.BaseRateScheduleV1, schedule), schedule_digest: toHex(scheduleDigest(schedule)) },
    bounds: boundsAt(state),
    effective_rent_height: effectiveRentHeight(pause, block.height).toString(),
  };
}

/**
 * GET /cbqs/broker-state: one broker decision's inputs from ONE block. Synchronous from the first
 * read to the last: nothing else runs in between, so block production cannot tear it.
 */
export function brokerState(
  db: ChainDb,
  chainInstanceId: Uint8Array,
  governance: Address,
  streamParam: string | undefined,
  blockParam: string | undefined,
  cache: BrokerStateCache = new BrokerStateCache(),
): JsonText {
  if (streamParam === undefined) throw badRequest("missing_stream", "broker-state needs ?stream=<0x 32-byte stream id>");
  const id = parseHash(streamParam, "stream");
  const point = readPointAt(db, blockParam);
  const blockKey = toHex(point.block.block_hash);
  return cache.answers.get(`${blockKey}/${toHex(id)}`, () => {
    const parts = cache.parts.get(blockKey, () => blockParts(point, chainInstanceId, governance));
    return new JsonText(JSON.stringify(brokerStateAt(point, id, streamParam, parts)));
  });
}

/**
 * The broker-state answer of stream `id` at the block `blockParam` names, or null when no such
 * stream exists there: the read of a fixture replayed in process (src/broker-kit/chain-source.ts),
 * which treats an absent stream as a value, not as the 404 the route answers.
 */
export function brokerStateOrNull(db: ChainDb, chainInstanceId: Uint8Array, governance: Address, id: Uint8Array, blockParam: string): Record<string, unknown> | null {
  const point = readPointAt(db, blockParam);
  if (streamAt(point.state, id) === null) return null;
  return brokerStateAt(point, id, toHex(id), blockParts(point, chainInstanceId, governance));
}

function brokerStateAt({ block, state }: ReadPoint, id: Uint8Array, streamParam: string, parts: BlockParts): Record<string, unknown> {
  const at = readPointJson(block);
  const stream = streamAt(state, id);
  if (stream === null) throw notFound("stream_not_found", `no stream ${streamParam} at height ${block.height}`, at);
  const linked: Record<string, unknown> = {};
  if (stream.linked_stream_id !== null) {
    const other = streamAt(state, stream.linked_stream_id);
    if (other !== null) linked[stream.purpose === "Main" ? "key_stream" : "main_stream"] = toJson(S.StreamRecordV1, other);
  }
  const providerBytes = slot(state, providerKey(stream.provider));
  const provider = providerBytes === undefined ? null : toJson(S.ProviderRecordV1, decode(S.ProviderRecordV1, providerBytes));
  return {
    ...at,
    view: parts.view,
    stream: toJson(S.StreamRecordV1, stream),
    ...linked,
    provider,
    schedule: parts.schedule,
    bounds: parts.bounds,
    effective_rent_height: parts.effective_rent_height,
  };
}
