// buildTransaction's typed input (src/scenario/transaction-input.ts): integers as bigints build
// the same envelopes as decimal strings, every instruction written with the types executes, each
// arguments type has exactly its codec struct's fields (checked by the type-check of the suite),
// and untyped JavaScript is still refused at run time with the JSON path of what is wrong.
// What the types refuse is compiled in a consumer project by test/api/package.test.ts
// (test/api/consumer/transaction-types.ts).
import { describe, expect, expectTypeOf, it } from "vitest";
import {
  createChain,
  ScenarioError,
  type ActivateKeyGenerationInput,
  type BaseRateAdmissionInput,
  type CbqsInstructions,
  type CloseStreamInput,
  type CreateStreamInput,
  type KeyBatchReceiptInput,
  type PriceQuoteInput,
  type ProviderEndpointInput,
  type RegisterProviderInput,
  type SetProviderStatusInput,
  type SettleStreamRentInput,
  type SigningContextInput,
  type StreamConfigInput,
  type TopUpStreamInput,
  type TransactionInput,
  type UpdateProviderInput,
  type UpdateStreamInput,
} from "../../src/api/index.js";
import type * as T from "../../src/api/codec.js";

const OWNER = "0x1111111111111111111111111111111111111111";
const PROVIDER = "0x2222222222222222222222222222222222222222";
const STREAM = { owner: OWNER, owner_nonce: 1n };

const register: TransactionInput = {
  from: PROVIDER,
  cbqs: {
    RegisterProvider: {
      signing_key: { ed25519_seed: "0x" + "51".repeat(32) },
      endpoints: [{ transport: "WebSocketTls", uri: "wss://cbqs.example/stream" }],
      quote_key: { ed25519_seed: "0x" + "52".repeat(32) },
      base_rate_admission: {
        accepts_new: true,
        max_active_streams: 100n,
        max_total_retained_bytes: 107_374_182_400n,
        max_total_append_bytes_per_sec: 104_857_600n,
        max_total_delivered_bytes_per_sec: 104_857_600n,
      },
      metadata_hash: "0x" + "0f".repeat(32),
    },
  },
};

const config = (retainedBytes: bigint): StreamConfigInput => ({
  retention_ms: 3_600_000n,
  retained_bytes_limit: retainedBytes,
  max_message_bytes: 1024n,
  max_append_bytes_per_sec: 0n,
  max_delivered_bytes_per_sec: 0n,
  max_lanes: 1n,
  idempotency_horizon_ms: 60_000n,
  default_visibility_ms: 30_000n,
  max_visibility_ms: 30_000n,
  default_max_attempts: 10n,
  fast_batch_max_ms: 0n,
  fast_batch_max_records: 0n,
});

const create: TransactionInput = {
  from: OWNER,
  cbqs: {
    CreateStream: {
      owner_nonce: 1n,
      initial_escrow: 80_000n,
      admin_key: { ed25519_seed: "0x" + "61".repeat(32) },
      delivery_class: "Standard",
      encrypted: false,
      provider: PROVIDER,
      config: config(1_073_741_824n),
    },
  },
};

/** Every value of `v` that is a bigint written as its decimal string, as a scenario writes it. */
const asStrings = (v: unknown): unknown =>
  typeof v === "bigint" ? v.toString() : Array.isArray(v) ? v.map(asStrings) : typeof v === "object" && v !== null ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, asStrings(x)])) : v;

