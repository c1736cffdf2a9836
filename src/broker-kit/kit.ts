// The broker kit's chain and its three reference bundles. The chain is a devnet (the `cbqs node`
// default genesis: ten dev accounts with published keys) on which dev1 registers as a provider
// and dev0 creates three streams with admin key dev0: a Standard stream, a Fast stream, and a
// Standard stream funded for ten blocks only, which a SettleStreamRent suspends at height 20 and
// whose pinned grace deadline is height 604,812. The same blocks are mined by the sample
// generator (scripts/gen-broker-kit.ts, into fixtures/broker/kit-chain.json) and by the tests on
// a live devnet. Each bundle script signs, as the broker, what one stream's clients and broker
// exchange on that chain; a variation (a fault or extra steps, mutants.ts) breaks one rule.
import { encodeEnvelope } from "../chain/envelope.js";
import { encode } from "../codec/core.js";
import { streamId } from "../codec/derive.js";
import { appendReceiptDigest } from "../codec/signing.js";
import * as S from "../codec/schema.js";
import type { CbqsInstructionV1, FinalizedViewV1, StreamConfigV1 } from "../codec/types.js";
import { devAccount } from "../harness/devnet.js";
import { utf8 } from "../bytes.js";
import type { ArtifactOf } from "./bundle.js";
import type { ChainSource } from "./chain-source.js";
import { verbBits } from "./check-sessions.js";
import { BrokerSigner, signingKey, ZERO32, type Fault, type GroupState, type Session, type SignedRecord } from "./signer.js";

/** The dev accounts of the kit: owner and admin, provider, two holders, the snapshotting application. */
export const KIT_KEYS = {
  owner: devAccount(0),
  provider: devAccount(1),
  holder: devAccount(2),
  holder2: devAccount(3),
  application: devAccount(4),
} as const;

/** The heights the kit's chain has blocks at, and what happens there. */
export const KIT_HEIGHTS = {
  provider: 1n, // RegisterProvider
  streams: 2n, // three CreateStreams
  bump: 6n, // UpdateStream: the Standard stream's authorization_generation 1 → 2
  last: 8n, // the last of the consecutive blocks 1..8
  unfunded: 15n, // the econ stream is Active, its escrow below the accrued rent
  settle: 20n, // SettleStreamRent: the econ stream Suspended, deadline pinned at 604,812
  pastGrace: 604_812n, // the econ stream's pinned grace deadline
} as const;

/** The genesis timestamp of the devnet (2026-01-01T00:00:00Z) in ms: the kit's clock starts there. */
export const KIT_START_MS = 1_767_225_600_000n;
const ESCROW = 100_000_000_000_000n;
/** The econ stream: the floor rate of 8,000 a block, funded for exactly ten blocks. */
export const ECON_ESCROW = 80_000n;

export interface KitBlock {
  height: bigint;
  envelopes: Uint8Array[];
}

export interface KitStreams {
  standard: Uint8Array;
  fast: Uint8Array;
  econ: Uint8Array;
}

export function kitStreams(chainId: bigint, chainInstanceId: Uint8Array): KitStreams {
  const owner = KIT_KEYS.owner.address;
  return { standard: streamId(chainId, chainInstanceId, owner, 1n), fast: streamId(chainId, chainInstanceId, owner, 2n), econ: streamId(chainId, chainInstanceId, owner, 3n) };
}

export function kitStreamConfig(o: Partial<StreamConfigV1>): StreamConfigV1 {
  return {
    retention_ms: 3_600_000n,
    retained_bytes_limit: 1_073_741_824n,
    max_message_bytes: 1_024,
    max_append_bytes_per_sec: 1_048_576n,
    max_delivered_bytes_per_sec: 1_048_576n,
    max_lanes: 4,
    idempotency_horizon_ms: 60_000n,
    default_visibility_ms: 30_000n,
    max_visibility_ms: 60_000n,
    default_max_attempts: 10,
    fast_batch_max_ms: 0,
    fast_batch_max_records: 0,
    ...o,
  };
}

