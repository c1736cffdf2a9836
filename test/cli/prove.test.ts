// `cbqs prove-state` → `cbqs verify-proof`: a reference proof of a dumped key verifies against
// the printed root and against nothing else (CIP-4 Appendix C, §5.4).
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cbqs } from "./program.js";

const dir = mkdtempSync(join(tmpdir(), "cbqs-prove-"));
const fixture = JSON.parse(readFileSync("fixtures/corpus/create-quote.json", "utf8")) as {
  blocks: Array<{ post_state: { entries: Array<{ key: string; value: string }> } }>;
};
const dump = join(dir, "dump.json");
writeFileSync(dump, JSON.stringify(fixture.blocks[1]!.post_state));
const entries = fixture.blocks[1]!.post_state.entries;

const flip = (hex: string): string => hex.slice(0, -1) + (hex.endsWith("0") ? "1" : "0");

describe("cbqs prove-state / verify-proof (CIP-4 Appendix C)", () => {
  it("Appendix C: every dumped key's proof carries its value and verifies against the printed root only", async () => {
    for (const entry of [entries[0]!, entries[entries.length - 1]!]) {
      const proofFile = join(dir, "p.json");
      const proved = await cbqs("prove-state", dump, "--key", entry.key, "-o", proofFile);
      expect(proved.exitCode).toBe(0);
      const root = proved.out.trim();
      expect(root).toMatch(/^0x[0-9a-f]{64}$/);
      const proof = JSON.parse(readFileSync(proofFile, "utf8")) as { key: string; value: string };
      expect([proof.key, proof.value]).toEqual([entry.key, entry.value]);
      expect((await cbqs("verify-proof", proofFile, "--root", root)).exitCode).toBe(0);
      const wrong = await cbqs("verify-proof", proofFile, "--root", flip(root));
      expect(wrong.exitCode).toBe(1);
      expect(wrong.out).toMatch(/^invalid: /);
    }
  });

  it("Appendix C: an absent key gets an exclusion proof (value null) that verifies", async () => {
    const absent = "0x01" + "ee".repeat(20) + "00".repeat(33);
    expect(entries.some((e) => e.key === absent)).toBe(false);
    const proofFile = join(dir, "absent.json");
    const proved = await cbqs("prove-state", dump, "--key", absent, "-o", proofFile);
    expect(proved.exitCode).toBe(0);
    expect(JSON.parse(readFileSync(proofFile, "utf8")).value).toBeNull();
    expect((await cbqs("verify-proof", proofFile, "--root", proved.out.trim())).exitCode).toBe(0);
  });

  it("a key of the wrong length, a file that is not a dump, or an unwritable output is exit 2, one line", async () => {
    const notDump = join(dir, "not-dump.json");
    writeFileSync(notDump, "{}");
    const cases: Array<[string[], RegExp]> = [
      [["prove-state", dump, "--key", "0x01", "-o", join(dir, "x.json")], /--key: expected 54 bytes, got 1/],
      [["prove-state", notDump, "--key", entries[0]!.key, "-o", join(dir, "x.json")], /not-dump\.json: not a state dump/],
      [["prove-state", dump, "--key", entries[0]!.key, "-o", dir], /cannot write .*EISDIR/],
      [["prove-state", join(dir, "missing.json"), "--key", entries[0]!.key, "-o", join(dir, "x.json")], /cannot read .*ENOENT/],
    ];
    for (const [args, message] of cases) {
      const r = await cbqs(...args);
      expect(r.exitCode, args.join(" ")).toBe(2);
      expect(r.err).toMatch(message);
      expect(r.err.trimEnd().split("\n")).toHaveLength(1);
    }
  });

  it("verify-proof: a JSON document that is not a proof is exit 2; a proof failing a check is exit 1", async () => {
    const root = "0x" + "00".repeat(32);
    for (const [name, text] of [["null.json", "null"], ["array.json", "[]"], ["empty.json", "{}"], ["number.json", "42"]] as const) {
      const file = join(dir, name);
      writeFileSync(file, text);
      const r = await cbqs("verify-proof", file, "--root", root);
      expect(r.exitCode, name).toBe(2);
      expect(r.err).toMatch(/not a state proof/);
    }
    const truncated = join(dir, "truncated.json");
    writeFileSync(truncated, JSON.stringify({ proof_version: 1 }));
    const r = await cbqs("verify-proof", truncated, "--root", root);
    expect(r.exitCode).toBe(1);
    expect(r.out).toMatch(/^invalid: /);
  });
});