describe("buildTransaction's typed input", () => {
  it("integers given as bigints build the same envelopes as their decimal strings", () => {
    for (const tx of [register, create, { from: OWNER, transfer: { to: PROVIDER, amount: 5n } } satisfies TransactionInput]) {
      expect(createChain().buildTransaction(tx)).toEqual(createChain().buildTransaction(asStrings(tx) as TransactionInput));
    }
  });

  it("every instruction written with the types, one block each, is executed ok", () => {
    const chain = createChain();
    const txs: TransactionInput[] = [
      register,
      create,
      { from: OWNER, cbqs: { TopUpStream: { stream_id: STREAM, amount: 200_000n } } },
      { from: OWNER, cbqs: { SettleStreamRent: { stream_id: STREAM } } },
      { from: OWNER, cbqs: { UpdateStream: { stream_id: STREAM, config: config(2_147_483_648n), rotation_key: "Keep", bump_authorization_generation: false } } },
      { from: PROVIDER, cbqs: { UpdateProvider: { metadata_hash: "0x" + "0e".repeat(32) } } },
      { from: OWNER, cbqs: { CloseStream: { stream_id: STREAM } } },
      { from: PROVIDER, cbqs: { SetProviderStatus: { status: "Draining" } } },
      { from: OWNER, transfer: { to: PROVIDER, amount: 5n } },
    ];
    const statuses = txs.map((tx) => chain.executeBlock([chain.buildTransaction(tx)]).block.receipts.map((r) => r.status).join());
    expect(statuses).toEqual(txs.map(() => "ok"));
    expect(chain.provider(Buffer.from(PROVIDER.slice(2), "hex"))?.status).toBe("Draining");
  });

  it("each arguments type has exactly the fields of its codec struct (a type-check)", () => {
    expectTypeOf<keyof CbqsInstructions>().toEqualTypeOf<T.CbqsInstructionV1["type"]>();
    expectTypeOf<keyof RegisterProviderInput>().toEqualTypeOf<keyof T.RegisterProviderArgsV1>();
    expectTypeOf<keyof UpdateProviderInput>().toEqualTypeOf<keyof T.UpdateProviderArgsV1>();
    expectTypeOf<keyof SetProviderStatusInput>().toEqualTypeOf<keyof T.SetProviderStatusArgsV1>();
    expectTypeOf<keyof CreateStreamInput>().toEqualTypeOf<keyof T.CreateStreamArgsV1>();
    expectTypeOf<keyof UpdateStreamInput>().toEqualTypeOf<keyof T.UpdateStreamArgsV1>();
    expectTypeOf<keyof TopUpStreamInput>().toEqualTypeOf<keyof T.TopUpStreamArgsV1>();
    expectTypeOf<keyof SettleStreamRentInput>().toEqualTypeOf<keyof T.SettleStreamRentArgsV1>();
    expectTypeOf<keyof CloseStreamInput>().toEqualTypeOf<keyof T.CloseStreamArgsV1>();
    expectTypeOf<keyof ActivateKeyGenerationInput>().toEqualTypeOf<keyof T.ActivateKeyGenerationArgsV1>();
    expectTypeOf<keyof StreamConfigInput>().toEqualTypeOf<keyof T.StreamConfigV1>();
    expectTypeOf<keyof BaseRateAdmissionInput>().toEqualTypeOf<keyof T.BaseRateAdmissionV1>();
    expectTypeOf<keyof ProviderEndpointInput>().toEqualTypeOf<keyof T.ProviderEndpointV1>();
    expectTypeOf<keyof SigningContextInput>().toEqualTypeOf<keyof T.CbqsSigningContextV1>();
    // The signed objects have one field more, the seed that signs them.
    expectTypeOf<Exclude<keyof PriceQuoteInput, "signer_seed">>().toEqualTypeOf<keyof T.PriceQuoteV1>();
    expectTypeOf<Exclude<keyof KeyBatchReceiptInput, "signer_seed">>().toEqualTypeOf<keyof T.KeyBatchReceiptV1>();
    expectTypeOf<keyof KeyBatchReceiptInput["served_at"]>().toEqualTypeOf<keyof T.FinalizedViewV1>();
  });

  describe("untyped JavaScript is refused at run time, naming the JSON path", () => {
    const untyped = (tx: unknown) => () => createChain().buildTransaction(tx as TransactionInput);
    const transfer = (amount: unknown) => untyped({ from: OWNER, transfer: { to: PROVIDER, amount } });

    it("a misspelled kind, instruction or field", () => {
      expect(untyped({ from: OWNER, transfr: { to: PROVIDER, amount: "1" } })).toThrow(new ScenarioError("$.transfr", "unknown field (expected one of: from, cbqs, gov, transfer, raw, expect)"));
      expect(untyped({ from: OWNER, cbqs: { CreateStrem: {} } })).toThrow(/^\$\.cbqs: unknown CbqsInstructionV1 variant "CreateStrem"; expected one of "RegisterProvider", /);
      expect(untyped({ from: OWNER, cbqs: { TopUpStream: { stream_id: STREAM, amount: "1", amout: "1" } } })).toThrow(/^\$\.cbqs\.TopUpStream\.amout: unknown field of TopUpStreamArgsV1/);
    });

    it("an integer that is not a bigint, decimal digits or a safe integer; a negative bigint", () => {
      expect(transfer(1.5)).toThrow(new ScenarioError("$.transfer.amount", "expected an unsigned integer (decimal string or safe JSON integer)"));
      expect(transfer(2 ** 53)).toThrow(ScenarioError);
      expect(transfer(-1n)).toThrow(new ScenarioError("$.transfer.amount", "expected an unsigned integer (decimal string or safe JSON integer)"));
      expect(transfer("0x10")).toThrow(ScenarioError);
      expect(transfer(18_446_744_073_709_551_616n)).toThrow(new ScenarioError("$.transfer.amount", "18446744073709551616 exceeds the maximum 18446744073709551615"));
      // A safe integer is an integer of the scenario format: JavaScript that passes one is served.
      expect(transfer(5)).not.toThrow();
    });

    it("bytes that are not hex, and a value JSON cannot write", () => {
      expect(untyped({ from: new Uint8Array(20), transfer: { to: PROVIDER, amount: "1" } })).toThrow(new ScenarioError("$.from", "expected a 0x-prefixed hex string"));
      const cycle: Record<string, unknown> = { to: PROVIDER, amount: "1" };
      cycle["self"] = cycle;
      expect(untyped({ from: OWNER, transfer: cycle })).toThrow(TypeError);
    });
  });
});
