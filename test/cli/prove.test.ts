// `cbqs prove-state` → `cbqs verify-proof`: a reference proof of a dumped key verifies against
// the printed root and against nothing else (CIP-4 Appendix C, §5.4).
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cbqs, unusableInput } from "./program.js";

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

  it("a dump that names another state_root (a chain's) gets a note: the proof is against its one-batch root", async () => {
    const named = join(dir, "named.json");
    const chainRoot = "0x" + "ab".repeat(32);
    writeFileSync(named, JSON.stringify({ format: "cbqs-state-dump/v1", height: "5", state_root: chainRoot, entries }));
    const proved = await cbqs("prove-state", named, "--key", entries[0]!.key, "-o", join(dir, "named-proof.json"));
    expect(proved.exitCode).toBe(0);
    expect(proved.err).toContain(`names state_root ${chainRoot}; this proof is against ${proved.out.trim()}, its entries committed as one batch`);
    // No note where the dump names no root, or names the one-batch root itself.
    const plain = await cbqs("prove-state", dump, "--key", entries[0]!.key, "-o", join(dir, "plain-proof.json"));
    expect(plain.err).toBe("");
    writeFileSync(named, JSON.stringify({ format: "cbqs-state-dump/v1", state_root: plain.out.trim(), entries }));
    expect((await cbqs("prove-state", named, "--key", entries[0]!.key, "-o", join(dir, "same-proof.json"))).err).toBe("");
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
      [["prove-state", notDump, "--key", entries[0]!.key, "-o", join(dir, "x.json")], /not-dump\.json: \$\.format: missing \(expected "cbqs-fixture\/v1" or "cbqs-state-dump\/v1"\)/],
      [["prove-state", dump, "--key", entries[0]!.key, "-o", dir], /cannot write .*: it is a directory/],
      [["prove-state", join(dir, "missing.json"), "--key", entries[0]!.key, "-o", join(dir, "x.json")], /cannot read .*\(ENOENT\)/],
    ];
    for (const [args, message] of cases) {
      const r = await cbqs(...args);
      expect(r.exitCode, args.join(" ")).toBe(2);
      expect(r.err).toMatch(message);
      expect(r.err.trimEnd().split("\n")).toHaveLength(1);
    }
  });

  it("verify-proof — a malformed proof document is exit 2 naming the JSON path; a well-formed proof failing a check is exit 1", async () => {
    const root = "0x" + "00".repeat(32);
    const malformed: Array<[string, string, RegExp]> = [
      ["null.json", "null", /null\.json: \$: expected a JSON object/],
      ["array.json", "[]", /array\.json: \$: expected a JSON object/],
      ["empty.json", "{}", /empty\.json: \$\.proof_version: missing/],
      ["number.json", "42", /number\.json: \$: expected a JSON object/],
      ["truncated.json", JSON.stringify({ proof_version: 1 }), /truncated\.json: \$\.partial_chunk_digest: missing/],
    ];
    const proofFile = join(dir, "good-proof.json");
    const proved = await cbqs("prove-state", dump, "--key", entries[2]!.key, "-o", proofFile);
    const good = JSON.parse(readFileSync(proofFile, "utf8")) as Record<string, unknown>;
    const { chunk: _chunk, ...noChunk } = good;
    malformed.push(["no-chunk.json", JSON.stringify(noChunk), /no-chunk\.json: \$\.chunk: missing/]);
    malformed.push(["short-key.json", JSON.stringify({ ...good, key: "0x01" }), /short-key\.json: \$\.key: expected 54 bytes, got 1/]);
    malformed.push(["version.json", JSON.stringify({ ...good, proof_version: 2 }), /version\.json: \$\.proof_version: unsupported/]);
    for (const [name, text, message] of malformed) {
      const file = join(dir, name);
      writeFileSync(file, text);
      const r = await cbqs("verify-proof", file, "--root", root);
      expect(r, name).toEqual(unusableInput(message));
    }
    const digests = good["digests"] as string[];
    void _chunk;
    const tampered = join(dir, "tampered.json");
    writeFileSync(tampered, JSON.stringify({ ...good, digests: [digests[0]!.slice(0, -1) + (digests[0]!.endsWith("0") ? "1" : "0"), ...digests.slice(1)] }));
    const r = await cbqs("verify-proof", tampered, "--root", proved.out.trim());
    expect(r.exitCode).toBe(1);
    expect(r.out).toMatch(/^invalid: root mismatch\n  checked: /);
    expect(r.out).toMatch(/combined root: H\(ops_root 0x[0-9a-f]{64} \(as the proof states\) ‖ grafted root 0x[0-9a-f]{64}.*\) = 0x[0-9a-f]{64}, not the given state_root/);
  });

  it("verify-proof says what it checked: activity bit, ops path to the grafted root, combined root = state_root", async () => {
    const proofFile = join(dir, "said.json");
    const root = (await cbqs("prove-state", dump, "--key", entries[1]!.key, "-o", proofFile)).out.trim();
    const r = await cbqs("verify-proof", proofFile, "--root", root);
    expect(r.exitCode).toBe(0);
    const lines = r.out.trimEnd().split("\n");
    expect(lines[0]).toBe("valid");
    expect(lines[1]).toMatch(/^  checked: the Update operation of key 0x[0-9a-f]{108} \(location \d+\) has its activity bit set/);
    // Each digest under one name, with its value: the path's grafted root is the one combined, and
    // ops_root is the proof's own field.
    const grafted = /^  checked: ops path: the operation, bitmap chunk and \d+ digests? rebuild the grafted root (0x[0-9a-f]{64})$/.exec(lines[2]!)?.[1];
    expect(grafted, lines[2]).toBeDefined();
    const opsRoot = (JSON.parse(readFileSync(proofFile, "utf8")) as { ops_root: string }).ops_root;
    expect(lines[3]!.startsWith(`  checked: combined root: H(ops_root ${opsRoot} (as the proof states) ‖ grafted root ${grafted!} ‖ next_bit `)).toBe(true);
    expect(lines[3]).toMatch(new RegExp(`\\) = ${root} = the given state_root$`));
    expect(lines[4]).toBe(`  proved: key ${entries[1]!.key} = ${entries[1]!.value}`);
    expect(lines[5]).toMatch(/note: the ops_root alone is not the state_root/);
    const json = JSON.parse((await cbqs("verify-proof", proofFile, "--root", root, "--json")).out);
    expect(json).toMatchObject({ valid: true, kind: "single", checked: { combined_root: root, state_root: root } });
    expect(json.checked.ops_root).not.toBe(root);
  });
});