/** The kit chain's blocks after genesis, every envelope for a fresh devnet (nonces from 0). */
export function kitChainBlocks(chainId: bigint, chainInstanceId: Uint8Array): KitBlock[] {
  const nonces = new Map<string, bigint>();
  const tx = (from: Uint8Array, instruction: CbqsInstructionV1): Uint8Array => {
    const key = Buffer.from(from).toString("hex");
    const nonce = nonces.get(key) ?? 0n;
    nonces.set(key, nonce + 1n);
    return encodeEnvelope({ chain_id: chainId, nonce, tx: { from, body: { kind: "system", opcode: 218, payload: encode(S.CbqsInstructionV1, instruction) } } });
  };
  const owner = KIT_KEYS.owner;
  const provider = KIT_KEYS.provider;
  const create = (ownerNonce: bigint, deliveryClass: "Standard" | "Fast", escrow: bigint, c: StreamConfigV1): Uint8Array =>
    tx(owner.address, {
      type: "CreateStream",
      args: { owner_nonce: ownerNonce, initial_escrow: escrow, admin_key: signingKey(owner.seed), rotation_key: null, delivery_class: deliveryClass, encrypted: false, provider: provider.address, config: c, price_quote: null },
    });
  const streams = kitStreams(chainId, chainInstanceId);
  const blocks: KitBlock[] = [];
  const block = (height: bigint, envelopes: Uint8Array[] = []): void => void blocks.push({ height, envelopes });
  block(KIT_HEIGHTS.provider, [
    tx(provider.address, {
      type: "RegisterProvider",
      args: {
        signing_key: signingKey(provider.seed),
        endpoints: [{ transport: "Https", uri: "https://provider.example/cbqs" }],
        quote_key: signingKey(provider.seed),
        base_rate_admission: { accepts_new: true, max_active_streams: 100n, max_total_retained_bytes: 107_374_182_400n, max_total_append_bytes_per_sec: 104_857_600n, max_total_delivered_bytes_per_sec: 104_857_600n },
        metadata_hash: ZERO32,
      },
    }),
  ]);
  block(KIT_HEIGHTS.streams, [
    create(1n, "Standard", ESCROW, kitStreamConfig({})),
    create(2n, "Fast", ESCROW, kitStreamConfig({ idempotency_horizon_ms: 0n, default_visibility_ms: 0n, max_visibility_ms: 0n, default_max_attempts: 0, fast_batch_max_ms: 100, fast_batch_max_records: 1_024 })),
    create(3n, "Standard", ECON_ESCROW, kitStreamConfig({ max_append_bytes_per_sec: 0n, max_delivered_bytes_per_sec: 0n, max_lanes: 1 })),
  ]);
  for (let h = KIT_HEIGHTS.streams + 1n; h <= KIT_HEIGHTS.last; h++) {
    block(h, h === KIT_HEIGHTS.bump ? [tx(owner.address, { type: "UpdateStream", args: { stream_id: streams.standard, config: null, admin_key: null, rotation_key: { type: "Keep" }, price_quote: null, bump_authorization_generation: true } })] : []);
  }
  block(KIT_HEIGHTS.unfunded);
  block(KIT_HEIGHTS.settle, [tx(owner.address, { type: "SettleStreamRent", args: { stream_id: streams.econ } })]);
  block(KIT_HEIGHTS.pastGrace);
  return blocks;
}

export type KitBundleName = "standard" | "fast" | "econ";
export const KIT_BUNDLES: readonly KitBundleName[] = ["standard", "fast", "econ"];

/** Where a variation's extra steps run in a script. */
export type KitHook = "after-create-lane" | "before-restart" | "end";

/**
 * What a script has made so far, for a variation's extra steps: its sessions (`s1`, and `s2` on the
 * Standard stream), the Standard stream's lane `L1` and group `G`, and the records `r5` (Standard)
 * and `f0` (Fast).
 */
export interface KitRun {
  signer: BrokerSigner;
  /** The view of the block at `height` (the stream need not exist there). */
  view(height: bigint): Promise<FinalizedViewV1>;
  sessions: Record<string, Session>;
  lanes: Record<string, Uint8Array>;
  groups: Record<string, GroupState>;
  records: Record<string, SignedRecord>;
}

export interface KitVariation {
  fault?: Fault;
  extra?: { at: KitHook; run(k: KitRun): Promise<void> };
}

export interface KitChain {
  source: ChainSource;
  streams: KitStreams;
}

