// The envelope nonce rule (docs/decisions.md "Envelope nonce", src/chain/nonces.ts) is the one
// the runner writes envelopes with and the replayer/t8n check them against.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { toHex } from "../../src/bytes.js";
import { envelopeNonces } from "../../src/chain/nonces.js";
import type { TxEnvelope } from "../../src/chain/envelope.js";
import type { BlockOutcome, TxOutcome } from "../../src/engine/chain.js";
import { firstNonceMismatch } from "../../src/harness/execute.js";

const SENDERS = [1, 2, 3].map((b) => new Uint8Array(20).fill(b));

const outcomeOf = (oks: boolean[]): BlockOutcome => ({
  height: 1n,
  effectiveRentHeight: 1n,
  stateRoot: new Uint8Array(32),
  outcomes: oks.map((ok) => ({ status: ok ? "ok" : "rejected" }) as TxOutcome),
});

const block = fc
  .array(fc.record({ sender: fc.integer({ min: 0, max: 2 }), ok: fc.boolean() }), { maxLength: 12 })
  .chain((txs) => fc.tuple(fc.constant(txs), fc.array(fc.bigInt({ min: 0n, max: 1000n }), { minLength: 3, maxLength: 3 })));

const startOf = (starts: bigint[]) => new Map(SENDERS.map((s, i) => [toHex(s), starts[i]!]));

describe("envelope nonces (docs/decisions.md \"Envelope nonce\")", () => {
  it("each nonce is the block-start nonce plus the sender's earlier ACCEPTED transactions; rejections do not advance it", () => {
    fc.assert(
      fc.property(block, ([txs, starts]) => {
        const { nonces, after } = envelopeNonces(
          txs.map((t) => SENDERS[t.sender]!),
          outcomeOf(txs.map((t) => t.ok)),
          startOf(starts),
        );
        txs.forEach((t, i) => {
          const earlierOk = txs.slice(0, i).filter((u) => u.sender === t.sender && u.ok).length;
          expect(nonces[i]).toBe(starts[t.sender]! + BigInt(earlierOk));
        });
        SENDERS.forEach((s, k) => {
          const ok = txs.filter((t) => t.sender === k && t.ok).length;
          expect(after.get(toHex(s))).toBe(starts[k]! + BigInt(ok));
        });
      }),
    );
  });

  it("the replayer's check accepts envelopes written with the rule and names the first one that breaks it", () => {
    fc.assert(
      fc.property(block, fc.nat(), ([txs, starts], pick) => {
        const outcome = outcomeOf(txs.map((t) => t.ok));
        const { nonces } = envelopeNonces(
          txs.map((t) => SENDERS[t.sender]!),
          outcome,
          startOf(starts),
        );
        const envs = txs.map((t, i): TxEnvelope => ({ chain_id: 1n, nonce: nonces[i]!, tx: { from: SENDERS[t.sender]!, body: { kind: "transfer", to: SENDERS[0]!, amount: 0n } } }));
        expect(firstNonceMismatch(envs, outcome, startOf(starts))).toBeNull();
        if (envs.length === 0) return;
        const bad = pick % envs.length;
        envs[bad] = { ...envs[bad]!, nonce: nonces[bad]! + 1n };
        expect(firstNonceMismatch(envs, outcome, startOf(starts))).toEqual({ index: bad, envelope: nonces[bad]! + 1n, account: nonces[bad]! });
      }),
    );
  });
});
