// What every part of the verifier shares: the chain's views at the heights the bundle names,
// the bundle's stream, and the record of each rule's checks and failures. A failure names the
// artifact (its line and type), the rule and the evidence in words; a check that cannot run
// because an earlier one failed (no view, no grant) is skipped rather than failed again, so one
// fault in a bundle is reported once, under its own rule.
import { bytesEqual, toHex } from "../bytes.js";
import type { CbqsSigningContextV1, DeliveryClass, FinalizedViewV1, SigningPublicKey } from "../codec/types.js";
import { ed25519VerifyStrict } from "../crypto/ed25519.js";
import type { Artifact, ArtifactType } from "./bundle.js";
import type { ChainView, ViewRead } from "./chain-source.js";
import { ruleOf, type RuleId } from "./rules.js";

export interface Failure {
  line: number;
  type: ArtifactType;
  rule: RuleId;
  section: string;
  evidence: string;
}

export const hex = toHex;
export const short = (b: Uint8Array): string => `${toHex(b).slice(0, 18)}…`;

export class Checks {
  readonly failures: Failure[] = [];
  readonly counts = new Map<RuleId, number>();
  readonly notes: string[] = [];

  constructor(
    /** The chain's signing context. */
    readonly context: CbqsSigningContextV1,
    readonly stream: Uint8Array,
    /** The chain at every height the bundle names (served_at), read before checking. */
    private readonly views: ReadonlyMap<bigint, ViewRead>,
    /** The stream's class, from any of those views (immutable, §4.1); null with none. */
    readonly deliveryClass: DeliveryClass | null,
  ) {}

  fail(a: Artifact, rule: RuleId, evidence: string): void {
    this.failures.push({ line: a.line, type: a.type, rule, section: ruleOf(rule).section, evidence });
  }

  /** One check of `rule`: counted, and a failure recorded when `ok` is false. Returns `ok`. */
  check(a: Artifact, rule: RuleId, ok: boolean, evidence: () => string): boolean {
    this.counts.set(rule, (this.counts.get(rule) ?? 0) + 1);
    if (!ok) this.fail(a, rule, evidence());
    return ok;
  }

  note(text: string): void {
    if (!this.notes.includes(text)) this.notes.push(text);
  }

  /** B1: `context` is this chain's signing context. */
  contextOf(a: Artifact, context: CbqsSigningContextV1, where: string): boolean {
    const want = this.context;
    const wrong =
      context.version !== want.version
        ? `version is ${context.version}, not ${want.version}`
        : context.chain_id !== want.chain_id
          ? `chain_id is ${context.chain_id}; this chain's is ${want.chain_id}`
          : !bytesEqual(context.chain_instance_id, want.chain_instance_id)
            ? `chain_instance_id is ${hex(context.chain_instance_id)}; this chain's is ${hex(want.chain_instance_id)}`
            : null;
    return this.check(a, "B1", wrong === null, () => `${where}.context: ${wrong}`);
  }

  /** B1: a stream id of the artifact is the bundle's stream. */
  streamOf(a: Artifact, stream: Uint8Array, where: string): boolean {
    return this.check(a, "B1", bytesEqual(stream, this.stream), () => `${where} is ${hex(stream)}, not the bundle's stream ${hex(this.stream)}`);
  }

  /**
   * B2: `served_at` is a block of this chain at which the stream exists. Returns the chain's view
   * there, or undefined (failed: the checks that need the view are skipped).
   */
  servedAt(a: Artifact, served: FinalizedViewV1, where: string): ChainView | undefined {
    const at = `${where}.served_at`;
    if (!this.check(a, "B2", bytesEqual(served.chain_instance_id, this.context.chain_instance_id), () => `${at}.chain_instance_id is ${hex(served.chain_instance_id)}; this chain's is ${hex(this.context.chain_instance_id)}`)) return undefined;
    const read = this.views.get(served.height)!;
    if (read.kind === "no-block") {
      this.check(a, "B2", false, () => `${at} names height ${served.height}, at which this chain has no block`);
      return undefined;
    }
    const hash = read.kind === "view" ? read.view.blockHash : read.blockHash;
    if (!this.check(a, "B2", bytesEqual(hash, served.block_hash), () => `${at}.block_hash is ${hex(served.block_hash)}; the chain's block at height ${served.height} is ${hex(hash)}`)) return undefined;
    if (read.kind === "no-stream") {
      this.check(a, "B2", false, () => `${at}: the stream does not exist at height ${served.height}`);
      return undefined;
    }
    return read.view;
  }

  /** B3: a provider receipt's signature under the key the stream record holds at its view. */
  providerSignature(a: Artifact, view: ChainView, digest: Uint8Array, signature: Uint8Array, where: string): boolean {
    const key = view.stream.provider_signing_key;
    return this.check(a, "B3", verifies(key, digest, signature), () => `${where}.signature does not verify under the stream's provider_signing_key ${hex(key.key)} at height ${view.height}`);
  }
}

/** Strict Ed25519 (§9.1) over a 32-byte signing digest. */
export function verifies(key: SigningPublicKey, digest: Uint8Array, signature: Uint8Array): boolean {
  return ed25519VerifyStrict(key.key, digest, signature);
}

/** The heights of every `served_at` anywhere inside `value` (artifacts nest receipts). */
export function servedHeights(value: unknown, into: Set<bigint>): void {
  if (typeof value !== "object" || value === null || value instanceof Uint8Array) return;
  // An array's entries are its elements under index keys, never "served_at".
  for (const [k, v] of Object.entries(value)) {
    if (k === "served_at" && typeof v === "object" && v !== null && typeof (v as FinalizedViewV1).height === "bigint") into.add((v as FinalizedViewV1).height);
    else servedHeights(v, into);
  }
}