const ALL_VERBS = verbBits("APPEND", "CONSUME", "ACKNOWLEDGE", "REPLAY", "GROUP_ADMIN", "REDRIVE", "LANE_ADMIN");
const grantWindow = { notBeforeMs: KIT_START_MS - 1_000n, expiresAtMs: KIT_START_MS + 3_600_000n };
const text = (s: string): Uint8Array => utf8(s);

/** One of the three reference bundles of the kit chain, varied or not. */
export async function kitBundle(chain: KitChain, name: KitBundleName, variation: KitVariation = {}): Promise<{ streamId: Uint8Array; artifacts: ArtifactOf[] }> {
  const stream = chain.streams[name];
  const source = chain.source;
  const signer = new BrokerSigner({
    context: source.context,
    stream,
    deliveryClass: name === "fast" ? "Fast" : "Standard",
    providerSeed: KIT_KEYS.provider.seed,
    adminSeed: KIT_KEYS.owner.seed,
    startMs: KIT_START_MS,
    ...(variation.fault === undefined ? {} : { fault: variation.fault }),
  });
  const views = new Map<bigint, FinalizedViewV1>();
  const view = async (height: bigint): Promise<FinalizedViewV1> => {
    let v = views.get(height);
    if (v === undefined) {
      const read = await source.at(stream, height);
      if (read.kind === "no-block") throw new Error(`the kit chain has no block at height ${height}: is ${source.name} the kit chain?`);
      v = { chain_instance_id: source.context.chain_instance_id, height, block_hash: read.kind === "view" ? read.view.blockHash : read.blockHash };
      views.set(height, v);
    }
    return v;
  };
  const run: KitRun = { signer, view, sessions: {}, lanes: {}, groups: {}, records: {} };
  const hook = async (at: KitHook): Promise<void> => {
    if (variation.extra?.at === at) await variation.extra.run(run);
  };
  if (name === "standard") await standardScript(run, hook);
  else if (name === "fast") await fastScript(run, hook);
  else await econScript(run, hook);
  await hook("end");
  return { streamId: stream, artifacts: signer.artifacts };
}

type Hook = (at: KitHook) => Promise<void>;

/** The Standard stream: two sessions around the authorization bump, lanes, a group's life, anchors, a snapshot. */
async function standardScript(k: KitRun, hook: Hook): Promise<void> {
  const s = k.signer;
  const [v3, v4, v5, v7, v8] = await Promise.all([3n, 4n, 5n, 7n, 8n].map(k.view)) as [FinalizedViewV1, FinalizedViewV1, FinalizedViewV1, FinalizedViewV1, FinalizedViewV1];
  const g1 = s.grant({ holderSeed: KIT_KEYS.holder.seed, label: "standard/1", verbs: ALL_VERBS, authorizationGeneration: 1n, ...grantWindow });
  const s1 = (k.sessions["s1"] = s.openSession(g1, KIT_KEYS.holder.seed, v3, "standard/1"));
  const r0 = s.append(s1, v3, { lane: ZERO32, payload: text("message 0"), label: "standard/0" });
  const lane = (k.lanes["L1"] = s.createLane(s1, v3, "standard/lane-1"));
  await hook("after-create-lane");
  s.append(s1, v4, { lane, payload: text("message 2"), label: "standard/2" });
  const g = (k.groups["G"] = s.createGroup(s1, v4, ZERO32, "standard/g", { type: "At", record_id: { provider_epoch: 0n, sequence: r0.id.sequence } }));
  const l0 = s.deliverLease(v4, g, r0, KIT_KEYS.holder.seed, { subscription: "standard/g" });
  s.ack(s1, v4, l0);
  const r3 = s.append(s1, v5, { lane: ZERO32, payload: text("message 3"), label: "standard/3" });
  const l3 = s.deliverLease(v5, g, r3, KIT_KEYS.holder.seed, { subscription: "standard/g" });
  s.reject(s1, v5, l3, "poison");
  s.redrive(s1, v5, l3);
  s.closeLane(s1, v5, lane);
  // Height 6 bumps the stream's authorization_generation: session 1's grant is stale from here.
  const g2 = s.grant({ holderSeed: KIT_KEYS.holder2.seed, label: "standard/2", verbs: ALL_VERBS, authorizationGeneration: 2n, ...grantWindow });
  const s2 = (k.sessions["s2"] = s.openSession(g2, KIT_KEYS.holder2.seed, v7, "standard/2"));
  const r5 = (k.records["r5"] = s.append(s2, v7, { lane: ZERO32, payload: text("message 5"), label: "standard/5" }));
  s.updateGroup(s2, v7, g, { visibility_timeout_ms: 20_000n });
  s.standardAnchor(v8, 2n, null);
  s.groupAnchor(v8, g, g.receipts[1]!);
  s.append(s2, v8, { lane: ZERO32, payload: text("message 6"), label: "standard/6" });
  s.deleteGroup(s2, v8, g);
  s.standardAnchor(v8, 4n, null);
  s.manifest(KIT_KEYS.application.seed, {
    scope: { type: "Stream" },
    coverage: { type: "StandardRecordId", provider_epoch: 0n, sequence: r5.id.sequence },
    anchor: appendDigest(r5),
    snapshot: text("the application's state through record 5"),
    label: "standard/5",
  });
}

