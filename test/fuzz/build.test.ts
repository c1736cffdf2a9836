// The block builder (src/fuzz/build.ts) byte for byte on hand-made plans: each kind of junk
// envelope is the documented corruption of a valid envelope of its block (docs/reference/fuzzer.md §4
// "Junk envelopes") at its planned position; a replay is an envelope an earlier block included;
// an excluded transaction keeps its place and its sender's nonce; the fixture's blocks chain by
// hash; the genesis state is there only before the first block.
import { describe, expect, it } from "vitest";
import { bytesEqual, fromHex } from "../../src/bytes.js";
import { decodeEnvelope, encodeEnvelope } from "../../src/chain/envelope.js";
import { genesisHash, headerHash } from "../../src/chain/block.js";
import { ChainBuilder, FuzzInternalError, type BuiltBlock } from "../../src/fuzz/build.js";
import { SETUP_ACTIONS, type Action } from "../../src/fuzz/model.js";
import type { FuzzChain, Junk } from "../../src/fuzz/plan.js";
import { OWNERS, PLAIN_GENESIS, SPONSOR, U64_MAX } from "../../src/fuzz/world.js";
import type { JsonObject } from "../../src/scenario/json.js";

const step = { k: "step", blocks: 1 } as const;
const transfer = (from: number, to: number): Action => ({ k: "transfer", from, to, amount: 1n });
const junk = (kind: Junk["kind"], at: number, pick: number, bytes = new Uint8Array(0)): Junk => ({ kind, at, pick, bytes });

function buildAll(plan: FuzzChain): { builder: ChainBuilder; blocks: BuiltBlock[] } {
  const builder = new ChainBuilder(plan);
  const blocks: BuiltBlock[] = [];
  while (!builder.done) blocks.push(builder.build());
  return { builder, blocks };
}

/** The valid (included) envelopes of a block, in order: the bases junk is made from. */
const included = (b: BuiltBlock): Uint8Array[] => b.inputs.txs.filter((_, i) => !b.kinds[i]!.startsWith("junk: ") && !b.kinds[i]!.startsWith("not includable: "));

