// The thirteen gas vectors of CIP-39 §18.1: one per instruction (9), the maximum-size
// variable-length payloads of RegisterProvider and UpdateProvider (8 endpoints × 2,048-byte URIs,
// genesis bounds raised to the §18 maxima 8 / 2,048), and the two TopUpStream paths §6.1 made
// normative. Each is a scenario (pre-state + target) built from readable steps.
import { BASE_RATE, ix, key, maxEndpoints, OWNER, PROVIDER, ScenarioBuilder, SPONSOR, standardConfig } from "./builder.js";
import type { GasScenario } from "./scenario.js";

export interface VectorDefinition {
  id: string;
  description: string;
  build(): GasScenario;
}

/** cbqs.suspend_grace_blocks for the §6.1 suspension vectors: a short, readable window. */
const GRACE = 10n;
const MAX_ENDPOINT_PARAMS = { "cbqs.max_provider_endpoints": 8n, "cbqs.max_provider_endpoint_uri_bytes": 2_048n };

/** Provider registered; encrypted quote-priced stream 0 with escrow for 100 blocks, created at height 2. */
function encryptedQuotedStream(): ScenarioBuilder {
  const b = new ScenarioBuilder().tx(PROVIDER, ix.registerProvider());
  return b.tx(OWNER, ix.createStream({ encrypted: true, initial_escrow: 100n * 10_000n, price_quote: b.quote() }));
}

/**
 * §6.1 suspension: unencrypted governance-base stream 0 funded for 2 blocks at height 2, settled
 * at height 10 → Suspended with suspended_at 4 and the pinned deadline 4 + GRACE = 14.
 */
function suspendedStream(): ScenarioBuilder {
  const b = new ScenarioBuilder({ "cbqs.suspend_grace_blocks": GRACE }).tx(PROVIDER, ix.registerProvider());
  b.tx(OWNER, ix.createStream({ initial_escrow: 2n * BASE_RATE }));
  return b.tx(SPONSOR, ix.settle(b.streamId()), 10n);
}

export const VECTORS: readonly VectorDefinition[] = [
  {
    id: "register-provider",
    description: "RegisterProvider with one Https endpoint",
    build: () => new ScenarioBuilder().target(PROVIDER, ix.registerProvider()),
  },
  {
    id: "update-provider",
    description: "UpdateProvider setting every field (one endpoint)",
    build: () =>
      new ScenarioBuilder().tx(PROVIDER, ix.registerProvider()).target(PROVIDER, ix.updateProvider([{ transport: "WebSocketTls", uri: "wss://provider.example/ws" }])),
  },
  {
    id: "set-provider-status",
    description: "SetProviderStatus Active → Draining",
    build: () => new ScenarioBuilder().tx(PROVIDER, ix.registerProvider()).target(PROVIDER, ix.setProviderStatus("Draining")),
  },
  {
    id: "create-stream",
    description: "CreateStream, encrypted (main + key stream), provider-quote priced (one Ed25519 verification), nonzero initial escrow",
    build: () => {
      const b = new ScenarioBuilder().tx(PROVIDER, ix.registerProvider());
      return b.target(OWNER, ix.createStream({ encrypted: true, initial_escrow: 100n * 10_000n, price_quote: b.quote() }));
    },
  },
  {
    id: "update-stream",
    description: "UpdateStream on an encrypted quote-priced stream: doubled retained_bytes_limit repriced by a fresh quote (one Ed25519 verification), new admin key, rotation key set",
    build: () => {
      const b = encryptedQuotedStream();
      const config = standardConfig({ retained_bytes_limit: 2n << 30n });
      return b.target(OWNER, ix.updateStream(b.streamId(), { config, admin_key: key("rotation"), rotation_key: { type: "Set", key: key("rotation") }, price_quote: b.quote(2n, config) }), 5n);
    },
  },
  {
    id: "top-up-stream",
    description: "TopUpStream by a third-party sponsor on an encrypted Active stream, settling accrued rent",
    build: () => {
      const b = encryptedQuotedStream();
      return b.target(SPONSOR, ix.topUp(b.streamId(), 50n * 10_000n), 5n);
    },
  },
  {
    id: "settle-stream-rent",
    description: "SettleStreamRent on an encrypted stream that is funded: pays 3 blocks of rent",
    build: () => {
      const b = encryptedQuotedStream();
      return b.target(SPONSOR, ix.settle(b.streamId()), 5n);
    },
  },
  {
    id: "close-stream",
    description: "CloseStream on an encrypted stream: settles, refunds the unearned escrow, releases counters",
    build: () => {
      const b = encryptedQuotedStream();
      return b.target(OWNER, ix.close(b.streamId()), 5n);
    },
  },
  {
    id: "activate-key-generation",
    description: "ActivateKeyGeneration of generation 1 with an authorization bump (one Ed25519 verification)",
    build: () => {
      const b = encryptedQuotedStream();
      return b.target(OWNER, ix.activate(b.receipt(), true));
    },
  },
  {
    id: "register-provider-max",
    description: "RegisterProvider at maximum size: 8 endpoints × 2,048-byte URIs (genesis cbqs.max_provider_endpoints 8, cbqs.max_provider_endpoint_uri_bytes 2,048)",
    build: () => new ScenarioBuilder(MAX_ENDPOINT_PARAMS).target(PROVIDER, ix.registerProvider({ endpoints: maxEndpoints(8, 2_048) })),
  },
  {
    id: "update-provider-max",
    description: "UpdateProvider at maximum size: every field set, 8 endpoints × 2,048-byte URIs (same genesis bounds)",
    build: () => new ScenarioBuilder(MAX_ENDPOINT_PARAMS).tx(PROVIDER, ix.registerProvider()).target(PROVIDER, ix.updateProvider(maxEndpoints(8, 2_048))),
  },
  {
    id: "top-up-stream-grace-expired",
    description: "§6.1 TopUpStream rejected at the pinned grace deadline (height 14 = deadline 14): persists nothing, charged the full reservation",
    build: () => {
      const b = suspendedStream();
      return b.target(SPONSOR, ix.topUp(b.streamId(), 100n * BASE_RATE), 14n);
    },
  },
  {
    id: "top-up-stream-partial",
    description: "§6.1 TopUpStream partial payment at height 12 (before the deadline 14): one block paid, stream stays Suspended, pinned pair (4, 14) preserved",
    build: () => {
      const b = suspendedStream();
      return b.target(SPONSOR, ix.topUp(b.streamId(), BASE_RATE), 12n);
    },
  },
];
