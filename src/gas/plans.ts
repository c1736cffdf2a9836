// docs/reference/canonical-plans.md: for every instruction and every path (success branches, each
// rejection class, encrypted vs not, quote vs base, settle/suspend/expire), the ordered state
// reads and writes the engine performs inside the CBQS meter, observed by running a concrete
// scenario per path. The committed file is the reviewed plan; test/gas/plans.test.ts re-runs every
// path and fails when the engine's plan, outcome or reservation fit differs from it.
import type { InstructionName } from "../codec/types.js";
import { RESERVATIONS } from "../engine/meter.js";
import { BASE_RATE, ix, key, OPEN_ADMISSION, OWNER, PROVIDER, ScenarioBuilder, SPONSOR, standardConfig } from "./builder.js";
import { GOVERNANCE_BOUNDS_LINE, planLines } from "./classify.js";
import { runScenario, type GasScenario, type Measurement } from "./scenario.js";

export interface PlanPath {
  id: string;
  instruction: InstructionName;
  title: string;
  /** "ok" or the typed error name the path must end in. */
  outcome: string;
  build(): GasScenario;
}

const GRACE = 10n;
const Q = 10_000n; // quote rate per block

const provider = (params: Record<string, bigint> = {}) => new ScenarioBuilder(params).tx(PROVIDER, ix.registerProvider());
/** Stream 0 at height 2: `encrypted`, quote- or base-priced, escrow for 100 blocks. */
function stream(encrypted: boolean, quoted: boolean, params: Record<string, bigint> = {}): ScenarioBuilder {
  const b = provider(params);
  return b.tx(OWNER, ix.createStream({ encrypted, initial_escrow: 100n * (quoted ? Q : BASE_RATE), price_quote: quoted ? b.quote() : null }));
}
/** Base-priced stream 0 funded for 2 blocks at height 2, settled at 10: Suspended (4, deadline 14). */
function suspended(encrypted = false): ScenarioBuilder {
  const b = provider({ "cbqs.suspend_grace_blocks": GRACE });
  b.tx(OWNER, ix.createStream({ encrypted, initial_escrow: 2n * BASE_RATE }));
  return b.tx(SPONSOR, ix.settle(b.streamId()), 10n);
}
const bigger = standardConfig({ retained_bytes_limit: 2n << 30n });

