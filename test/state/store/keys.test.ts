import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { keccak_256 } from "@noble/hashes/sha3.js";
import {
  accountKey, actorDeadLetterTailKey, actorEventsKey, actorKey, actorKvBytesKey, actorKvCountKey,
  actorLibPinKey, actorMailboxHeadKey, actorMailboxTailKey, actorStorageKey, actorTimerCountKey,
  actorTimerIdsKey, codeKey, decodeSlot, deferredActorCountKey, deferredIndexKey, deferredTxBlockKey,
  deferredTxKey, encodeSlot, eventSubIndexKey, eventSubKey, fairnessKey, libraryKey, mailboxDeadLetterKey,
  mailboxKey, parseStateKey, publishRootDedupKey, pvmPerInstrGasKey, SLOT_HASHED, StateKeyError, StatePrefix,
  systemStateKey, timerIndexKey, timerKey, txReturnDataKey, checkStateKey,
} from "../../../state/kv/keys.js";
import { toHex } from "../../../src/bytes.js";

const addr = Uint8Array.from({ length: 20 }, (_, i) => 0xa0 + i);
const h32 = Uint8Array.from({ length: 32 }, (_, i) => i + 1);
const zeros = (n: number) => new Uint8Array(n);
// Independent reference: noble's keccak directly, layouts spelled out from the §4.2 table.
const kec = (b: Uint8Array) => keccak_256(b);
const cat = (...p: Uint8Array[]) => Uint8Array.from(p.flatMap((x) => [...x]));
const be64 = (v: bigint) => Uint8Array.from({ length: 8 }, (_, i) => Number((v >> BigInt(8 * (7 - i))) & 0xffn));
const key = (prefix: number, ...body: Uint8Array[]) => {
  const b = cat(...body);
  return cat(Uint8Array.of(prefix), b, zeros(53 - b.length));
};
const enc = (s: string) => new TextEncoder().encode(s);

