import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { toHex } from "../../../src/bytes.js";
import { STATE_KEY_LENGTH } from "../../../state/kv/interface.js";
import { createStateCommitment } from "../../../state/qmdb/index.js";
import { proveKey } from "../../../state/qmdb/proof.js";
import { cbqs, unusableInput } from "../../cli/program.js";

const dir = mkdtempSync(join(tmpdir(), "cbqs-proof-"));
const sc = createStateCommitment();
const k = new Uint8Array(STATE_KEY_LENGTH).fill(4);
sc.commitBatch([[k, Uint8Array.of(1, 2, 3)]]);
const proofFile = join(dir, "proof.json");
writeFileSync(proofFile, JSON.stringify(proveKey(sc.db, k)));
const notJson = join(dir, "bad.json");
writeFileSync(notJson, "{");

describe("cbqs verify-proof (CIP-4 §5.4)", () => {
  afterAll(() => rmSync(dir, { recursive: true }));

  it("§5.4 a valid proof prints valid and exits 0", async () => {
    const r = await cbqs("verify-proof", proofFile, "--root", toHex(sc.root()));
    expect(r).toMatchObject({ exitCode: 0, err: "" });
    expect(r.out).toMatch(/^valid\n  checked: /);
  });

  it("§5.4 a wrong root prints the reason and exits 1", async () => {
    const r = await cbqs("verify-proof", proofFile, "--root", "0x" + "00".repeat(32), "--json");
    expect(r).toMatchObject({ exitCode: 1, err: "" });
    expect(JSON.parse(r.out)).toMatchObject({ valid: false, reason: "root mismatch", checked: { state_root: "0x" + "00".repeat(32) } });
    // The same proof read as a SHA-256 database proof does not verify either.
    expect((await cbqs("verify-proof", proofFile, "--root", toHex(sc.root()), "--hasher", "sha256")).exitCode).toBe(1);
  });

  it("§5.4 unusable input (not JSON, missing file, bad root, unknown hasher) is a usage error", async () => {
    expect(await cbqs("verify-proof", notJson, "--root", toHex(sc.root()))).toEqual(unusableInput(/bad\.json: \$: not valid JSON/));
    expect(await cbqs("verify-proof", join(dir, "missing.json"), "--root", toHex(sc.root()))).toEqual(
      unusableInput(/cannot read \S*missing\.json/),
    );
    expect(await cbqs("verify-proof", proofFile, "--root", "0x00")).toEqual(unusableInput(/--root/));
    expect(await cbqs("verify-proof", proofFile, "--root", toHex(sc.root()), "--hasher", "md5")).toEqual(
      unusableInput(/--hasher must be blake3 or sha256 \(got md5\)/),
    );
  });
});