export const PATHS: readonly PlanPath[] = [
  // ---- RegisterProvider ----
  { id: "register-provider/ok", instruction: "RegisterProvider", title: "accepted", outcome: "ok", build: () => new ScenarioBuilder().target(PROVIDER, ix.registerProvider()) },
  { id: "register-provider/already-registered", instruction: "RegisterProvider", title: "sender already has a provider record", outcome: "ProviderAlreadyRegistered", build: () => provider().target(PROVIDER, ix.registerProvider()) },
  {
    id: "register-provider/endpoint-rejected",
    instruction: "RegisterProvider",
    title: "an endpoint fails §4.3 admission",
    outcome: "EndpointRejected",
    build: () => new ScenarioBuilder().target(PROVIDER, ix.registerProvider({ endpoints: [{ transport: "Https", uri: "https://user@provider.example" }] })),
  },
  // ---- UpdateProvider ----
  { id: "update-provider/ok", instruction: "UpdateProvider", title: "accepted, every field set", outcome: "ok", build: () => provider().target(PROVIDER, ix.updateProvider([{ transport: "Https", uri: "https://p2.example" }])) },
  {
    id: "update-provider/no-op",
    instruction: "UpdateProvider",
    title: "every field absent (rejected before any state operation)",
    outcome: "NoOpRejected",
    build: () => provider().target(PROVIDER, { type: "UpdateProvider", args: { endpoints: null, signing_key: null, quote_key: null, base_rate_admission: null, metadata_hash: null } }),
  },
  { id: "update-provider/not-found", instruction: "UpdateProvider", title: "sender has no provider record", outcome: "ProviderNotFound", build: () => new ScenarioBuilder().target(PROVIDER, ix.updateProvider(null)) },
  {
    id: "update-provider/endpoint-rejected",
    instruction: "UpdateProvider",
    title: "an endpoint fails §4.3 admission",
    outcome: "EndpointRejected",
    build: () => provider().target(PROVIDER, ix.updateProvider([{ transport: "WebSocketTls", uri: "wss://user@provider.example/ws" }])),
  },
  {
    id: "update-provider/cap-below-reservation",
    instruction: "UpdateProvider",
    title: "a cap below the current base-rate reservation",
    outcome: "CapBelowReservation",
    build: () =>
      stream(false, false).target(PROVIDER, {
        type: "UpdateProvider",
        args: { endpoints: null, signing_key: null, quote_key: null, base_rate_admission: { ...OPEN_ADMISSION, max_active_streams: 0n }, metadata_hash: null },
      }),
  },
  // ---- SetProviderStatus ----
  { id: "set-provider-status/ok", instruction: "SetProviderStatus", title: "Active → Draining", outcome: "ok", build: () => provider().target(PROVIDER, ix.setProviderStatus("Draining")) },
  { id: "set-provider-status/deregister", instruction: "SetProviderStatus", title: "Active → Deregistered, no live streams", outcome: "ok", build: () => provider().target(PROVIDER, ix.setProviderStatus("Deregistered")) },
  { id: "set-provider-status/no-op", instruction: "SetProviderStatus", title: "status unchanged", outcome: "NoOpRejected", build: () => provider().target(PROVIDER, ix.setProviderStatus("Active")) },
  { id: "set-provider-status/not-found", instruction: "SetProviderStatus", title: "sender has no provider record", outcome: "ProviderNotFound", build: () => new ScenarioBuilder().target(PROVIDER, ix.setProviderStatus("Draining")) },
  {
    id: "set-provider-status/live-streams",
    instruction: "SetProviderStatus",
    title: "Deregistered while a live stream is assigned",
    outcome: "ProviderHasLiveStreams",
    build: () => stream(false, true).target(PROVIDER, ix.setProviderStatus("Deregistered")),
  },
  // ---- CreateStream ----
  {
    id: "create-stream/quote-encrypted",
    instruction: "CreateStream",
    title: "encrypted, provider quote, nonzero escrow",
    outcome: "ok",
    build: () => {
      const b = provider();
      return b.target(OWNER, ix.createStream({ encrypted: true, initial_escrow: 100n * Q, price_quote: b.quote() }));
    },
  },
  {
    id: "create-stream/quote-plain",
    instruction: "CreateStream",
    title: "not encrypted, provider quote, nonzero escrow",
    outcome: "ok",
    build: () => {
      const b = provider();
      return b.target(OWNER, ix.createStream({ initial_escrow: 100n * Q, price_quote: b.quote() }));
    },
  },
  { id: "create-stream/base-encrypted", instruction: "CreateStream", title: "encrypted, governance base, nonzero escrow", outcome: "ok", build: () => provider().target(OWNER, ix.createStream({ encrypted: true, initial_escrow: BASE_RATE })) },
  { id: "create-stream/base-plain-zero-escrow", instruction: "CreateStream", title: "not encrypted, governance base, zero escrow", outcome: "ok", build: () => provider().target(OWNER, ix.createStream()) },
  { id: "create-stream/provider-not-found", instruction: "CreateStream", title: "no such provider", outcome: "ProviderNotFound", build: () => new ScenarioBuilder().target(OWNER, ix.createStream()) },
  {
    id: "create-stream/provider-not-active",
    instruction: "CreateStream",
    title: "provider Draining",
    outcome: "ProviderNotActive",
    build: () => provider().tx(PROVIDER, ix.setProviderStatus("Draining")).target(OWNER, ix.createStream()),
  },
  { id: "create-stream/invalid-config", instruction: "CreateStream", title: "config fails §4.2", outcome: "InvalidStreamConfig", build: () => provider().target(OWNER, ix.createStream({ config: standardConfig({ max_lanes: 0 }) })) },
  { id: "create-stream/nonce-used", instruction: "CreateStream", title: "owner nonce already used", outcome: "OwnerNonceUsed", build: () => stream(true, false).target(OWNER, ix.createStream({ encrypted: true })) },
  {
    id: "create-stream/owner-limit",
    instruction: "CreateStream",
    title: "cbqs.max_streams_per_owner reached",
    outcome: "OwnerStreamLimit",
    build: () => stream(false, false, { "cbqs.max_streams_per_owner": 1n }).target(OWNER, ix.createStream({ owner_nonce: 1n })),
  },
  {
    id: "create-stream/bad-quote",
    instruction: "CreateStream",
    title: "quote signature does not verify (one verification charged)",
    outcome: "PricingBasisInvalid",
    build: () => {
      const b = provider();
      return b.target(OWNER, ix.createStream({ price_quote: { ...b.quote(), signature: new Uint8Array(64).fill(1) } }));
    },
  },
  {
    id: "create-stream/base-not-accepted",
    instruction: "CreateStream",
    title: "governance base, provider not accepting new reservations",
    outcome: "BaseRateNotAccepted",
    build: () =>
      provider()
        .tx(PROVIDER, { type: "UpdateProvider", args: { endpoints: null, signing_key: null, quote_key: null, base_rate_admission: { ...OPEN_ADMISSION, accepts_new: false }, metadata_hash: null } })
        .target(OWNER, ix.createStream()),
  },
  {
    id: "create-stream/base-capacity-exceeded",
    instruction: "CreateStream",
    title: "governance base, reservation above a provider cap",
    outcome: "BaseRateCapacityExceeded",
    build: () =>
      provider()
        .tx(PROVIDER, { type: "UpdateProvider", args: { endpoints: null, signing_key: null, quote_key: null, base_rate_admission: { ...OPEN_ADMISSION, max_total_retained_bytes: 1n }, metadata_hash: null } })
        .target(OWNER, ix.createStream()),
  },
  { id: "create-stream/insufficient-balance", instruction: "CreateStream", title: "owner cannot fund the escrow", outcome: "InsufficientBalance", build: () => provider().target(OWNER, ix.createStream({ initial_escrow: 10n ** 19n })) },
  // ---- UpdateStream ----
  { id: "update-stream/bump-plain", instruction: "UpdateStream", title: "authorization bump only, not encrypted", outcome: "ok", build: () => { const b = stream(false, true); return b.target(OWNER, ix.updateStream(b.streamId(), { bump_authorization_generation: true })); } },
  { id: "update-stream/admin-encrypted", instruction: "UpdateStream", title: "admin key and rotation key, encrypted, no repricing", outcome: "ok", build: () => { const b = stream(true, true); return b.target(OWNER, ix.updateStream(b.streamId(), { admin_key: key("rotation"), rotation_key: { type: "Set", key: key("rotation") } })); } },
  {
    id: "update-stream/reprice-quote-encrypted",
    instruction: "UpdateStream",
    title: "priced capacity change, provider quote, encrypted",
    outcome: "ok",
    build: () => {
      const b = stream(true, true);
      return b.target(OWNER, ix.updateStream(b.streamId(), { config: bigger, price_quote: b.quote(2n, bigger) }), 5n);
    },
  },
  { id: "update-stream/reprice-base-encrypted", instruction: "UpdateStream", title: "priced capacity change, governance base, encrypted", outcome: "ok", build: () => { const b = stream(true, false); return b.target(OWNER, ix.updateStream(b.streamId(), { config: bigger }), 5n); } },
  { id: "update-stream/reprice-base-plain", instruction: "UpdateStream", title: "priced capacity change, governance base, not encrypted", outcome: "ok", build: () => { const b = stream(false, false); return b.target(OWNER, ix.updateStream(b.streamId(), { config: bigger }), 5n); } },
  { id: "update-stream/no-op", instruction: "UpdateStream", title: "changes nothing (rejected before any state operation)", outcome: "NoOpRejected", build: () => { const b = stream(false, true); return b.target(OWNER, ix.updateStream(b.streamId())); } },
  { id: "update-stream/not-found", instruction: "UpdateStream", title: "no such stream", outcome: "StreamNotFound", build: () => { const b = provider(); return b.target(OWNER, ix.updateStream(b.streamId(), { bump_authorization_generation: true })); } },
  { id: "update-stream/unauthorized", instruction: "UpdateStream", title: "sender is not the owner", outcome: "Unauthorized", build: () => { const b = stream(true, true); return b.target(SPONSOR, ix.updateStream(b.streamId(), { bump_authorization_generation: true })); } },
  { id: "update-stream/suspended", instruction: "UpdateStream", title: "stream materialized Suspended", outcome: "StreamSuspended", build: () => { const b = suspended(); return b.target(OWNER, ix.updateStream(b.streamId(), { bump_authorization_generation: true }), 11n); } },
  { id: "update-stream/quote-without-reprice", instruction: "UpdateStream", title: "quote on an update that changes no priced field", outcome: "PricingBasisInvalid", build: () => { const b = stream(false, true); return b.target(OWNER, ix.updateStream(b.streamId(), { price_quote: b.quote(2n) })); } },
  // ---- TopUpStream ----
  { id: "top-up-stream/active-encrypted", instruction: "TopUpStream", title: "sponsor, Active, encrypted", outcome: "ok", build: () => { const b = stream(true, true); return b.target(SPONSOR, ix.topUp(b.streamId(), 50n * Q), 5n); } },
  { id: "top-up-stream/active-plain", instruction: "TopUpStream", title: "owner, Active, not encrypted", outcome: "ok", build: () => { const b = stream(false, true); return b.target(OWNER, ix.topUp(b.streamId(), 50n * Q), 5n); } },
  { id: "top-up-stream/reactivate", instruction: "TopUpStream", title: "Suspended before the deadline, full payment: reactivated", outcome: "ok", build: () => { const b = suspended(true); return b.target(SPONSOR, ix.topUp(b.streamId(), 100n * BASE_RATE), 12n); } },
  { id: "top-up-stream/partial", instruction: "TopUpStream", title: "Suspended before the deadline, partial payment: pinned pair preserved", outcome: "ok", build: () => { const b = suspended(); return b.target(SPONSOR, ix.topUp(b.streamId(), BASE_RATE), 12n); } },
  { id: "top-up-stream/grace-expired", instruction: "TopUpStream", title: "Suspended at the pinned deadline (§6.1: persists nothing)", outcome: "GraceDeadlinePassed", build: () => { const b = suspended(); return b.target(SPONSOR, ix.topUp(b.streamId(), 100n * BASE_RATE), 14n); } },
  {
    id: "top-up-stream/grace-expired-unmaterialized",
    instruction: "TopUpStream",
    title: "economically suspended, never settled, past the deadline it computes",
    outcome: "GraceDeadlinePassed",
    build: () => {
      const b = provider({ "cbqs.suspend_grace_blocks": GRACE });
      b.tx(OWNER, ix.createStream({ initial_escrow: 2n * BASE_RATE }));
      return b.target(SPONSOR, ix.topUp(b.streamId(), 100n * BASE_RATE), 20n);
    },
  },
  { id: "top-up-stream/zero-amount", instruction: "TopUpStream", title: "amount 0 (rejected before any state operation)", outcome: "InvalidAmount", build: () => { const b = stream(false, true); return b.target(SPONSOR, ix.topUp(b.streamId(), 0n)); } },
  {
    id: "top-up-stream/sponsor-provider-not-active",
    instruction: "TopUpStream",
    title: "sponsor while the provider is Draining",
    outcome: "Unauthorized",
    build: () => { const b = stream(false, true).tx(PROVIDER, ix.setProviderStatus("Draining")); return b.target(SPONSOR, ix.topUp(b.streamId(), Q)); },
  },
  { id: "top-up-stream/not-found", instruction: "TopUpStream", title: "no such stream", outcome: "StreamNotFound", build: () => { const b = provider(); return b.target(SPONSOR, ix.topUp(b.streamId(), Q)); } },
  { id: "top-up-stream/closed", instruction: "TopUpStream", title: "stream Closed (terminal)", outcome: "StreamNotActive", build: () => { const b = stream(true, true); b.tx(OWNER, ix.close(b.streamId())); return b.target(SPONSOR, ix.topUp(b.streamId(), Q)); } },
  { id: "top-up-stream/insufficient-balance", instruction: "TopUpStream", title: "payer cannot fund the amount", outcome: "InsufficientBalance", build: () => { const b = stream(false, true); return b.target(SPONSOR, ix.topUp(b.streamId(), 10n ** 19n)); } },
  // ---- SettleStreamRent ----
  { id: "settle-stream-rent/pay-encrypted", instruction: "SettleStreamRent", title: "funded, encrypted: pays rent", outcome: "ok", build: () => { const b = stream(true, true); return b.target(SPONSOR, ix.settle(b.streamId()), 5n); } },
  { id: "settle-stream-rent/pay-plain", instruction: "SettleStreamRent", title: "funded, not encrypted: pays rent", outcome: "ok", build: () => { const b = stream(false, true); return b.target(SPONSOR, ix.settle(b.streamId()), 5n); } },
  {
    id: "settle-stream-rent/suspend",
    instruction: "SettleStreamRent",
    title: "underfunded: materializes Suspended, pins the pair",
    outcome: "ok",
    build: () => {
      const b = provider({ "cbqs.suspend_grace_blocks": GRACE });
      b.tx(OWNER, ix.createStream({ encrypted: true, initial_escrow: 2n * BASE_RATE }));
      return b.target(SPONSOR, ix.settle(b.streamId()), 10n);
    },
  },
  { id: "settle-stream-rent/expire-encrypted", instruction: "SettleStreamRent", title: "Suspended at the deadline: materializes DataExpired, encrypted", outcome: "ok", build: () => { const b = suspended(true); return b.target(SPONSOR, ix.settle(b.streamId()), 14n); } },
  { id: "settle-stream-rent/expire-plain", instruction: "SettleStreamRent", title: "Suspended at the deadline: materializes DataExpired, not encrypted", outcome: "ok", build: () => { const b = suspended(); return b.target(SPONSOR, ix.settle(b.streamId()), 14n); } },
  { id: "settle-stream-rent/no-op", instruction: "SettleStreamRent", title: "Suspended with no escrow inside its grace window: record would be byte-identical", outcome: "NoOpRejected", build: () => { const b = suspended(); return b.target(SPONSOR, ix.settle(b.streamId()), 11n); } },
  { id: "settle-stream-rent/not-found", instruction: "SettleStreamRent", title: "no such stream", outcome: "StreamNotFound", build: () => { const b = provider(); return b.target(SPONSOR, ix.settle(b.streamId())); } },
  { id: "settle-stream-rent/key-stream", instruction: "SettleStreamRent", title: "a linked key stream named directly", outcome: "KeyStreamNotIndependent", build: () => { const b = stream(true, true); return b.target(SPONSOR, ix.settle(b.keyStreamId()), 5n); } },
  // ---- CloseStream ----
  { id: "close-stream/quote-encrypted", instruction: "CloseStream", title: "encrypted, provider quote: settle, refund, release", outcome: "ok", build: () => { const b = stream(true, true); return b.target(OWNER, ix.close(b.streamId()), 5n); } },
  { id: "close-stream/base-plain", instruction: "CloseStream", title: "not encrypted, governance base: releases the reservation", outcome: "ok", build: () => { const b = stream(false, false); return b.target(OWNER, ix.close(b.streamId()), 5n); } },
  { id: "close-stream/suspended-past-deadline", instruction: "CloseStream", title: "Suspended past the deadline (close, never expiry)", outcome: "ok", build: () => { const b = suspended(); return b.target(OWNER, ix.close(b.streamId()), 20n); } },
  { id: "close-stream/not-found", instruction: "CloseStream", title: "no such stream", outcome: "StreamNotFound", build: () => { const b = provider(); return b.target(OWNER, ix.close(b.streamId())); } },
  { id: "close-stream/unauthorized", instruction: "CloseStream", title: "sender is not the owner", outcome: "Unauthorized", build: () => { const b = stream(true, true); return b.target(SPONSOR, ix.close(b.streamId()), 5n); } },
  { id: "close-stream/closed", instruction: "CloseStream", title: "already Closed (terminal)", outcome: "StreamNotActive", build: () => { const b = stream(false, true); b.tx(OWNER, ix.close(b.streamId())); return b.target(OWNER, ix.close(b.streamId())); } },
  // ---- ActivateKeyGeneration ----
  { id: "activate-key-generation/ok-bump", instruction: "ActivateKeyGeneration", title: "generation 1 with an authorization bump", outcome: "ok", build: () => { const b = stream(true, true); return b.target(OWNER, ix.activate(b.receipt(), true)); } },
  { id: "activate-key-generation/ok", instruction: "ActivateKeyGeneration", title: "generation 1, no bump", outcome: "ok", build: () => { const b = stream(true, true); return b.target(OWNER, ix.activate(b.receipt())); } },
  { id: "activate-key-generation/not-encrypted", instruction: "ActivateKeyGeneration", title: "stream not encrypted", outcome: "StreamNotEncrypted", build: () => { const b = stream(false, true); return b.target(OWNER, ix.activate(b.receipt())); } },
  { id: "activate-key-generation/unauthorized", instruction: "ActivateKeyGeneration", title: "sender is not the owner", outcome: "Unauthorized", build: () => { const b = stream(true, true); return b.target(SPONSOR, ix.activate(b.receipt())); } },
  { id: "activate-key-generation/suspended", instruction: "ActivateKeyGeneration", title: "stream materialized Suspended", outcome: "StreamSuspended", build: () => { const b = suspended(true); return b.target(OWNER, ix.activate(b.receipt()), 11n); } },
  {
    id: "activate-key-generation/bad-signature",
    instruction: "ActivateKeyGeneration",
    title: "receipt signature does not verify (one verification charged)",
    outcome: "InvalidKeyBatch",
    build: () => { const b = stream(true, true); return b.target(OWNER, ix.activate({ ...b.receipt(), signature: new Uint8Array(64).fill(1) })); },
  },
  {
    id: "activate-key-generation/wrong-generation",
    instruction: "ActivateKeyGeneration",
    title: "receipt generation is not the next one (no verification)",
    outcome: "InvalidKeyBatch",
    build: () => { const b = stream(true, true); return b.target(OWNER, ix.activate({ ...b.receipt(), encryption_generation: 2n })); },
  },
];

