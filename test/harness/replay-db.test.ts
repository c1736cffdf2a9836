// `cbqs replay <fixture> --db <dir>`, `cbqs snapshot export|import`, `cbqs state dump --db` and
// `cbqs prove-state --db`: replay that resumes, a stored chain that is not the fixture's refused
// with nothing touched, and snapshots whose import continues with identical roots while corrupt,
// truncated and foreign ones are refused and leave the target as it was.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { toHex } from "../../src/bytes.js";
import { genesisHash, headerHash } from "../../src/chain/block.js";
import { readFixture } from "../../src/harness/documents.js";
import { LmdbChainDb } from "../../state/lmdb/chain-db.js";
import { verifyStateProof } from "../../state/qmdb/proof.js";
import { cbqs, unusableInput } from "../cli/program.js";

const root = mkdtempSync(join(tmpdir(), "cbqs-replay-db-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const FIXTURE = "fixtures/corpus/create-quote.json"; // blocks at heights 1, 5, 6
const OTHER = "fixtures/corpus/governance-params.json";
const fixture = readFixture(FIXTURE);

/** The head and state root a store holds (opened and closed again). */
function stored(dir: string): { head: bigint; root: string } {
  const db = LmdbChainDb.open(dir);
  try {
    return { head: db.head()!.height, root: toHex(db.state.root()) };
  } finally {
    db.close();
  }
}

describe("cbqs replay --db", () => {
  it("commits every verified block, resumes after the head, honours --to-height", async () => {
    const dir = join(root, "resume");
    const first = await cbqs("replay", FIXTURE, "--db", dir, "--to-height", "4");
    expect(first.exitCode).toBe(0);
    expect(first.out).toMatch(/ok; from genesis, 1 block, .*store head 1\n$/);
    expect(stored(dir)).toEqual({ head: 1n, root: toHex(fixture.blocks[0]!.state_root) });
    const second = await cbqs("replay", FIXTURE, "--db", dir);
    expect(second.exitCode).toBe(0);
    expect(second.out).toMatch(/ok; resumed after height 1, 2 blocks, 16 txs .*store head 6\n$/);
    const third = await cbqs("replay", FIXTURE, "--db", dir);
    expect(third.out).toMatch(/resumed after height 6, 0 blocks/);
    expect(stored(dir)).toEqual({ head: 6n, root: toHex(fixture.blocks[2]!.state_root) });
  });

  it("SIGTERM stops it after the block in progress is committed (exit 143); a rerun resumes", async () => {
    const dir = join(root, "signal");
    const running = cbqs("replay", FIXTURE, "--db", dir);
    // The command first loads its modules (src/cli/program.ts); once it has opened the store it
    // watches for signals (the same turn), and the signal lands while the first block's commit
    // yields to the event loop.
    for (let turn = 0; turn < 100_000 && !existsSync(dir); turn++) await new Promise((resolve) => setImmediate(resolve));
    process.emit("SIGTERM", "SIGTERM");
    const r = await running;
    expect(r.exitCode).toBe(143);
    expect(r.out).toMatch(/stopped by SIGTERM; from genesis, 1 block, .*store head 1\n$/);
    expect(stored(dir).head).toBe(1n);
    expect((await cbqs("replay", FIXTURE, "--db", dir)).out).toMatch(/ok; resumed after height 1, 2 blocks/);
  });

  it("a store holding another chain is refused (exit 2); this chain with another block hash is a mismatch (exit 1); neither is touched", async () => {
    const dir = join(root, "foreign");
    expect((await cbqs("replay", OTHER, "--db", dir)).exitCode).toBe(0);
    const before = stored(dir);
    expect(await cbqs("replay", FIXTURE, "--db", dir)).toEqual(unusableInput(/the store holds another chain/));
    expect(stored(dir)).toEqual(before);

    const own = join(root, "forked");
    expect((await cbqs("replay", FIXTURE, "--db", own, "--to-height", "5")).exitCode).toBe(0);
    const doc = JSON.parse(readFileSync(FIXTURE, "utf8")) as { blocks: { block_hash: string }[] };
    doc.blocks[1]!.block_hash = "0x" + "ab".repeat(32);
    const forked = join(root, "forked.json");
    writeFileSync(forked, JSON.stringify(doc));
    const ownBefore = stored(own);
    const r = await cbqs("replay", forked, "--db", own);
    expect(r.exitCode).toBe(1);
    expect(r.out).toMatch(/^MISMATCH [^\n]*: block 5: block_hash \(\$\.blocks\[1\]\.block_hash\): expected 0x(ab){32} got 0x[0-9a-f]{64}\n/);
    expect(stored(own)).toEqual(ownBefore);
  });

  it("state dump --db and prove-state --db read the committed head; prove-state <fixture> --height proves against that block's root", async () => {
    const dir = join(root, "resume");
    const dump = await cbqs("state", "dump", "--db", dir);
    expect(dump.exitCode).toBe(0);
    const fromFixture = await cbqs("state", "dump", FIXTURE);
    expect(JSON.parse(dump.out)).toEqual(JSON.parse(fromFixture.out));

    const key = (JSON.parse(dump.out) as { entries: { key: string }[] }).entries[3]!.key;
    const proofFile = join(root, "proof.json");
    const atHead = await cbqs("prove-state", "--db", dir, "--key", key, "-o", proofFile);
    expect(atHead.exitCode).toBe(0);
    expect(atHead.out).toBe(`${toHex(fixture.blocks[2]!.state_root)}\n`);
    expect(verifyStateProof(JSON.parse(readFileSync(proofFile, "utf8")), fixture.blocks[2]!.state_root)).toEqual({ valid: true });

    const atFive = await cbqs("prove-state", FIXTURE, "--height", "5", "--key", key, "-o", proofFile);
    expect(atFive.exitCode).toBe(0);
    expect(atFive.out).toBe(`${toHex(fixture.blocks[1]!.state_root)}\n`);
    expect(verifyStateProof(JSON.parse(readFileSync(proofFile, "utf8")), fixture.blocks[1]!.state_root)).toEqual({ valid: true });
  });
});

describe("replay --db compares every stored block with the fixture's before it resumes (CIP-4 §6.1)", () => {
  /** A copy of FIXTURE changed by `edit`, written to a file. */
  function tampered(name: string, edit: (doc: { blocks: Record<string, unknown>[] }) => void): string {
    const doc = JSON.parse(readFileSync(FIXTURE, "utf8")) as { blocks: Record<string, unknown>[] };
    edit(doc);
    const file = join(root, `${name}.json`);
    writeFileSync(file, JSON.stringify(doc));
    return file;
  }
  /** Every byte of the store's data file: "untouched" means exactly that. */
  const bytesOf = (dir: string): Buffer => readFileSync(join(dir, "data.mdb"));
  /** A store holding FIXTURE through `height`. */
  async function storeAt(name: string, height: string): Promise<string> {
    const dir = join(root, name);
    expect((await cbqs("replay", FIXTURE, "--db", dir, "--to-height", height)).exitCode).toBe(0);
    return dir;
  }
  const NOTE = "\n  \\(the value the store holds for this block: nothing was executed, the store is unchanged\\)\n";

  it("a fixture whose block 1 state_root differs from the store's is a mismatch at block 1 state_root (exit 1), the store untouched", async () => {
    const dir = await storeAt("i21-state-root", "1");
    const file = tampered("i21-state-root", (d) => (d.blocks[0]!["state_root"] = "0x" + "cd".repeat(32)));
    // Without --db the same fixture is a mismatch too: resume must not trust it more.
    expect((await cbqs("replay", file)).exitCode).toBe(1);
    const before = bytesOf(dir);
    const r = await cbqs("replay", file, "--db", dir);
    expect(r.exitCode).toBe(1);
    expect(r.out).toMatch(new RegExp(`^MISMATCH [^\\n]*: block 1: state_root \\(\\$\\.blocks\\[0\\]\\.state_root\\): expected 0x(cd){32} got ${toHex(fixture.blocks[0]!.state_root)}${NOTE}`));
    expect(r.out).toMatch(/: mismatch; the stored chain differs from the fixture at block 1: nothing executed, the store is unchanged; store head 1\n$/);
    expect(bytesOf(dir).equals(before)).toBe(true);
  });

  it("a fixture with one transaction (and its receipt) removed from block 5 is a mismatch at block 5 transactions against a store at height 6", async () => {
    const dir = await storeAt("i21-tx-removed", "6");
    const file = tampered("i21-tx-removed", (d) => {
      (d.blocks[1]!["transactions"] as unknown[]).splice(3, 1);
      (d.blocks[1]!["receipts"] as unknown[]).splice(3, 1);
    });
    const before = bytesOf(dir);
    const n = fixture.blocks[1]!.transactions.length;
    const r = await cbqs("replay", file, "--db", dir);
    expect(r.exitCode).toBe(1);
    expect(r.out).toMatch(new RegExp(`^MISMATCH [^\\n]*: block 5: transactions\\.length \\(\\$\\.blocks\\[1\\]\\.transactions\\): expected ${n - 1} got ${n}${NOTE}`));
    expect(bytesOf(dir).equals(before)).toBe(true);
    // One transaction's bytes changed (same count): that transaction is named.
    const changed = tampered("i21-tx-changed", (d) => {
      const txs = d.blocks[1]!["transactions"] as string[];
      [txs[2], txs[3]] = [txs[3]!, txs[2]!];
    });
    const c = await cbqs("replay", changed, "--db", dir);
    expect(c.exitCode).toBe(1);
    expect(c.out).toMatch(/^MISMATCH [^\n]*: block 5: transactions\[2\] \(\$\.blocks\[1\]\.transactions\[2\]\): expected 0x[0-9a-f]+ got 0x[0-9a-f]+\n/);
  });

  it("a fixture with a tampered receipt at a stored block is a mismatch naming the receipt field", async () => {
    const dir = await storeAt("i21-receipt", "6");
    const before = bytesOf(dir);
    const cycles = tampered("i21-receipt-cycles", (d) => {
      const r = (d.blocks[1]!["receipts"] as Record<string, unknown>[])[0]!;
      r["cycles"] = String(BigInt(r["cycles"] as string) + 1n);
    });
    const r = await cbqs("replay", cycles, "--db", dir);
    expect(r.exitCode).toBe(1);
    const expected = fixture.blocks[1]!.receipts[0]!.cycles;
    expect(r.out).toMatch(new RegExp(`^MISMATCH [^\\n]*: block 5: receipts\\[0\\]\\.cycles \\(\\$\\.blocks\\[1\\]\\.receipts\\[0\\]\\.cycles\\): expected ${expected + 1n} got ${expected}${NOTE}`));
    const status = tampered("i21-receipt-status", (d) => {
      const r = (d.blocks[2]!["receipts"] as Record<string, unknown>[])[0]!;
      r["status"] = r["status"] === "ok" ? "rejected" : "ok";
      r["error"] = r["status"] === "ok" ? null : { code: 1, name: "X", message: "x" };
    });
    const s2 = await cbqs("replay", status, "--db", dir);
    expect(s2.exitCode, s2.err).toBe(1);
    expect(s2.out).toMatch(/^MISMATCH [^\n]*: block 6: receipts\[0\]\.status \(\$\.blocks\[2\]\.receipts\[0\]\.status\)/);
    expect(bytesOf(dir).equals(before)).toBe(true);
  });

  it("--to-height below the store's head says that it compared blocks 1 to --to-height with the store and executed nothing", async () => {
    const dir = await storeAt("i21-to-height", "6");
    const before = bytesOf(dir);
    const r = await cbqs("replay", FIXTURE, "--db", dir, "--to-height", "5", "--quiet");
    expect(r.exitCode).toBe(0);
    expect(r.out).toBe(
      "stored chain: genesis and 2 stored blocks (heights 1 to 5) compared with the fixture's: identical\n" +
        `replay: ${FIXTURE} into ${dir}: ok; the store is at height 6, above --to-height 5: heights 1 to 5 (2 stored blocks) compared with the store, identical; nothing executed; store head 6\n`,
    );
    expect(bytesOf(dir).equals(before)).toBe(true);
    // Tampered above --to-height: not compared, so not found (the message says which blocks were).
    const above = tampered("i21-above", (d) => (d.blocks[2]!["state_root"] = "0x" + "00".repeat(32)));
    expect((await cbqs("replay", above, "--db", dir, "--to-height", "5", "--quiet")).exitCode).toBe(0);
    // A full resume compares block 6 as well.
    expect((await cbqs("replay", above, "--db", dir, "--quiet")).out).toMatch(/^MISMATCH [^\n]*: block 6: state_root/);
  });

  it("a fixture shorter than the store: the common blocks are compared, the stored blocks above the fixture's last are named as not compared", async () => {
    const dir = await storeAt("i21-shorter", "6");
    const short = tampered("i21-shorter", (d) => d.blocks.splice(2));
    const r = await cbqs("replay", short, "--db", dir, "--quiet");
    expect(r.exitCode).toBe(0);
    expect(r.out).toMatch(/^stored chain: genesis and 2 stored blocks \(heights 1 to 5\) compared with the fixture's: identical; the store also holds block 6, above the fixture's last block: not compared\n/);
    expect(r.out).toMatch(/ok; resumed after height 6, 0 blocks/);
    // A fixture that skips a height the store holds: the stored block is the difference.
    const skipping = tampered("i21-skipping", (d) => d.blocks.splice(1, 1));
    const s2 = await cbqs("replay", skipping, "--db", dir, "--quiet");
    expect(s2.exitCode).toBe(1);
    expect(s2.out).toMatch(/^MISMATCH [^\n]*: block 5: block \(\$\.blocks\): expected no block at height 5 \(the fixture skips it\) got a stored block/);
  });

  it("--retain-blocks lower than the store was kept with prunes the older undo rows on resuming, and says so", async () => {
    const LONG = "fixtures/corpus/rent-settle-suspend-expire.json"; // 9 blocks
    const long = readFixture(LONG);
    const dir = join(root, "i21-retain");
    expect((await cbqs("replay", LONG, "--db", dir, "--retain-blocks", "8", "--quiet")).exitCode).toBe(0);
    const heights = long.blocks.map((b) => b.height);
    const undoHeights = (): bigint[] => {
      const db = LmdbChainDb.open(dir);
      try {
        return [...db.env.table("undokeys").getKeys()].map((k) => Buffer.from(k).readBigUInt64BE(0));
      } finally {
        db.close();
      }
    };
    expect(undoHeights()).toEqual(heights.slice(1));
    const r = await cbqs("replay", LONG, "--db", dir, "--retain-blocks", "2", "--quiet");
    expect(r.exitCode).toBe(0);
    expect(r.err).toBe(`cbqs: pruned undo rows of blocks ${heights[1]}–${heights[6]} (6 blocks below the window of --retain-blocks 2)\n`);
    expect(undoHeights()).toEqual(heights.slice(7));
    // Nothing more to prune: nothing said.
    expect((await cbqs("replay", LONG, "--db", dir, "--retain-blocks", "2", "--quiet")).err).toBe("");
    // The state of the lowest retained block is still served.
    const db = LmdbChainDb.open(dir, { retainBlocks: 2 });
    try {
      expect(db.stateAt(heights[6]!)).toBeDefined();
      expect(db.stateAt(heights[5]!)).toBeUndefined();
    } finally {
      db.close();
    }
    expect(await cbqs("replay", LONG, "--retain-blocks", "2")).toEqual(unusableInput(/--retain-blocks needs --db/));
  });
});

describe("cbqs snapshot (CIP-4 §8.1)", () => {
  const source = join(root, "snap-source");
  const file = join(root, "h5.cbqs");

  it("export at block 5, import into an empty directory, replay --db continues from 6 with identical roots and state", async () => {
    expect((await cbqs("replay", FIXTURE, "--db", source, "--to-height", "5")).exitCode).toBe(0);
    const exported = await cbqs("snapshot", "export", "--db", source, "-o", file);
    expect(exported).toEqual({ exitCode: 0, out: `snapshot of block 5 (state_root ${toHex(fixture.blocks[1]!.state_root)}) written to ${file}\n`, err: "" });
    const target = join(root, "snap-target");
    const imported = await cbqs("snapshot", "import", file, "--db", target);
    expect(imported.exitCode).toBe(0);
    expect(stored(target)).toEqual({ head: 5n, root: toHex(fixture.blocks[1]!.state_root) });
    const resumed = await cbqs("replay", FIXTURE, "--db", target);
    expect(resumed.out).toMatch(/ok; resumed after height 5, 1 block,/);
    expect(resumed.exitCode).toBe(0); // every root of block 6 matched the fixture's
    const a = await cbqs("state", "dump", "--db", target);
    const b = await cbqs("state", "dump", FIXTURE);
    expect(JSON.parse(a.out)).toEqual(JSON.parse(b.out));
  });

  it("on a store started from a snapshot, the fixture's blocks below it are checked against the hash chain ending at the snapshot's block", async () => {
    const target = join(root, "snap-target");
    const ok = await cbqs("replay", FIXTURE, "--db", target, "--quiet");
    expect(ok.exitCode).toBe(0);
    expect(ok.out).toMatch(/^stored chain: genesis and 2 stored blocks \(heights 5 to 6\) compared with the fixture's: identical; the store starts at a snapshot of block 5, holding no block below it; the fixture's block below it checked against the hash chain that ends at it \(roots and block hashes, not executed\)\n/);
    const doc = JSON.parse(readFileSync(FIXTURE, "utf8")) as { blocks: Record<string, unknown>[] };
    doc.blocks[0]!["state_root"] = "0x" + "cd".repeat(32); // block 1 is not in the store: its block hash no longer fits its fields
    const tamperedFile = join(root, "snap-tampered.json");
    writeFileSync(tamperedFile, JSON.stringify(doc));
    const before = readFileSync(join(target, "data.mdb"));
    const r = await cbqs("replay", tamperedFile, "--db", target, "--quiet");
    expect(r.exitCode).toBe(1);
    expect(r.out).toMatch(/^MISMATCH [^\n]*: block 1: block_hash \(\$\.blocks\[0\]\.block_hash\): expected 0x[0-9a-f]{64} got 0x[0-9a-f]{64}\n  \(computed from the fixture's own block: the store starts at a snapshot of block 5/);
    expect(readFileSync(join(target, "data.mdb")).equals(before)).toBe(true);
  });

  it("a forged fixture below a snapshot is never 'identical': the comparison always reaches the snapshot's block (also above --to-height); a fixture without that block is a mismatch", async () => {
    const target = join(root, "snap-target");
    const before = readFileSync(join(target, "data.mdb"));
    // Block 1 with another state_root and a block_hash recomputed over it: self-consistent, but not the store's chain.
    const g = fixture.genesis;
    const b1 = fixture.blocks[0]!;
    const forgedRoot = new Uint8Array(32).fill(0xcd);
    const forgedHash = headerHash(g.chain_instance_id, b1.height, b1.timestamp, genesisHash(g.chain_instance_id, g.config.timestamp, g.state_root), forgedRoot, b1);
    const doc = JSON.parse(readFileSync(FIXTURE, "utf8")) as { blocks: Record<string, unknown>[] };
    doc.blocks[0]!["state_root"] = toHex(forgedRoot);
    doc.blocks[0]!["block_hash"] = toHex(forgedHash);
    const full = join(root, "snap-forged-full.json");
    writeFileSync(full, JSON.stringify(doc));
    const only1 = join(root, "snap-forged-1.json");
    writeFileSync(only1, JSON.stringify({ ...doc, blocks: doc.blocks.slice(0, 1) }));

    const short = await cbqs("replay", only1, "--db", target, "--quiet");
    expect(short.exitCode).toBe(1);
    expect(short.out).toMatch(/^MISMATCH [^\n]*: block 5: block \(\$\.blocks\): expected no block at height 5 \(the fixture ends at block 1\) got the snapshot's block \(block_hash 0x[0-9a-f]{64}\)\n  \(the store starts at a snapshot of block 5 and holds no block below it: [^\n]*cannot be verified\)/);
    expect(short.out).not.toMatch(/identical/);
    // --to-height below the snapshot: block 5 is compared all the same, and its parent is not the forged block 1.
    const low = await cbqs("replay", full, "--db", target, "--to-height", "1", "--quiet");
    expect(low.exitCode).toBe(1);
    expect(low.out).toMatch(/^MISMATCH [^\n]*: block 5: parent_hash \(\$\.blocks\[0\]\.block_hash\): expected 0x[0-9a-f]{64} got 0x[0-9a-f]{64}\n/);
    expect(low.out).not.toMatch(/identical/);
    // The real fixture with --to-height below the snapshot: block 5 anchors it, identical.
    const real = await cbqs("replay", FIXTURE, "--db", target, "--to-height", "1", "--quiet");
    expect(real.exitCode).toBe(0);
    expect(real.out).toMatch(/^stored chain: genesis and 1 stored block \(block 5\) compared with the fixture's: identical; the store starts at a snapshot of block 5, holding no block below it; the fixture's block below it checked against the hash chain that ends at it/);
    expect(readFileSync(join(target, "data.mdb")).equals(before)).toBe(true);
  });

  it("a fixture that ends below a snapshot store's blocks names the range the store holds", async () => {
    const target = join(root, "snap-beyond");
    expect((await cbqs("snapshot", "import", file, "--db", target)).exitCode).toBe(0);
    const doc = JSON.parse(readFileSync(FIXTURE, "utf8")) as { blocks: unknown[] };
    const none = join(root, "snap-genesis-only.json");
    writeFileSync(none, JSON.stringify({ ...doc, blocks: [] }));
    const r = await cbqs("replay", none, "--db", target, "--quiet");
    expect(r.exitCode).toBe(0);
    expect(r.out).toMatch(/^stored chain: genesis compared with the fixture's \(no stored block in the heights compared\); the store starts at a snapshot of block 5, holding no block below it; the store also holds block 5, above the fixture's last block: not compared\n/);
  });

  it("corrupt, truncated and foreign snapshots are refused with one error line; the target is left as it was", async () => {
    const bytes = readFileSync(file);
    const corrupt = join(root, "corrupt.cbqs");
    const flipped = Buffer.from(bytes);
    flipped[flipped.length - 40]! ^= 1; // inside the operations: only the checksum can tell
    writeFileSync(corrupt, flipped);
    const truncated = join(root, "truncated.cbqs");
    writeFileSync(truncated, bytes.subarray(0, bytes.length - 100));
    const empty = join(root, "never-created");
    expect(await cbqs("snapshot", "import", corrupt, "--db", empty)).toEqual(unusableInput(new RegExp(`${corrupt.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: .*(checksum mismatch|malformed|state root)`)));
    expect(await cbqs("snapshot", "import", truncated, "--db", empty)).toEqual(unusableInput(/truncated/));
    expect(existsSync(empty)).toBe(false);
    // A flip in the first records (genesis, block) is found as they decode, before the checksum:
    // the file is malformed, and no store is said to be damaged.
    for (const at of [12, 20, 40, 80]) {
      const early = Buffer.from(bytes);
      early[at]! ^= 0x80;
      writeFileSync(corrupt, early);
      const r = await cbqs("snapshot", "import", corrupt, "--db", empty);
      expect(r.exitCode, `flip at ${at}: ${r.err}`).toBe(2);
      expect(r.err).toContain(corrupt);
      expect(r.err).not.toMatch(/store is damaged/);
    }
    expect(existsSync(empty)).toBe(false);

    const other = join(root, "other-chain");
    expect((await cbqs("replay", OTHER, "--db", other)).exitCode).toBe(0);
    const before = stored(other);
    expect(await cbqs("snapshot", "import", file, "--db", other)).toEqual(unusableInput(/foreign snapshot/));
    expect(stored(other)).toEqual(before);
    expect(await cbqs("snapshot", "import", file, "--db", source)).toEqual(unusableInput(/already holds this chain/));
  });
});
