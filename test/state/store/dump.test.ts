import { describe, expect, it } from "vitest";
import { diffDumps, diffIsEmpty, dumpEntries, dumpEntry, dumpState, DumpError, loadDump, DUMP_FORMAT } from "../../../state/kv/dump.js";
import { accountKey, actorStorageKey, actorKvCountKey, systemStateKey } from "../../../state/kv/keys.js";
import { encodeStateValue } from "../../../state/kv/value.js";
import { MemoryStateStore } from "../../../state/store/store.js";
import { fromHex, toHex } from "../../../src/bytes.js";
import { RecordingCommitment } from "./recording-commitment.js";

const A = new Uint8Array(20).fill(0x11);
const R = new Uint8Array(20);
R[19] = 0x17;
const acct = (balance: bigint) => encodeStateValue({ kind: "Account", nonce: 2n, balance });
const slot = encodeStateValue({ kind: "StorageSlot", bytes: Uint8Array.of(0xab) });

describe("state dump and diff (docs/reference/formats/state-dump.md)", () => {
  it("CIP-4 §4: dump lists keys ascending as lowercase hex with decoded views by prefix and discriminant", () => {
    const store = MemoryStateStore.fromEntries([
      [systemStateKey("cbqs.x"), encodeStateValue({ kind: "SystemBytes", bytes: Uint8Array.of(0xCD) })],
      [actorStorageKey(R, Uint8Array.of(1, 2)), slot],
      [accountKey(A), acct(10n)],
      [actorKvCountKey(A), encodeStateValue({ kind: "KvCount", value: 3n })],
    ], 4n, new RecordingCommitment());
    const dump = dumpState(store, { height: 4n });
    expect(dump.format).toBe(DUMP_FORMAT);
    expect(dump.height).toBe("4");
    expect(dump.state_root).toBe(toHex(store.root()));
    expect(dump.entries.map((e) => e.key)).toEqual([...dump.entries.map((e) => e.key)].sort());
    for (const e of dump.entries) expect(e.key + e.value).toBe((e.key + e.value).toLowerCase());
    const byPrefix = Object.fromEntries(dump.entries.map((e) => [(e.decoded!.key as { prefix: string }).prefix, e.decoded]));
    expect(byPrefix.Account).toEqual({
      key: { prefix: "Account", address: toHex(A) },
      value: { kind: "Account", nonce: "2", balance: "10" },
    });
    expect(byPrefix.ActorStorage!.key).toEqual({ prefix: "ActorStorage", address: toHex(R), slot: { user_key: "0x0102" } });
    expect(byPrefix.ActorKvCount!.value).toEqual({ kind: "KvCount", value: "3" });
    expect(byPrefix.SystemState!.value).toEqual({ kind: "SystemBytes", bytes: "0xcd" });
  });

  it("KvCount byte order (CIP-4 §4.2): hand-written little-endian value bytes decode to their number, and encode back to them", () => {
    const bytes = fromHex("0x0e" + "0201000000000000"); // tag 0x0e, 258 as 8-byte LE
    const entry = dumpEntry(actorKvCountKey(A), bytes);
    expect(entry.decoded!.value).toEqual({ kind: "KvCount", value: "258" });
    expect(toHex(encodeStateValue({ kind: "KvCount", value: 258n }))).toBe(toHex(bytes));
  });

  it("docs/reference/formats/state-dump.md: a slot decoder hook turns StorageSlot bytes into a readable record", () => {
    const dump = dumpEntries([[actorStorageKey(R, Uint8Array.of(1)), slot]], {
      decodeSlot: (key, bytes) => (key.prefix === "ActorStorage" ? { first: bytes[0] } : undefined),
    });
    expect(dump.entries[0]!.decoded!.value).toEqual({ kind: "StorageSlot", record: { first: 0xab } });
  });

  it("docs/reference/formats/state-dump.md: an undecodable value is shown as an error, the hex is kept", () => {
    const dump = dumpEntries([[accountKey(A), Uint8Array.of(0x01, 0x00)]]);
    expect(dump.entries[0]!.value).toBe("0x0100");
    expect(dump.entries[0]!.decoded!.value).toMatchObject({ error: expect.stringMatching(/Account value must be 17 bytes/) });
  });

  it("docs/reference/formats/state-dump.md: loadDump round-trips a dump and rejects bad keys, duplicates and wrong formats", () => {
    const entries: Array<[Uint8Array, Uint8Array]> = [[accountKey(A), acct(1n)], [actorStorageKey(R, Uint8Array.of(1)), slot]];
    const json = JSON.parse(JSON.stringify(dumpEntries(entries)));
    const back = loadDump(json);
    expect([...back].map(([k, v]) => [toHex(k), toHex(v)])).toEqual(entries.map(([k, v]) => [toHex(k), toHex(v)]));
    expect(() => loadDump({ format: "other", entries: [] })).toThrow(DumpError);
    expect(() => loadDump({ format: DUMP_FORMAT, entries: [{ key: "0x01", value: "0x" }] })).toThrow(/54 bytes/);
    expect(() => loadDump({ format: DUMP_FORMAT, entries: [{ key: toHex(accountKey(A)), value: "zz" }] })).toThrow(DumpError);
    const dup = { key: toHex(accountKey(A)), value: toHex(acct(1n)) };
    expect(() => loadDump({ format: DUMP_FORMAT, entries: [dup, dup] })).toThrow(/duplicate/);
    expect(() => loadDump({ format: DUMP_FORMAT, entries: [{ key: toHex(accountKey(A)), value: "0x00" }] })).toThrow(/\$\.entries\[0\]\.value: unknown state value/);
    expect(() => loadDump({ format: DUMP_FORMAT, entries: [], extra: 1 })).toThrow(/\$\.extra: unknown field/);
    expect(() => loadDump({ format: DUMP_FORMAT, entries: [{ ...dup, note: "x" }] })).toThrow(/\$\.entries\[0\]\.note: unknown field/);
  });

  it("docs/reference/formats/state-dump.md: diff reports added, removed and changed keys; equal states have an empty diff", () => {
    const B = new Uint8Array(20).fill(0x22);
    const a: Array<[Uint8Array, Uint8Array]> = [[accountKey(A), acct(1n)], [accountKey(B), acct(5n)]];
    const b: Array<[Uint8Array, Uint8Array]> = [[accountKey(A), acct(2n)], [actorStorageKey(R, Uint8Array.of(1)), slot]];
    const d = diffDumps(a, b);
    expect(d.added.map((e) => e.key)).toEqual([toHex(actorStorageKey(R, Uint8Array.of(1)))]);
    expect(d.removed.map((e) => e.key)).toEqual([toHex(accountKey(B))]);
    expect(d.changed.map((c) => [c.key, (c.before.decoded!.value as { balance: string }).balance, (c.after.decoded!.value as { balance: string }).balance]))
      .toEqual([[toHex(accountKey(A)), "1", "2"]]);
    expect(diffIsEmpty(d)).toBe(false);
    expect(diffIsEmpty(diffDumps(a, [...a].reverse()))).toBe(true);
  });
});
