// Append receipts and lanes (CIP-39 §8, §10, §14.1): the global and per-lane receipt chains from
// their genesis anchors (B15, B16), a receipt against the append it answers and the stream's class
// (B17), the append's generation and nonce (B18), lanes (B19). A receipt carried twice (in its
// append's response and again in a delivery) is one receipt, checked once.
import { bytesEqual } from "../bytes.js";
import { appendReceiptDigest, record_header_hash_v1 } from "../codec/signing.js";
import { laneId, laneReceiptGenesis, recordPayloadHash, streamReceiptGenesis } from "../codec/derive.js";
import type { AppendReceiptV1, RecordHeaderV1, RecordIdV1, StandardRetentionAnchorV1 } from "../codec/types.js";
import type { AppendRequestBodyV1, LaneRecordV1 } from "../codec/wire-types.js";
import type { Artifact } from "./bundle.js";
import type { ChainView } from "./chain-source.js";
import { hex, short, type Checks } from "./checks.js";
import { checkEconomics, type ViewCursor } from "./check-views.js";

/** Record ids in the order a stream assigns them: (broker epoch, sequence); a Standard id has no epoch. */
export function compareIds(a: RecordIdV1, b: RecordIdV1): number {
  const ea = a.type === "Fast" ? a.broker_epoch : 0n;
  const eb = b.type === "Fast" ? b.broker_epoch : 0n;
  if (ea !== eb) return ea < eb ? -1 : 1;
  return a.sequence === b.sequence ? 0 : a.sequence < b.sequence ? -1 : 1;
}

const idText = (id: RecordIdV1): string => (id.type === "Fast" ? `Fast(${id.broker_epoch}, ${id.sequence})` : `Standard(${id.sequence})`);

/** The §10 header of a client append: origin Client, kind Application, created_at = client_created_at. */
export function clientHeader(body: AppendRequestBodyV1): RecordHeaderV1 {
  return {
    stream_id: body.stream_id,
    lane_id: body.lane_id,
    origin: "Client",
    kind: "Application",
    client_message_id: body.client_message_id,
    created_at_ms: body.client_created_at_ms,
    visible_after_ms: body.visible_after_ms,
    expires_at_ms: body.expires_at_ms,
    encryption_generation: body.encryption_generation,
    nonce: body.nonce,
  };
}

export interface ChainedReceipt {
  receipt: AppendReceiptV1;
  digest: Uint8Array;
  line: number;
}

export class ReceiptChecks {
  private readonly seen = new Map<string, ChainView | undefined>();
  /** The global chain's tail: null until its first receipt or a stream-wide anchor before it. */
  private globalTail: Uint8Array | null = null;
  private lastId: RecordIdV1 | null = null;
  private readonly laneTails = new Map<string, Uint8Array>();
  /** The lanes with a receipt in the bundle so far: an anchor no longer restarts their chains. */
  private readonly lanesReceived = new Set<string>();
  /** Receipts in chain order (for retention anchors and snapshot manifests). */
  readonly chain: ChainedReceipt[] = [];
  /** True when the global chain starts at stream_receipt_genesis in this bundle. */
  fromGenesis = true;
  private readonly lanesCreated = new Set<string>();
  private readonly lanesOpen = new Set<string>();
  private readonly lanesClosed = new Map<string, number>();

  constructor(
    private readonly c: Checks,
    private readonly cursor: ViewCursor,
  ) {}

  /**
   * A standard retention anchor before any receipt of its scope: the chain restarts from its
   * predecessor digests (§15). Of several such anchors the last counts: floors only rise (B26),
   * and the bundle's receipts start at the highest.
   */
  startAt(anchor: StandardRetentionAnchorV1): void {
    if (anchor.lane_id === null) {
      if (this.lastId === null) {
        this.globalTail = anchor.previous_global_receipt;
        this.fromGenesis = false;
      }
    } else if (!this.lanesReceived.has(hex(anchor.lane_id))) {
      // The decoder pairs lane_id with previous_lane_receipt (§15).
      this.laneTails.set(hex(anchor.lane_id), anchor.previous_lane_receipt!);
    }
  }

