// Shared by the in-process broker-kit tests: the kit's three streams on a synthetic chain source
// (no devnet, no replay) — blocks at the kit chain's heights, each stream Active from height 2 with
// the kit chain's history (the Standard stream's authorization_generation bumped to 2 at height 6;
// the econ stream funded through height 12, Suspended at 20 with its grace deadline pinned at
// KIT_HEIGHTS.pastGrace, which has a block) — so the kit's own scripts and mutants sign their
// bundles against it in milliseconds. The configurations are the kit's defaults (kitStreamConfig)
// with only max_lanes and max_visibility_ms per stream, not the kit chain's: every stream here has
// append and delivery rates. A test changes stream fields at chosen heights to reach a rule alone.
import type { Artifact, ArtifactOf, Bundle } from "../../src/broker-kit/bundle.js";
import type { ChainSource, ChainView, ViewRead } from "../../src/broker-kit/chain-source.js";
import { ECON_ESCROW, KIT_HEIGHTS, kitStreamConfig, KIT_KEYS, KIT_START_MS, kitBundle, kitStreams, type KitBundleName, type KitVariation } from "../../src/broker-kit/kit.js";
import { BrokerSigner, label32, signingKey, type Fault } from "../../src/broker-kit/signer.js";
import type { CbqsSigningContextV1, FinalizedViewV1, StreamRecordV1 } from "../../src/codec/types.js";

export const CONTEXT: CbqsSigningContextV1 = { version: 1, chain_id: 7n, chain_instance_id: label32("instance") };
export const STREAMS = kitStreams(CONTEXT.chain_id, CONTEXT.chain_instance_id);
/** The heights the synthetic chain has blocks at: the kit chain's. */
export const BLOCK_HEIGHTS: readonly bigint[] = [1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n, KIT_HEIGHTS.unfunded, KIT_HEIGHTS.settle, KIT_HEIGHTS.pastGrace];
export const BOUNDS = { "cbqs.max_grant_ttl_ms": 86_400_000n, "cbqs.max_lane_creates_per_min": 256n, "cbqs.max_clock_skew_ms": 5_000n };
export const blockHash = (height: bigint): Uint8Array => label32(`block/${height}`);

/** The stream record of `name` at `height` on the synthetic chain. */
export function streamRecord(name: KitBundleName, height: bigint): StreamRecordV1 {
  return {
    version: 1,
    chain_instance_id: CONTEXT.chain_instance_id,
    stream_id: STREAMS[name],
    purpose: "Main",
    owner: KIT_KEYS.owner.address,
    owner_nonce: 1n,
    admin_key: signingKey(KIT_KEYS.owner.seed),
    rotation_key: null,
    delivery_class: name === "fast" ? "Fast" : "Standard",
    encrypted: false,
    linked_stream_id: null,
    provider: KIT_KEYS.provider.address,
    provider_epoch: 0n,
    provider_signing_key: signingKey(KIT_KEYS.provider.seed),
    authorization_generation: name === "standard" && height >= 6n ? 2n : 1n,
    encryption_generation: 0n,
    pricing_generation: 0n,
    status: "Active",
    config: kitStreamConfig({ max_lanes: name === "econ" ? 1 : 4, max_visibility_ms: name === "fast" ? 0n : 60_000n }),
    pricing_basis: { type: "BaseRate" },
    rate_per_block: name === "econ" ? 8_000n : 0n,
    escrow_balance: name === "econ" ? ECON_ESCROW : 0n,
    last_settled_block: 2n,
    suspended_at_block: null,
    suspension_grace_deadline_block: null,
    created_at_block: 2n,
    ...(name === "econ" && height >= KIT_HEIGHTS.settle
      ? { status: "Suspended", suspended_at_block: KIT_HEIGHTS.settle, suspension_grace_deadline_block: KIT_HEIGHTS.pastGrace, last_settled_block: KIT_HEIGHTS.settle, escrow_balance: 0n }
      : {}),
  } as unknown as StreamRecordV1;
}

/** Changes a test makes to the chain: a stream record's fields at some heights. */
export type Edit = (record: StreamRecordV1, height: bigint) => void;

export interface SyntheticSource extends ChainSource {
  /** Every height read, in the order read. */
  readonly reads: bigint[];
}

/** The synthetic chain: a block at each of BLOCK_HEIGHTS, the kit's streams from height 2, `edit` applied to every record read. */
export function syntheticSource(edit: Edit = () => {}): SyntheticSource {
  const reads: bigint[] = [];
  return {
    name: "synthetic",
    context: CONTEXT,
    reads,
    async at(stream, height): Promise<ViewRead> {
      reads.push(height);
      if (!BLOCK_HEIGHTS.includes(height)) return { kind: "no-block" };
      const name = (Object.keys(STREAMS) as KitBundleName[]).find((n) => Buffer.from(STREAMS[n]).equals(Buffer.from(stream)));
      if (name === undefined || height < 2n) return { kind: "no-stream", blockHash: blockHash(height) };
      const record = streamRecord(name, height);
      edit(record, height);
      const view: ChainView = { height, blockHash: blockHash(height), stream: record, provider: null, bounds: { ...BOUNDS }, effectiveRentHeight: height };
      return { kind: "view", view };
    },
  };
}

/** A kit bundle signed on the synthetic chain, as the verifier gets it (lines from 2). */
export async function syntheticBundle(name: KitBundleName, variation: KitVariation = {}): Promise<Bundle> {
  const { streamId, artifacts } = await kitBundle({ source: syntheticSource(), streams: STREAMS }, name, variation);
  return bundleOf(streamId, artifacts);
}

export function bundleOf(streamId: Uint8Array, artifacts: readonly ArtifactOf[]): Bundle {
  return { streamId, artifacts: artifacts.map((a, i) => ({ ...a, line: i + 2 }) as Artifact) };
}

/** A served_at of the synthetic chain. */
export const servedAt = (height: bigint): FinalizedViewV1 => ({ chain_instance_id: CONTEXT.chain_instance_id, height, block_hash: blockHash(height) });

/** The kit's signer for one stream of the synthetic chain, for a script of a test's own; its bundle with `bundleOf(STREAMS[name], signer.artifacts)`. */
export function signerFor(name: KitBundleName, fault?: Fault): BrokerSigner {
  return new BrokerSigner({
    context: CONTEXT,
    stream: STREAMS[name],
    deliveryClass: name === "fast" ? "Fast" : "Standard",
    providerSeed: KIT_KEYS.provider.seed,
    adminSeed: KIT_KEYS.owner.seed,
    startMs: KIT_START_MS,
    ...(fault === undefined ? {} : { fault }),
  });
}