describe("junk envelopes, byte for byte (src/fuzz/build.ts)", () => {
  // Block 1: the setup and two transfers (owner 0 → 1, owner 1 → 2), then one junk envelope of
  // each kind; block 2: no action at all, a replay and a truncated envelope; block 3: a transfer, a
  // replay and a "nonce" junk.
  const plan: FuzzChain = {
    genesis: PLAIN_GENESIS,
    blocks: [
      {
        gap: step,
        actions: [...SETUP_ACTIONS, transfer(0, 1), transfer(1, 2)],
        junk: [
          junk("truncate", 0, 1_003),
          junk("trailing", 1_000, 300),
          junk("version", 2, 5),
          junk("kind", 3, 6),
          junk("chain", 4, 7),
          junk("nonce", 5, 8),
          junk("replay", 6, 9),
          junk("bytes", 7, 0, Uint8Array.of(1, 2, 3)),
        ],
      },
      { gap: step, actions: [], junk: [junk("replay", 0, 4), junk("truncate", 5, 3)] },
      { gap: step, actions: [transfer(0, 1)], junk: [junk("replay", 1, 10_000), junk("nonce", 2, 0)] },
    ],
  };
  // Built in each test, not once while the file is collected: a mutation test activates its mutant
  // per test, and a chain built before would test the unmutated builder.
  const built = () => {
    const { builder, blocks } = buildAll(plan);
    const [first, second, third] = blocks as [BuiltBlock, BuiltBlock, BuiltBlock];
    return { builder, blocks, first, second, third, valid: included(first) };
  };
  const n = SETUP_ACTIONS.length + 2;

  it("each junk envelope goes in at its position modulo the list so far plus one; the valid ones keep their order", () => {
    const { first, valid } = built();
    // Inserted one after the other: position at % (length so far + 1).
    const order: string[] = valid.map((_, i) => `valid ${i}`);
    const kinds = ["truncate", "trailing", "version", "kind", "chain", "nonce", "replay", "bytes"];
    const ats = [0, 1_000, 2, 3, 4, 5, 6, 7];
    kinds.forEach((k, i) => order.splice(ats[i]! % (order.length + 1), 0, k));
    const words: Record<string, string> = {
      truncate: "junk: truncated envelope",
      trailing: "junk: envelope with a trailing byte",
      version: "junk: envelope version 2",
      kind: "junk: envelope of an unknown kind",
      chain: "junk: envelope for another chain_id",
      nonce: "junk: envelope with a nonce far ahead",
      replay: "junk: replayed envelope (stale nonce)",
      bytes: "junk: random bytes",
    };
    expect(first.kinds.map((k) => (k.startsWith("junk: ") ? k : "valid"))).toEqual(order.map((o) => (o.startsWith("valid") ? "valid" : words[o])));
    expect(first.kinds.filter((k) => !k.startsWith("junk: ")).slice(-2)).toEqual(["Transfer", "Transfer"]);
    expect(valid).toHaveLength(n);
    expect(first.transactions.map((t) => t === null)).toEqual(first.kinds.map((k) => k.startsWith("junk: ")));
    // The result leaves out exactly the junk, by position, in order.
    const rejected = (first.result["rejected"] as Array<{ index: string }>).map((r) => Number(r.index));
    expect(rejected).toEqual(first.kinds.flatMap((k, i) => (k.startsWith("junk: ") ? [i] : [])));
    expect((first.result["receipts"] as Array<{ index: string }>).map((r) => Number(r.index))).toEqual(first.kinds.flatMap((k, i) => (k.startsWith("junk: ") ? [] : [i])));
  });

  const junkOf = (b: BuiltBlock, word: string): Uint8Array[] => b.inputs.txs.filter((_, i) => b.kinds[i] === `junk: ${word}`);

  it("truncated: the envelope picked (pick mod the valid ones) cut to pick mod its length bytes", () => {
    const { first, valid } = built();
    const base = valid[1_003 % n]!;
    expect(junkOf(first, "truncated envelope")).toEqual([base.subarray(0, 1_003 % base.length)]);
  });

  it("a trailing byte: the envelope picked with pick's low byte after it", () => {
    const { first, valid } = built();
    expect(junkOf(first, "envelope with a trailing byte")).toEqual([Uint8Array.of(...valid[300 % n]!, 300 & 0xff)]);
  });

  it("version 2: the envelope picked with its version byte (offset 9) set to 2, nothing else changed", () => {
    const { first, valid } = built();
    const base = valid[5 % n]!;
    const [v] = junkOf(first, "envelope version 2");
    expect(v!.length).toBe(base.length);
    expect(v![9]).toBe(2);
    expect([...v!].map((b, i) => (b === base[i] ? null : i))).toEqual([...base].map((_, i) => (i === 9 ? 9 : null)));
  });

  it("an unknown kind: the first letter of the kind's text replaced by X", () => {
    const { first, valid } = built();
    const base = valid[6 % n]!;
    const [k] = junkOf(first, "envelope of an unknown kind");
    // The byte after the text head of the "kind" key's value: the first letter of the kind.
    const at = Buffer.from(base).indexOf(Buffer.from("kind")) + 5;
    expect([...k!].map((b, i) => (b === base[i] ? null : i))).toEqual([...base].map((_, i) => (i === at ? at : null)));
    expect(k![at]).toBe(0x58);
  });

  it("another chain_id: the envelope picked re-encoded with chain_id + 1, its nonce and transaction kept", () => {
    const { first, valid } = built();
    const base = decodeEnvelope(valid[7 % n]!);
    const [c] = junkOf(first, "envelope for another chain_id");
    expect(c).toEqual(encodeEnvelope({ ...base, chain_id: base.chain_id + 1n }));
    expect(decodeEnvelope(c!).chain_id).toBe(base.chain_id + 1n);
  });

  it("a nonce far ahead: 1,000 past the envelope picked; a replay before anything was included is the same", () => {
    const { first, valid } = built();
    const far = (pick: number) => {
      const e = decodeEnvelope(valid[pick % n]!);
      return encodeEnvelope({ ...e, nonce: e.nonce + 1_000n });
    };
    expect(junkOf(first, "envelope with a nonce far ahead")).toEqual([far(8)]);
    expect(junkOf(first, "replayed envelope (stale nonce)")).toEqual([far(9)]);
  });

  it("random bytes: the planned bytes as they are", () => {
    const { first } = built();
    expect(junkOf(first, "random bytes")).toEqual([Uint8Array.of(1, 2, 3)]);
  });

  it("a replay is an envelope an earlier block included (pick mod all of them, in order); a block without envelopes corrupts a transfer of owner 0's", () => {
    const { second, third, valid } = built();
    expect(second.kinds).toEqual(["junk: replayed envelope (stale nonce)", "junk: truncated envelope"]);
    expect(second.inputs.txs[0]).toEqual(valid[4 % n]);
    const fallback = encodeEnvelope({ chain_id: decodeEnvelope(valid[0]!).chain_id, nonce: 0n, tx: { from: fromHex(OWNERS[0]!), body: { kind: "transfer", to: fromHex(OWNERS[1]!), amount: 1n } } });
    expect(second.inputs.txs[1]).toEqual(fallback.subarray(0, 3 % fallback.length));
    // Block 3: the envelopes of blocks 1 and 2 (none), then of block 3 itself are not yet consumed.
    expect(third.inputs.txs[1]).toEqual(valid[10_000 % n]);
    // A "nonce" junk is never a replay, though envelopes were consumed by then: 1,000 past block 3's transfer.
    const transfer3 = decodeEnvelope(third.inputs.txs[0]!);
    expect(third.kinds).toEqual(["Transfer", "junk: replayed envelope (stale nonce)", "junk: envelope with a nonce far ahead"]);
    expect(third.inputs.txs[2]).toEqual(encodeEnvelope({ ...transfer3, nonce: transfer3.nonce + 1_000n }));
  });

  it("the fixture's blocks chain by hash from genesis, each with its post-state; the t8n env carries no parent hash", () => {
    const { builder, blocks, first, second } = built();
    const g = builder.fixture.genesis;
    let parent = genesisHash(g.chain_instance_id, g.config.timestamp, g.state_root);
    expect(builder.fixture.blocks).toHaveLength(3);
    for (const [i, b] of builder.fixture.blocks.entries()) {
      expect(b.block_hash).toEqual(headerHash(g.chain_instance_id, b.height, b.timestamp, parent, b.state_root, b));
      parent = b.block_hash;
      expect(b.post_state).toEqual(blocks[i]!.postState);
      expect(blocks[i]!.inputs.env.parent_hash).toBeNull();
    }
    expect(blocks.map((b) => b.height)).toEqual([1n, 2n, 3n]);
    expect(blocks.map((b) => b.index)).toEqual([0, 1, 2]);
    // Each block's pre-state is the one before's post-state.
    expect(second.inputs.alloc).toEqual(first.postState);
    expect(first.postState).not.toEqual(first.inputs.alloc);
  });
});

