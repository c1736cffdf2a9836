// `cbqs replay <fixture> --db <dir>`, `cbqs snapshot export|import`, `cbqs state dump --db` and
// `cbqs prove-state --db`: replay that resumes, a stored chain that is not the fixture's refused
// with nothing touched, and snapshots whose import continues with identical roots while corrupt,
// truncated and foreign ones are refused and leave the target as it was.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { toHex } from "../../src/bytes.js";
import { readFixture } from "../../src/harness/documents.js";
import { LmdbChainDb } from "../../state/lmdb/chain-db.js";
import { verifyStateProof } from "../../state/proof.js";
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
    process.emit("SIGTERM", "SIGTERM"); // lands while the first block's commit yields to the event loop
    const r = await running;
    expect(r.exitCode).toBe(143);
    expect(r.out).toMatch(/stopped by SIGTERM; from genesis, 1 block, .*store head 1\n$/);
    expect(stored(dir).head).toBe(1n);
    expect((await cbqs("replay", FIXTURE, "--db", dir)).out).toMatch(/ok; resumed after height 1, 2 blocks/);
  });

  it("a store holding another chain, or this chain with another block, is refused (exit 2) and not touched", async () => {
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
    expect(await cbqs("replay", forked, "--db", own)).toEqual(unusableInput(/differs from the fixture at block 5 \(\$\.blocks\[1\]\.block_hash\)/));
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
