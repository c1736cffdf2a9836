// The envelope nonce rule (D-0013 "Included transactions: nonce and fee",
// src/chain/nonces.ts) is the one the runner writes envelopes with and the replayer/t8n check
// them against.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { toHex } from "../../src/bytes.js";
import { envelopeNonces } from "../../src/chain/nonces.js";
import type { TxEnvelope } from "../../src/chain/envelope.js";
import type { BlockOutcome, TxOutcome } from "../../src/engine/chain.js";
import { firstNotIncludable } from "../../src/harness/execute.js";

const SENDERS = [1, 2, 3].map((b) => new Uint8Array(20).fill(b));

type Status = TxOutcome["status"];

const outcomeOf = (statuses: Status[]): BlockOutcome => ({
  height: 1n,
  effectiveRentHeight: 1n,
  stateRoot: new Uint8Array(32),
  outcomes: statuses.map((status) => ({ status, error: status === "excluded" ? { code: 0, name: "NotIncludable", message: "excluded" } : null }) as TxOutcome),
});

const status = fc.constantFrom<Status>("ok", "rejected", "excluded");
const block = fc
  .array(fc.record({ sender: fc.integer({ min: 0, max: 2 }), status }), { maxLength: 12 })
  .chain((txs) => fc.tuple(fc.constant(txs), fc.array(fc.bigInt({ min: 0n, max: 1000n }), { minLength: 3, maxLength: 3 })));

const startOf = (starts: bigint[]) => new Map(SENDERS.map((s, i) => [toHex(s), starts[i]!]));

describe("envelope nonces (D-0013)", () => {
  it("each nonce is the block-start nonce plus the sender's earlier INCLUDED transactions, accepted or rejected; only an excluded one does not advance it", () => {
    fc.assert(
      fc.property(block, ([txs, starts]) => {
        const { nonces, after } = envelopeNonces(
          txs.map((t) => SENDERS[t.sender]!),
          outcomeOf(txs.map((t) => t.status)),
          startOf(starts),
        );
        txs.forEach((t, i) => {
          const earlier = txs.slice(0, i).filter((u) => u.sender === t.sender && u.status !== "excluded").length;
          expect(nonces[i]).toBe(starts[t.sender]! + BigInt(earlier));
        });
        SENDERS.forEach((s, k) => {
          const included = txs.filter((t) => t.sender === k && t.status !== "excluded").length;
          expect(after.get(toHex(s))).toBe(starts[k]! + BigInt(included));
        });
      }),
    );
  });

  it("the replayer's check accepts envelopes written with the rule and names the first excluded transaction or the first nonce that breaks it", () => {
    fc.assert(
      fc.property(block, fc.nat(), ([txs, starts], pick) => {
        // Without exclusions first: every envelope written with the rule passes.
        const included = txs.map((t) => ({ ...t, status: t.status === "excluded" ? ("rejected" as const) : t.status }));
        const outcome = outcomeOf(included.map((t) => t.status));
        const { nonces } = envelopeNonces(
          included.map((t) => SENDERS[t.sender]!),
          outcome,
          startOf(starts),
        );
        const envs = included.map((t, i): TxEnvelope => ({ chain_id: 1n, nonce: nonces[i]!, tx: { from: SENDERS[t.sender]!, body: { kind: "transfer", to: SENDERS[0]!, amount: 0n } } }));
        expect(firstNotIncludable(envs, outcome, startOf(starts))).toBeNull();
        if (envs.length === 0) return;
        const bad = pick % envs.length;
        const wrong = [...envs];
        wrong[bad] = { ...envs[bad]!, nonce: nonces[bad]! + 1n };
        expect(firstNotIncludable(wrong, outcome, startOf(starts))).toMatchObject({ index: bad, kind: "nonce", envelope: nonces[bad]! + 1n, account: nonces[bad]! });
        // An excluded transaction is named before any later nonce problem.
        const statuses = included.map((t) => t.status as Status);
        statuses[bad] = "excluded";
        expect(firstNotIncludable(envs, outcomeOf(statuses), startOf(starts))).toMatchObject({ index: bad, kind: "excluded" });
      }),
    );
  });
});
