// `cbqs verify-broker` follows the CLI's conventions: exit 0 when every bundle holds
// every rule, 1 with a line per failure (bundle line, artifact type, rule, section, evidence),
// 2 for unusable input in one `cbqs: error:` line; --json one document; --junit a test case per
// rule.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { bundleText } from "../../src/broker-kit/bundle.js";
import { kitBundle } from "../../src/broker-kit/kit.js";
import { MUTANTS } from "../../src/broker-kit/mutants.js";
import { cbqs, unusableInput } from "../cli/program.js";
import { kitChain, tempFiles } from "./kit.js";

const files = tempFiles();
const SAMPLES = ["fixtures/broker/kit-standard.jsonl", "fixtures/broker/kit-fast.jsonl", "fixtures/broker/kit-econ.jsonl"];
const CHAIN = "fixtures/broker/kit-chain.json";

async function mutantFile(rule: string): Promise<string> {
  const m = MUTANTS.find((x) => x.rule === rule)!;
  const { streamId, artifacts } = await kitBundle((await kitChain()).chain, m.bundle, m);
  return files.write(`mutant-${rule}.jsonl`, bundleText(streamId, artifacts, "hex"));
}

describe("cbqs verify-broker", () => {
  it("the sample bundles against the kit chain's fixture: exit 0, an ok line per bundle naming its stream and the rules it exercised", async () => {
    const r = await cbqs("verify-broker", ...SAMPLES, "--fixture", CHAIN);
    expect([r.exitCode, r.err]).toEqual([0, ""]);
    const verdicts = r.out.split("\n").filter((l) => / ok: /.test(l));
    expect(verdicts).toEqual([
      expect.stringMatching(/^fixtures\/broker\/kit-standard\.jsonl: ok: 40 artifacts of the Standard stream 0x[0-9a-f]{64}; 27 of 30 rules checked \(nothing to check for B23, B24, B25\)$/),
      expect.stringMatching(/^fixtures\/broker\/kit-fast\.jsonl: ok: 34 artifacts of the Fast stream 0x[0-9a-f]{64}; 27 of 30 rules checked \(nothing to check for B20, B21, B22\)$/),
      expect.stringMatching(/^fixtures\/broker\/kit-econ\.jsonl: ok: 8 artifacts of the Standard stream 0x[0-9a-f]{64}; 22 of 30 rules checked /),
    ]);
    expect(r.out).toContain("fixtures/broker/kit-standard.jsonl: note: snapshot manifests: application_signature and snapshot_hash are application state, not checked (§15)");
  });

  it("a broken rule: exit 1, the failure line names the bundle line, the artifact type, the rule and its section, and the evidence; then the verdict", async () => {
    const file = await mutantFile("B29");
    const r = await cbqs("verify-broker", SAMPLES[0]!, file, "--fixture", CHAIN);
    expect([r.exitCode, r.err]).toEqual([1, ""]);
    const lines = r.out.trimEnd().split("\n");
    expect(lines.at(-2)).toBe(
      `${file}: line 11 CbqsResponseV1: B29 (§6): the Application receipt Standard(2) served at height 15: escrow_balance 80000 is below the rent accrued through effective_rent_height 15: (15 − last_settled_block 2) × rate_per_block 8000 = 104000`,
    );
    expect(lines.at(-1)).toMatch(new RegExp(`^${file}: refused: 1 failure \\(B29\\) in 10 artifacts of the Standard stream 0x[0-9a-f]{64}$`));
    expect(lines[lines.length - 3]).toMatch(/kit-standard\.jsonl: ok: /); // the good bundle is still reported
  });

  it("--json: one cbqs-verify-broker/v1 document, every rule's status per bundle", async () => {
    const file = await mutantFile("B15");
    const r = await cbqs("verify-broker", file, "--fixture", CHAIN, "--json");
    expect(r.exitCode).toBe(1);
    const doc = JSON.parse(r.out);
    expect(doc).toMatchObject({ format: "cbqs-verify-broker/v1", ok: false, source: `fixture ${CHAIN}` });
    const [b] = doc.bundles;
    expect(b).toMatchObject({ file, delivery_class: "Standard", artifacts: "40", ok: false });
    expect(b.failures).toEqual([{ line: expect.stringMatching(/^\d+$/), type: "CbqsResponseV1", rule: "B15", section: "§14.1", evidence: expect.stringContaining("previous_global_receipt") }]);
    expect(b.rules).toHaveLength(30);
    expect(b.rules.find((x: { id: string }) => x.id === "B15")).toMatchObject({ status: "failed", failures: "1" });
    expect(b.rules.find((x: { id: string }) => x.id === "B3")).toMatchObject({ status: "passed", failures: "0" });
    expect(b.rules.find((x: { id: string }) => x.id === "B25")).toMatchObject({ status: "not exercised", checks: "0" });
  });

  it("--junit: a test case per rule — failed with its evidence and the command that reproduces it, skipped when nothing exercised it", async () => {
    const file = await mutantFile("B3");
    const xml = files.write("verify.xml", "");
    const r = await cbqs("verify-broker", file, "--fixture", CHAIN, "--junit", xml);
    expect(r.exitCode).toBe(1);
    const text = readFileSync(xml, "utf8");
    expect(text.match(/<testcase /g)).toHaveLength(30);
    expect(text).toMatch(/<testcase [^>]*name="B3 a provider receipt is signed by the provider key[^"]*"[^>]*>\s*<failure [^>]*type="broken-rule"/);
    expect(text).toContain(`cbqs verify-broker ${file} --fixture ${CHAIN}`);
    expect(text.match(/<skipped /g)).toHaveLength(3);
  });

  it("unusable input is exit 2 and one error line: no chain option or both, an unreadable bundle, a line that does not decode, a fixture that does not replay, a node that does not answer", async () => {
    expect(await cbqs("verify-broker", SAMPLES[2]!)).toEqual(unusableInput(/give the chain the artifacts were served on: --node <url> or --fixture <file>, one of them/));
    expect(await cbqs("verify-broker", SAMPLES[2]!, "--fixture", CHAIN, "--node", "http://127.0.0.1:9")).toEqual(unusableInput(/one of them/));
    expect(await cbqs("verify-broker", files.dir + "/absent.jsonl", "--fixture", CHAIN)).toEqual(unusableInput(/cannot read .*absent\.jsonl/));
    const bad = files.write("bad.jsonl", readFileSync(SAMPLES[2]!, "utf8").split("\n")[0] + '\n{"type": "StreamGrantV1", "hex": "0x01"}\n');
    expect(await cbqs("verify-broker", bad, "--fixture", CHAIN)).toEqual(unusableInput(/bad\.jsonl: line 2: \$\.hex: the StreamGrantV1 does not decode/));
    const chain = JSON.parse(readFileSync(CHAIN, "utf8"));
    chain.blocks[2].state_root = "0x" + "00".repeat(32);
    const forged = files.write("forged-chain.json", JSON.stringify(chain));
    expect(await cbqs("verify-broker", SAMPLES[2]!, "--fixture", forged)).toEqual(unusableInput(/forged-chain\.json: the fixture does not replay: block 3: state_root/));
    expect(await cbqs("verify-broker", SAMPLES[2]!, "--node", "http://127.0.0.1:9")).toEqual(unusableInput(/127\.0\.0\.1:9/));
  });

  it("--help says what each exit code means", async () => {
    const r = await cbqs("verify-broker", "--help");
    expect(r.out).toMatch(/Exit codes:\n  0  every bundle holds every rule the verifier checks\n  1  a rule is broken: /);
  });
});