/** The Fast stream: two lineages (a Void restart between), lanes, checkpoints, a floor, a snapshot. */
async function fastScript(k: KitRun, hook: Hook): Promise<void> {
  const s = k.signer;
  const [v3, v4, v5, v7] = await Promise.all([3n, 4n, 5n, 7n].map(k.view)) as [FinalizedViewV1, FinalizedViewV1, FinalizedViewV1, FinalizedViewV1];
  s.transition(v3, "Clean");
  const g = s.grant({ holderSeed: KIT_KEYS.holder.seed, label: "fast/1", verbs: verbBits("APPEND", "CONSUME", "REPLAY", "LANE_ADMIN"), authorizationGeneration: 1n, ...grantWindow });
  const ses = s.openSession(g, KIT_KEYS.holder.seed, v3, "fast/1");
  k.records["f0"] = s.append(ses, v3, { lane: ZERO32, payload: text("fast 0"), label: "fast/0" });
  const lane = s.createLane(ses, v3, "fast/lane-1");
  s.append(ses, v3, { lane, payload: text("fast 2"), label: "fast/2" });
  s.checkpoint(v3, "fast/full");
  s.append(ses, v4, { lane, payload: text("fast 3"), label: "fast/3" });
  s.append(ses, v4, { lane: ZERO32, payload: text("fast 4"), label: "fast/4" });
  s.checkpoint(v4, "fast/full");
  s.append(ses, v4, { lane: ZERO32, payload: text("fast 5, never durable"), label: "fast/5" });
  await hook("before-restart");
  s.transition(v5, "Void");
  s.append(ses, v5, { lane, payload: text("fast 6"), label: "fast/6" });
  s.append(ses, v5, { lane: ZERO32, payload: text("fast 7"), label: "fast/7" });
  const last = s.checkpoint(v5, "fast/full");
  s.fastAnchor(v7, 0n, 3n);
  const digest = s.checkpoints.at(-1)!.digest;
  s.manifest(KIT_KEYS.application.seed, { scope: { type: "Stream" }, coverage: { type: "CheckpointReceiptDigest", digest }, anchor: digest, snapshot: text(`the application's state through epoch ${last.broker_epoch} record ${last.last_sequence}`), label: "fast/1" });
}

/** The econ stream: a session and appends while funded (heights 3, 4; paid through 12). */
async function econScript(k: KitRun, _hook: Hook): Promise<void> {
  const s = k.signer;
  const [v3, v4] = await Promise.all([3n, 4n].map(k.view)) as [FinalizedViewV1, FinalizedViewV1];
  const g = s.grant({ holderSeed: KIT_KEYS.holder.seed, label: "econ/1", verbs: verbBits("APPEND", "CONSUME"), authorizationGeneration: 1n, ...grantWindow });
  const ses = (k.sessions["s1"] = s.openSession(g, KIT_KEYS.holder.seed, v3, "econ/1"));
  s.append(ses, v3, { lane: ZERO32, payload: text("econ 0"), label: "econ/0" });
  s.append(ses, v4, { lane: ZERO32, payload: text("econ 1"), label: "econ/1" });
}

const appendDigest = (r: SignedRecord): Uint8Array => appendReceiptDigest(r.receipt!);
