import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  decodeStateValue, decodeStateValueAs, encodeStateValue, MAX_ACTOR_EVENTS, StateValueError, ValueTag,
  type StateValue,
} from "../../../state/kv/value.js";
import { toHex } from "../../../src/bytes.js";

const emitter = new Uint8Array(20).fill(0x17);
const event = (i: number) => ({ emitter, topic: `cbqs.t${i}`, payload: Uint8Array.of(i & 0xff) });
const u64 = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n });

const arbValue: fc.Arbitrary<StateValue> = fc.oneof(
  fc.record({ kind: fc.constant("Account" as const), nonce: u64, balance: u64 }),
  fc.record({ kind: fc.constant("StorageSlot" as const), bytes: fc.uint8Array({ maxLength: 64 }) }),
  fc.record({ kind: fc.constant("SystemBytes" as const), bytes: fc.uint8Array({ maxLength: 64 }) }),
  fc.record({
    kind: fc.constant("ActorEventList" as const),
    events: fc.array(
      fc.record({ emitter: fc.uint8Array({ minLength: 20, maxLength: 20 }), topic: fc.string(), payload: fc.uint8Array({ maxLength: 16 }) }),
      { maxLength: 5 },
    ),
  }),
  fc.record({
    kind: fc.constantFrom("MailboxHead" as const, "MailboxTail" as const, "KvCount" as const, "KvBytes" as const, "DeadLetterTail" as const),
    value: u64,
  }),
);

describe("StateValue codec (CIP-4 §4.3, Appendix A)", () => {
  it("CIP-4 §4.3: every variant round-trips and re-encodes to the same bytes (property)", () => {
    fc.assert(
      fc.property(arbValue, (v) => {
        const bytes = encodeStateValue(v);
        const back = decodeStateValue(bytes);
        expect(back).toEqual(v);
        expect(toHex(encodeStateValue(back))).toBe(toHex(bytes));
      }),
      { numRuns: 500 },
    );
  });

  it("CIP-4 Appendix A / CIP-39 §5: Account is tag ‖ nonce u64 BE ‖ balance u64 BE", () => {
    const bytes = encodeStateValue({ kind: "Account", nonce: 1n, balance: 0x0102n });
    expect(toHex(bytes)).toBe("0x01" + "0000000000000001" + "0000000000000102");
    expect(() => encodeStateValue({ kind: "Account", nonce: 0n, balance: 2n ** 64n })).toThrow(StateValueError);
    expect(() => encodeStateValue({ kind: "Account", nonce: -1n, balance: 0n })).toThrow(StateValueError);
    expect(() => decodeStateValue(bytes.subarray(0, 16))).toThrow(StateValueError);
    expect(() => decodeStateValue(Uint8Array.of(...bytes, 0))).toThrow(StateValueError);
  });

  it("CIP-4 §4.2: mailbox head/tail and dead-letter tail are BE u64, KV count/bytes LE u64", () => {
    const payload = (kind: "MailboxHead" | "MailboxTail" | "DeadLetterTail" | "KvCount" | "KvBytes") =>
      toHex(encodeStateValue({ kind, value: 1n }).subarray(1));
    for (const k of ["MailboxHead", "MailboxTail", "DeadLetterTail"] as const) expect(payload(k)).toBe("0x0000000000000001");
    for (const k of ["KvCount", "KvBytes"] as const) expect(payload(k)).toBe("0x0100000000000000");
  });

  it("CIP-4 §4.3/§11: ActorEventList decode bound is 1,000 entries, checked before reading them", () => {
    const ok = encodeStateValue({ kind: "ActorEventList", events: Array.from({ length: MAX_ACTOR_EVENTS }, (_, i) => event(i)) });
    expect(decodeStateValueAs(ok, "ActorEventList").events.length).toBe(MAX_ACTOR_EVENTS);
    expect(() =>
      encodeStateValue({ kind: "ActorEventList", events: Array.from({ length: MAX_ACTOR_EVENTS + 1 }, (_, i) => event(i)) }),
    ).toThrow(StateValueError);
    // A header claiming 1,001 (varint 0xe9 0x07) or 2^32-1 entries with no bodies is rejected by the bound itself.
    expect(() => decodeStateValue(Uint8Array.of(ValueTag.ActorEventList, 0xe9, 0x07))).toThrow(/exceeds 1000/);
    expect(() => decodeStateValue(Uint8Array.of(ValueTag.ActorEventList, 0xff, 0xff, 0xff, 0xff, 0x0f))).toThrow(/exceeds 1000/);
    // An overlong count (1 written as 0x81 0x00) is not a second encoding of the same list.
    expect(() => decodeStateValue(Uint8Array.of(ValueTag.ActorEventList, 0x81, 0x00))).toThrow(/overlong/);
    // 2 entries claimed, bytes for at most one.
    const one = encodeStateValue({ kind: "ActorEventList", events: [event(1)] });
    one[1] = 2;
    expect(() => decodeStateValue(one)).toThrow(StateValueError);
  });

  it("CIP-4 §4.3: malformed values are typed errors (unknown tag, trailing bytes, bad UTF-8, oversized length)", () => {
    expect(() => decodeStateValue(new Uint8Array(0))).toThrow(StateValueError);
    expect(() => decodeStateValue(Uint8Array.of(0x02))).toThrow(/unknown state value discriminant 0x02/);
    const list = encodeStateValue({ kind: "ActorEventList", events: [event(1)] });
    expect(() => decodeStateValue(Uint8Array.of(...list, 0))).toThrow(/trailing/);
    const badUtf8 = encodeStateValue({ kind: "ActorEventList", events: [{ emitter, topic: "a", payload: new Uint8Array(0) }] });
    badUtf8[2 + 20 + 1] = 0xff; // tag, count, emitter, topic length, then the topic byte
    expect(() => decodeStateValue(badUtf8)).toThrow(/UTF-8/);
    const bigLen = encodeStateValue({ kind: "ActorEventList", events: [event(1)] });
    bigLen.set([0xff, 0xff, 0xff, 0xff, 0x0f], 2 + 20); // topic length u32::MAX
    expect(() => decodeStateValue(bigLen)).toThrow(/exceeds remaining input/);
  });

  it("CIP-4 §4.3: decodeStateValueAs names the variant it expected", () => {
    const slot = encodeStateValue({ kind: "StorageSlot", bytes: Uint8Array.of(1, 2) });
    expect(decodeStateValueAs(slot, "StorageSlot").bytes).toEqual(Uint8Array.of(1, 2));
    expect(() => decodeStateValueAs(slot, "Account")).toThrow(/expected a value of kind Account, got StorageSlot/);
  });
});