describe("state keys (CIP-4 §4.1/§4.2)", () => {
  it("CIP-4 §4.2: the table's prefixes run 0x01–0x1D contiguously, no 0x00 (29 rows; D-0021)", () => {
    const values = Object.values(StatePrefix).sort((a, b) => a - b);
    expect(values).toEqual(Array.from({ length: 0x1d }, (_, i) => i + 1));
    expect(values[0]).toBe(0x01);
    expect(values[values.length - 1]).toBe(0x1d);
    expect(new Set(values).size).toBe(values.length);
  });

  const cases: Array<[string, Uint8Array, Uint8Array]> = [
    ["0x01 Account", accountKey(addr), key(0x01, addr)],
    ["0x02 Actor", actorKey(addr), key(0x02, addr)],
    ["0x03 ActorStorage (short key)", actorStorageKey(addr, enc("abc")), key(0x03, addr, enc("abc"), zeros(29), Uint8Array.of(3))],
    ["0x03 ActorStorage (33-byte key hashed)", actorStorageKey(addr, zeros(33)), key(0x03, addr, kec(zeros(33)), Uint8Array.of(0x80))],
    ["0x04 Mailbox", mailboxKey(addr, 0x0102n), key(0x04, addr, be64(0x0102n))],
    ["0x05 Timer", timerKey(enc("t1")), key(0x05, kec(enc("t1")))],
    ["0x06 TimerIndex", timerIndexKey(77n), key(0x06, kec(be64(77n)))],
    ["0x07 DeferredTx", deferredTxKey(h32), key(0x07, kec(h32))],
    ["0x08 DeferredIndex", deferredIndexKey(h32), key(0x08, kec(h32))],
    ["0x09 ActorEvents", actorEventsKey(addr), key(0x09, addr)],
    ["0x0A SystemState", systemStateKey("system:cip4:rent_config"), key(0x0a, kec(enc("system:cip4:rent_config")))],
    ["0x0B ActorTimerCount", actorTimerCountKey(addr), key(0x0b, addr)],
    ["0x0C DeferredActorCount", deferredActorCountKey(addr), key(0x0c, addr)],
    ["0x0D DeferredTxBlock", deferredTxBlockKey(h32), key(0x0d, kec(h32))],
    ["0x0E PvmPerInstrGas", pvmPerInstrGasKey(h32), key(0x0e, h32)],
    ["0x0F Code", codeKey(h32), key(0x0f, h32)],
    ["0x10 ActorMailboxHead", actorMailboxHeadKey(addr), key(0x10, addr)],
    ["0x11 ActorMailboxTail", actorMailboxTailKey(addr), key(0x11, addr)],
    ["0x12 ActorKvCount", actorKvCountKey(addr), key(0x12, addr)],
    ["0x13 ActorKvBytes", actorKvBytesKey(addr), key(0x13, addr)],
    ["0x14 Library", libraryKey(addr, enc("lib")), key(0x14, addr, enc("lib"), zeros(29), Uint8Array.of(3))],
    ["0x15 ActorLibPin", actorLibPinKey(addr, enc("pin")), key(0x15, addr, enc("pin"), zeros(29), Uint8Array.of(3))],
    ["0x16 TxReturnData", txReturnDataKey(h32), key(0x16, h32)],
    ["0x17 PublishRootDedup", publishRootDedupKey(9n), key(0x17, be64(9n))],
    ["0x18 EventSub", eventSubKey(enc("sub")), key(0x18, kec(enc("sub")))],
    ["0x19 EventSubIndex", eventSubIndexKey(addr, "cbqs.x"), key(0x19, kec(cat(addr, enc("cbqs.x"))))],
    ["0x1A ActorTimerIds", actorTimerIdsKey(addr), key(0x1a, addr)],
    ["0x1B Fairness", fairnessKey(addr), key(0x1b, addr)],
    ["0x1C MailboxDeadLetter", mailboxDeadLetterKey(addr, 5n), key(0x1c, addr, be64(5n))],
    ["0x1D ActorDeadLetterTail", actorDeadLetterTailKey(addr), key(0x1d, addr)],
  ];
  for (const [name, actual, expected] of cases) {
    it(`CIP-4 §4.2: ${name} key layout is 54 bytes as in the table`, () => {
      expect(actual.length).toBe(54);
      expect(toHex(actual)).toBe(toHex(expected));
      expect(parseStateKey(actual).prefix).toBe(checkStateKey(actual));
      expect(StatePrefix[parseStateKey(actual).prefix]).toBe(actual[0]);
    });
  }

  it("CIP-4 §4.2: every constructor is covered above (one per prefix)", () => {
    expect(new Set(cases.map(([, k]) => k[0])).size).toBe(Object.keys(StatePrefix).length);
  });

  it("CIP-4 §4.1: keys of the wrong length or with an unknown prefix are typed errors", () => {
    expect(() => checkStateKey(new Uint8Array(53).fill(1))).toThrow(StateKeyError);
    expect(() => checkStateKey(new Uint8Array(55).fill(1))).toThrow(StateKeyError);
    expect(() => checkStateKey(new Uint8Array(54))).toThrow(/unknown state key prefix 0x00/);
    const k = accountKey(addr);
    k[0] = 0x1e;
    expect(() => parseStateKey(k)).toThrow(StateKeyError);
    expect(() => accountKey(zeros(19))).toThrow(StateKeyError);
    expect(() => deferredTxKey(zeros(31))).toThrow(StateKeyError);
  });

  it("CIP-4 §4.2: parse rejects non-zero padding and names the fields", () => {
    const k = accountKey(addr);
    k[53] = 1;
    expect(() => parseStateKey(k)).toThrow(/padding/);
    const m = parseStateKey(mailboxKey(addr, 42n));
    expect(m.layout === "addressIndex" && m.index).toBe(42n);
    const d = parseStateKey(publishRootDedupKey(2n ** 64n - 1n));
    expect(d.layout === "height" && d.height).toBe(2n ** 64n - 1n);
  });

  it("CIP-4 §4.2: ActorStorage slot — verbatim ≤32 bytes, keccak256 with HASHED flag above", () => {
    expect(decodeSlot(encodeSlot(new Uint8Array(32).fill(7)))).toEqual({ hashed: false, userKey: new Uint8Array(32).fill(7) });
    expect(decodeSlot(encodeSlot(new Uint8Array(0)))).toEqual({ hashed: false, userKey: new Uint8Array(0) });
    const long = new Uint8Array(100).fill(9);
    const slot = encodeSlot(long);
    expect(slot[32]).toBe(SLOT_HASHED);
    expect(decodeSlot(slot)).toEqual({ hashed: true, keyHash: kec(long) });
    expect(() => decodeSlot(cat(zeros(32), Uint8Array.of(33)))).toThrow(StateKeyError);
    expect(() => decodeSlot(cat(Uint8Array.of(0, 1), zeros(30), Uint8Array.of(1)))).toThrow(/padding/);
  });

  it("CIP-4 §4.2: the ActorStorage slot encoding is injective (property)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), fc.uint8Array({ maxLength: 40 }), (a, b) => {
        const same = toHex(a) === toHex(b);
        return (toHex(actorStorageKey(addr, a)) === toHex(actorStorageKey(addr, b))) === same;
      }),
      { numRuns: 2000 },
    );
    // The classic ambiguity: a key and the same key with trailing zero bytes.
    expect(toHex(encodeSlot(Uint8Array.of(1)))).not.toBe(toHex(encodeSlot(Uint8Array.of(1, 0))));
  });
});
