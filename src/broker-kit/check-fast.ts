// Fast streams (CIP-39 §12.1, §12.2, §13.2): broker-epoch transitions (B23), the checkpoint chain
// and durable watermarks (B24), and each checkpoint's ordered_range_root recomputed from the
// batch's records as the bundle carries them (B25). A fast bundle starts at the stream's first
// transition: the checkpoint chain is verified from checkpoint_genesis.
import { bytesEqual, toHex } from "../bytes.js";
import { encode } from "../codec/core.js";
import * as B from "../codec/broker.js";
import { checkpointGenesis } from "../codec/derive.js";
import { EncodeError } from "../codec/errors.js";
import { fastBatchCommitment, type FastBatchRecordV1 } from "../codec/helpers.js";
import { brokerEpochTransitionDigest, checkpointReceiptDigest } from "../codec/signing.js";
import type { BrokerEpochTransitionV1, CheckpointReceiptV1, FastRecordIdV1, RecordHeaderV1 } from "../codec/types.js";
import type { FastDurableWatermarkV1 } from "../codec/wire-types.js";
import type { Artifact } from "./bundle.js";
import { hex, type Checks } from "./checks.js";
import type { ViewCursor } from "./check-views.js";

export interface Checkpoint {
  receipt: CheckpointReceiptV1;
  digest: Uint8Array;
  line: number;
  /** The artifact it came in, for failures found at the end. */
  artifact: Artifact;
}

interface Lineage {
  epoch: bigint;
  /** The digest of the transition that started it. */
  transition: Uint8Array;
  /** Its last checkpoint so far. */
  last: Checkpoint | null;
}

const recordKey = (epoch: bigint, sequence: bigint): string => `${epoch}:${sequence}`;

export class FastChecks {
  private lineage: Lineage | null = null;
  /** The latest checkpoint of any lineage. */
  private latest: Checkpoint | null = null;
  readonly checkpoints: Checkpoint[] = [];
  /** Transition digests by the broker epoch they start. */
  readonly transitions = new Map<bigint, Uint8Array>();
  private readonly records = new Map<string, FastBatchRecordV1 & { line: number }>();

  constructor(
    private readonly c: Checks,
    private readonly cursor: ViewCursor,
  ) {}

  transition(a: Artifact, t: BrokerEpochTransitionV1): void {
    const c = this.c;
    c.contextOf(a, t.context, "transition");
    c.streamOf(a, t.stream_id, "transition.stream_id");
    const digest = brokerEpochTransitionDigest(t);
    const view = c.servedAt(a, t.served_at, "transition");
    if (view !== undefined) {
      c.providerSignature(a, view, digest, t.signature, "transition");
      this.cursor.see(a, "checkpoint", view);
    }
    const genesis = checkpointGenesis(c.context, c.stream);
    const current = this.lineage;
    if (current === null) {
      c.check(a, "B23", t.previous_lineage === null, () => `the bundle's first transition follows lineage ${t.previous_lineage!.broker_epoch}: a fast bundle starts at the stream's first transition, whose checkpoint chain starts at checkpoint_genesis`);
      c.check(a, "B23", bytesEqual(t.last_durable_checkpoint, genesis), () => `transition.last_durable_checkpoint is ${hex(t.last_durable_checkpoint)}; a new stream's transition names checkpoint_genesis ${hex(genesis)}`);
    } else {
      c.check(a, "B23", t.previous_lineage !== null && t.previous_lineage.broker_epoch === current.epoch, () =>
        `transition.previous_lineage names broker epoch ${t.previous_lineage?.broker_epoch ?? "none"}; the current lineage is epoch ${current.epoch}`,
      );
      const named = this.latest?.digest ?? genesis;
      c.check(a, "B23", bytesEqual(t.last_durable_checkpoint, named), () =>
        `transition.last_durable_checkpoint is ${hex(t.last_durable_checkpoint)}; the latest checkpoint is ${hex(named)}${this.latest === null ? " (checkpoint_genesis)" : ` (line ${this.latest.line})`}`,
      );
      const sequence = current.last?.receipt.last_sequence ?? null;
      c.check(a, "B23", t.last_durable_sequence === sequence, () => `transition.last_durable_sequence is ${t.last_durable_sequence ?? "absent"}; the prior lineage's last checkpoint ends at ${sequence ?? "(none: absent)"}`);
    }
    this.lineage = { epoch: t.replacement_broker_epoch, transition: digest, last: null };
    this.transitions.set(t.replacement_broker_epoch, digest);
  }