describe("the builder's state (src/fuzz/build.ts)", () => {
  const plan: FuzzChain = { genesis: PLAIN_GENESIS, blocks: [{ gap: step, actions: [...SETUP_ACTIONS], junk: [] }, { gap: step, actions: [], junk: [] }] };

  it("the genesis state (height 0) is there until the first block is built, then refused; done after the last block", () => {
    const builder = new ChainBuilder(plan);
    const { alloc, height } = builder.genesisState();
    expect(height).toBe(0n);
    expect(alloc.length).toBeGreaterThan(0);
    expect(builder.done).toBe(false);
    const first = builder.build();
    expect(first.inputs.alloc).toEqual(alloc);
    expect(() => builder.genesisState()).toThrow(new FuzzInternalError("the genesis state is gone once a block is built"));
    // Its name tells the fuzzer's own bug from a finding in a stack trace or log line (`String(error)`).
    expect(() => builder.genesisState()).toThrow(expect.objectContaining({ name: "FuzzInternalError" }));
    expect(builder.done).toBe(false);
    builder.build();
    expect(builder.done).toBe(true);
    expect(new ChainBuilder({ genesis: PLAIN_GENESIS, blocks: [] }).done).toBe(true);
  });
});

describe("a transaction the engine excludes keeps its place and its sender's nonce (src/fuzz/build.ts)", () => {
  const settle: Action = { k: "settle", sender: OWNERS.length, owner: 0, nonce: 0, key: false };
  const withSponsor = (balance: bigint): FuzzChain => ({
    genesis: { ...PLAIN_GENESIS, accounts: { ...(PLAIN_GENESIS["accounts"] as JsonObject), [SPONSOR]: { balance: String(balance) } }, cycle_price: "1000", cell_price: "1" },
    blocks: [{ gap: step, actions: [...SETUP_ACTIONS, settle, settle, settle, transfer(0, 1)], junk: [] }],
  });

  it("the sponsor can pay the fee at the reservation once: its first settle is included, the others are not, each with the nonce after its included ones", () => {
    // The fee at the reservation, from the sponsor that cannot pay it.
    const [poor] = buildAll(withSponsor(10n)).blocks;
    const error = (poor!.ours.result["rejected"] as Array<{ error: string }>)[0]!.error;
    const fee = BigInt(/the fee at the reservation (\d+) of SettleStreamRent$/.exec(error)![1]!);
    const [b] = buildAll(withSponsor(fee)).blocks;
    const n = SETUP_ACTIONS.length;
    expect(b!.kinds.slice(n)).toEqual(["SettleStreamRent", "not includable: SettleStreamRent", "not includable: SettleStreamRent", "Transfer"]);
    const envelopes = b!.inputs.txs.slice(n).map((t) => decodeEnvelope(t));
    // Owner 0's transfer follows its create of the setup block.
    expect(envelopes.map((e) => e.nonce)).toEqual([0n, 1n, 1n, 1n]);
    expect(envelopes.slice(0, 3).every((e) => bytesEqual(e.tx.from, fromHex(SPONSOR)))).toBe(true);
    expect(b!.transactions.slice(n).every((t) => t !== null)).toBe(true);
    expect((b!.result["rejected"] as Array<{ index: string }>).map((r) => Number(r.index))).toEqual([n + 1, n + 2]);
    // The sponsor's own transfer after an excluded settle: the settle keeps the nonce the transfer then takes.
    // First in its block (transfer parties: owners, providers, then the sponsor).
    const sponsorTransfer = transfer(OWNERS.length + 3, 0);
    const transferred = buildAll({ ...withSponsor(10n), blocks: [{ gap: step, actions: [...SETUP_ACTIONS], junk: [] }, { gap: step, actions: [settle, sponsorTransfer], junk: [] }] }).blocks[1]!;
    expect(transferred.kinds).toEqual(["not includable: SettleStreamRent", "Transfer"]);
    expect(transferred.inputs.txs.map((t) => decodeEnvelope(t).nonce)).toEqual([0n, 0n]);
    // The receipts are the included transactions' at their input positions; the excluded one is left out.
    expect((transferred.result["receipts"] as Array<{ index: string }>).map((r) => r.index)).toEqual(["1"]);
    expect((transferred.result["rejected"] as Array<{ index: string; error: string }>)).toEqual([{ index: "0", error: "not includable: SettleStreamRent" }]);
    expect((b!.result["receipts"] as Array<{ index: string }>).map((r) => Number(r.index))).toEqual([...Array(n + 4).keys()].filter((i) => i !== n + 1 && i !== n + 2));
    // Our own per-call t8n agrees (the builder checks it against the chain).
    expect((b!.ours.result["rejected"] as Array<{ index: string }>).map((r) => Number(r.index))).toEqual([n + 1, n + 2]);
  });

  it("a chain_id at the u64 edge wraps to 0 for the junk of another chain", () => {
    const genesis = { ...PLAIN_GENESIS, chain_id: U64_MAX.toString() };
    const [b] = buildAll({ genesis, blocks: [{ gap: step, actions: [...SETUP_ACTIONS], junk: [junk("chain", 0, 0)] }] }).blocks;
    expect(decodeEnvelope(b!.inputs.txs[0]!).chain_id).toBe(0n);
    expect(b!.kinds[0]).toBe("junk: envelope for another chain_id");
  });
});