  /** Every check of one append receipt (once per receipt); its view, or undefined when B2 failed. */
  receipt(a: Artifact, rc: AppendReceiptV1, where: string): ChainView | undefined {
    const digest = appendReceiptDigest(rc);
    const key = hex(digest);
    if (this.seen.has(key)) return this.seen.get(key);
    const c = this.c;
    c.contextOf(a, rc.context, where);
    c.streamOf(a, rc.stream_id, `${where}.stream_id`);
    const view = c.servedAt(a, rc.served_at, where);
    this.seen.set(key, view);
    if (view !== undefined) c.providerSignature(a, view, digest, rc.signature, where);

    const expected = this.globalTail ?? streamReceiptGenesis(c.context, c.stream);
    c.check(a, "B15", bytesEqual(rc.previous_global_receipt, expected), () =>
      `${where}.previous_global_receipt is ${hex(rc.previous_global_receipt)}; the chain's tail is ${hex(expected)} (${this.globalTail === null ? "stream_receipt_genesis" : "the digest of the receipt before it"})`,
    );
    const last = this.lastId;
    if (last !== null) c.check(a, "B15", compareIds(rc.record_id, last) > 0, () => `${where}.record_id ${idText(rc.record_id)} does not come after the previous receipt's ${idText(last)}`);
    this.globalTail = digest;
    this.lastId = rc.record_id;

    const lane = hex(rc.lane_id);
    const laneExpected = this.laneTails.get(lane) ?? laneReceiptGenesis(c.context, c.stream, rc.lane_id);
    c.check(a, "B16", bytesEqual(rc.previous_lane_receipt, laneExpected), () =>
      `${where}.previous_lane_receipt is ${hex(rc.previous_lane_receipt)}; lane ${short(rc.lane_id)}'s tail is ${hex(laneExpected)} (${this.laneTails.has(lane) ? "the digest of the lane's receipt before it" : "lane_receipt_genesis"})`,
    );
    this.laneTails.set(lane, digest);
    this.lanesReceived.add(lane);

    if (c.deliveryClass !== null) {
      c.check(a, "B17", rc.record_id.type === c.deliveryClass, () => `${where}.record_id is a ${rc.record_id.type} id on a ${c.deliveryClass} stream`);
    }
    if (rc.origin === "Client") {
      const closed = this.lanesClosed.get(lane);
      c.check(a, "B19", closed === undefined, () => `${where}: an append to lane ${hex(rc.lane_id)}, closed on line ${closed}`);
    }
    if (view !== undefined) {
      this.cursor.see(a, "global", view);
      checkEconomics(c, a, view, `the ${rc.kind} receipt ${idText(rc.record_id)}`);
    }
    this.chain.push({ receipt: rc, digest, line: a.line });
    return view;
  }

  /** B17: an append receipt against the client append it answers. */
  answers(a: Artifact, rc: AppendReceiptV1, body: AppendRequestBodyV1, where: string): void {
    const text = (v: unknown): string => (v instanceof Uint8Array ? hex(v) : String(v));
    const pairs: Array<[string, unknown, unknown]> = [
      ["stream_id", rc.stream_id, body.stream_id],
      ["lane_id", rc.lane_id, body.lane_id],
      ["origin", rc.origin, "Client"],
      ["kind", rc.kind, "Application"],
      ["client_message_id", rc.client_message_id, body.client_message_id],
      ["header_hash", rc.header_hash, record_header_hash_v1(clientHeader(body))],
      ["payload_hash", rc.payload_hash, recordPayloadHash(body.payload)],
      ["visible_after_ms", rc.visible_after_ms, body.visible_after_ms],
      ["expires_at_ms", rc.expires_at_ms, body.expires_at_ms],
      ["encryption_generation", rc.encryption_generation, body.encryption_generation],
    ];
    const same = (x: unknown, y: unknown): boolean => (x instanceof Uint8Array && y instanceof Uint8Array ? bytesEqual(x, y) : x === y);
    const wrong = pairs.find(([, got, want]) => !same(got, want));
    this.c.check(a, "B17", wrong === undefined, () => `${where}.${wrong![0]} is ${text(wrong![1])}; the append it answers makes it ${text(wrong![2])}`);
  }

  /** B19: a lane created by `nonce` (when the request is known) with its response's lane record, at `view`. */
  laneCreated(a: Artifact, lane: LaneRecordV1, nonce: Uint8Array | null, view: ChainView | undefined): void {
    const c = this.c;
    if (nonce !== null) {
      const derived = laneId(c.stream, nonce);
      c.check(a, "B19", bytesEqual(lane.lane_id, derived), () => `the created lane's id is ${hex(lane.lane_id)}; keccak256("cbqs/lane-id/v1" ‖ stream_id ‖ lane_nonce) is ${hex(derived)}`);
    }
    const key = hex(lane.lane_id);
    c.check(a, "B19", !this.lanesCreated.has(key), () => `lane ${hex(lane.lane_id)} is created a second time: closed lane ids are never reused (§8)`);
    if (view !== undefined) {
      const open = this.lanesOpen.size + (this.lanesOpen.has(key) ? 0 : 1) + 1;
      const max = view.stream.config.max_lanes;
      c.check(a, "B19", open <= max, () => `${open} lanes would be open (the default lane included), above the stream's max_lanes ${max} at height ${view.height}`);
    }
    this.lanesCreated.add(key);
    this.lanesOpen.add(key);
  }

  laneClosed(a: Artifact, lane: LaneRecordV1): void {
    this.lanesOpen.delete(hex(lane.lane_id));
    this.lanesClosed.set(hex(lane.lane_id), a.line);
  }

  /** The receipt of this digest, when the bundle holds it. */
  byDigest(digest: Uint8Array): ChainedReceipt | undefined {
    return this.chain.find((r) => bytesEqual(r.digest, digest));
  }
}