export interface ObservedPlan {
  path: PlanPath;
  measurement: Measurement;
  lines: string[];
}

export function observePlan(path: PlanPath): ObservedPlan {
  const s = path.build();
  const measurement = runScenario(s);
  const b = new ScenarioBuilder();
  const streams: Array<[Uint8Array, string]> = [
    [b.streamId(), "main"],
    [b.keyStreamId(), "key"],
    [b.streamId(1n), "main#1"],
    [b.keyStreamId(1n), "key#1"],
  ];
  return { path, measurement, lines: planLines(measurement.accesses, streams) };
}

const outcomeOf = (m: Measurement): string => (m.status === "ok" ? "ok" : m.error ?? "rejected");

function section(p: ObservedPlan): string {
  const m = p.measurement;
  const r = RESERVATIONS[p.path.instruction];
  const facts = [
    `outcome \`${outcomeOf(m)}\``,
    `reserved ${r.reads} R / ${r.writes} W`,
    `actual ${m.actual.reads} R / ${m.actual.writes} W`,
    `charged ${m.charged.reads} R / ${m.charged.writes} W`,
    `hashes [${m.hashPreimageLengths.join(", ")}]`,
    `signatures ${m.signatures}`,
  ].join(" · ");
  const body = p.lines.length === 0 ? "(no metered state operation)" : p.lines.join("\n");
  return `### \`${p.path.id}\` — ${p.path.title}\n\n${facts}\n\n\`\`\`text\n${body}\n\`\`\`\n`;
}