  checkpoint(a: Artifact, r: CheckpointReceiptV1): void {
    const c = this.c;
    c.contextOf(a, r.context, "checkpoint");
    c.streamOf(a, r.stream_id, "checkpoint.stream_id");
    const digest = checkpointReceiptDigest(r);
    const view = c.servedAt(a, r.served_at, "checkpoint");
    if (view !== undefined) {
      c.providerSignature(a, view, digest, r.signature, "checkpoint");
      this.cursor.see(a, "checkpoint", view);
    }
    const lineage = this.lineage;
    const cp: Checkpoint = { receipt: r, digest, line: a.line, artifact: a };
    if (c.check(a, "B24", lineage !== null, () => "a checkpoint with no broker-epoch transition before it in the bundle (§12.1: a lineage starts with its transition)") && lineage !== null) {
      c.check(a, "B24", r.broker_epoch === lineage.epoch, () => `checkpoint.broker_epoch is ${r.broker_epoch}; the current lineage is epoch ${lineage.epoch}`);
      const prev = lineage.last;
      const link = prev?.digest ?? lineage.transition;
      c.check(a, "B24", bytesEqual(r.previous_checkpoint, link), () =>
        `checkpoint.previous_checkpoint is ${hex(r.previous_checkpoint)}; ${prev === null ? "the lineage's first checkpoint links to its transition" : `the checkpoint before it (line ${prev.line}) has digest`} ${hex(link)}`,
      );
      const first = prev === null ? 0n : prev.receipt.last_sequence + 1n;
      c.check(a, "B24", r.first_sequence === first, () =>
        `checkpoint.first_sequence is ${r.first_sequence}; ${prev === null ? "a broker epoch's first checkpoint starts at 0" : `the checkpoint before it ends at ${prev.receipt.last_sequence}`}`,
      );
      lineage.last = cp;
    }
    this.latest = cp;
    this.checkpoints.push(cp);
  }

  /** B24: a durable watermark names the checkpoint genesis (no sequence) or a checkpoint of the bundle (its last sequence). */
  watermark(a: Artifact, w: FastDurableWatermarkV1, where: string): void {
    const c = this.c;
    c.streamOf(a, w.stream_id, `${where}.stream_id`);
    if (bytesEqual(w.checkpoint_anchor, checkpointGenesis(c.context, c.stream))) {
      c.check(a, "B24", w.last_durable_sequence === null, () => `${where}: the anchor is checkpoint_genesis but last_durable_sequence is ${w.last_durable_sequence}`);
      return;
    }
    const cp = this.checkpoints.find((k) => bytesEqual(k.digest, w.checkpoint_anchor));
    if (!c.check(a, "B24", cp !== undefined, () => `${where}.checkpoint_anchor ${hex(w.checkpoint_anchor)} is neither checkpoint_genesis nor a checkpoint earlier in the bundle`) || cp === undefined) return;
    c.check(a, "B24", w.last_durable_sequence === cp.receipt.last_sequence, () => `${where}.last_durable_sequence is ${w.last_durable_sequence ?? "absent"}; its checkpoint (line ${cp.line}) ends at ${cp.receipt.last_sequence}`);
  }

  /** A fast record the bundle carries (an append request with its answer, or a delivery). */
  record(a: Artifact, id: FastRecordIdV1, header: RecordHeaderV1, payload: Uint8Array): void {
    const key = recordKey(id.broker_epoch, id.sequence);
    const held = this.records.get(key);
    if (held === undefined) {
      this.records.set(key, { header, payload, line: a.line });
      return;
    }
    const same = bytesEqual(encode(B.RecordHeaderV1, held.header), encode(B.RecordHeaderV1, header)) && bytesEqual(held.payload, payload);
    this.c.check(a, "B25", same, () => `two different records at fast id (${id.broker_epoch}, ${id.sequence}): this one and line ${held.line}'s`);
  }

  /** B25, at the end: every checkpoint whose batch the bundle carries is recomputed. */
  finish(): void {
    for (const cp of this.checkpoints) {
      const r = cp.receipt;
      const held: FastBatchRecordV1[] = [];
      const missing: bigint[] = [];
      for (let s = r.first_sequence; s <= r.last_sequence; s++) {
        const rec = this.records.get(recordKey(r.broker_epoch, s));
        if (rec === undefined) missing.push(s);
        else held.push(rec);
      }
      if (held.length === 0) {
        this.c.note(`the checkpoint on line ${cp.line} (epoch ${r.broker_epoch}, ${r.first_sequence}..=${r.last_sequence}): the bundle carries none of its records, so its ordered_range_root is not recomputed`);
        continue;
      }
      if (!this.c.check(cp.artifact, "B25", missing.length === 0, () => `the bundle carries only part of the batch ${r.first_sequence}..=${r.last_sequence}: records ${missing.slice(0, 8).join(", ")}${missing.length > 8 ? ", …" : ""} are missing (§12.2: a missing record is rejected before the root)`)) continue;
      const range = { context: r.context, stream_id: r.stream_id, provider_epoch: r.provider_epoch, broker_epoch: r.broker_epoch, first_sequence: r.first_sequence };
      let root: Uint8Array;
      try {
        root = fastBatchCommitment(range, held).ordered_range_root;
      } catch (err) {
        if (!(err instanceof EncodeError)) throw err;
        this.c.check(cp.artifact, "B25", false, () => `the batch ${r.first_sequence}..=${r.last_sequence} has no commitment: ${err.message}`);
        continue;
      }
      this.c.check(cp.artifact, "B25", bytesEqual(root, r.ordered_range_root), () => `checkpoint.ordered_range_root is ${hex(r.ordered_range_root)}; the batch's records commit to ${toHex(root)}`);
    }
  }
}