export function plansMarkdown(plans: readonly ObservedPlan[] = PATHS.map(observePlan)): string {
  const byInstruction = Object.keys(RESERVATIONS).map((name) => {
    const own = plans.filter((p) => p.path.instruction === name);
    return `## ${name}\n\n${own.map(section).join("\n")}`;
  });
  return `# Canonical state-I/O plans (CIP-39 §18.1)

Generated by \`cbqs gas-vectors plans\` from the path definitions in \`src/gas/plans.ts\`: each path
is a concrete scenario run through the engine, and the plan below is the ordered list of state
operations the engine performs inside the CBQS meter (the batch observer installed around the
handler). test/gas/plans.test.ts re-runs every path and fails when the engine's plan, outcome or
reservation fit differs from this committed file; a change here is therefore a reviewed change of
the canonical plan (and, for a vector's path, of the gas-vector digest).

## Notation

One line per state operation, in execution order: \`R\` = one metered read (\`get\`), \`W\` = one metered
write (\`put\` or \`delete\`), then the key class, derived from \`state/kv/keys.ts\` \`parseStateKey\` and the
engine layout (\`src/engine/layout.ts\`, \`docs/reference/state-layout.md\`):

| Key class | Key |
| --- | --- |
| \`param <name>\` | SystemState \`0x0A\` ‖ keccak256(name), one of the 25 live governance scalars |
| \`${GOVERNANCE_BOUNDS_LINE}\` | shorthand for the 25 \`R param …\` lines in exact §18.1 order (any other order is printed expanded) |
| \`pause-record\` | the Stream Registry's CIP-12 pause-accounting record (ActorStorage under the governance actor) |
| \`singleton\` | ActorStorage 0x…17 slot "registry" (chain id and instance) |
| \`schedules\` | ActorStorage 0x…17 slot "base-rate-schedules" |
| \`provider-record <role>\` | ActorStorage 0x…17 slot "P" ‖ provider |
| \`owner-count <role>\` | ActorStorage 0x…17 slot "O" ‖ owner (deleted when it reaches zero) |
| \`stream <main\\|key>\` | ActorStorage 0x…17 slot stream_id: the owner's stream 0 and its linked key stream |
| \`account <role>\` | Account \`0x01\` ‖ address; roles: owner, sponsor, provider, custody (0x…17), platform (0x…18), zero (burn) |

The sender's own account is platform state (read before and written after the handler, outside
the meter), so a handler debiting or crediting its sender shows no \`account\` line for it. Each
path states its outcome, the §18.1 reservation, the actual and the charged counts (rejected:
the full reservation), every hash preimage length in order and the signature count.

Rejections before the meter exists — an opcode other than SYS_CBQS, the CIP-12 breaker covering
0x17, a payload failing canonical decode — perform no metered operation and have no plan.

${byInstruction.join("\n")}`;
}
