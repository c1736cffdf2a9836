// The JUnit writer (src/report/junit.ts): its layout, the counts, and that whatever a case echoes
// from input — control characters, unpaired surrogates, markup, quotes — leaves a well-formed
// XML 1.0 file that test/junit.xsd accepts and that reads back as the text the CLI shows.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { junitXml } from "../../src/report/junit.js";
import type { Suite, TestCase } from "../../src/report/model.js";
import { visible } from "../../src/report/text.js";
import { junitSchemaErrors, requireTool, xmllintMissing, xpathString } from "./tools.js";

const dir = mkdtempSync(join(tmpdir(), "cbqs-junit-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const at = new Date("2026-12-03T06:37:38.512Z");
const put = (name: string, text: string): string => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const suite = (cases: TestCase[], extra: Partial<Suite> = {}): Suite => ({ name: "cbqs replay corpus", classname: "cbqs.replay", cases, seconds: 0.5, timestamp: at, ...extra });

const CASES: TestCase[] = [
  { id: "a-ok.json", status: "passed", seconds: 0.1234, blocks: 3, txs: 18 },
  { id: "b-mismatch.json", status: "failed", seconds: 0.2, type: "mismatch", message: "block 5: receipt_root ($.blocks[1].receipt_root): expected 0xab got 0xcd", details: ["key 0x03aa: record.balance expected \"1\" got \"2\""], reproduce: "cbqs replay corpus/b-mismatch.json" },
  { id: "c-unusable.json", status: "error", seconds: 0, type: "unusable", message: "corpus/c-unusable.json: $: not valid JSON", reproduce: "cbqs replay corpus/c-unusable.json" },
  { id: "d-skipped.json", status: "skipped", seconds: 0, message: "not in this shard" },
];

describe("JUnit XML (src/report/junit.ts)", () => {
  it("writes a testsuite per suite and a testcase per case: classname, name = id, time; the outcome with its message, type, details and reproduce line", () => {
    expect(junitXml([suite(CASES, { summary: "replay: 4 fixtures" })])).toBe(
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<testsuites tests="4" failures="1" errors="1" time="0.500">',
        '  <testsuite name="cbqs replay corpus" tests="4" failures="1" errors="1" skipped="1" time="0.500" timestamp="2026-12-03T06:37:38Z">',
        '    <testcase classname="cbqs.replay" name="a-ok.json" time="0.123"/>',
        '    <testcase classname="cbqs.replay" name="b-mismatch.json" time="0.200">',
        '      <failure type="mismatch" message="block 5: receipt_root ($.blocks[1].receipt_root): expected 0xab got 0xcd">key 0x03aa: record.balance expected "1" got "2"',
        "reproduce: cbqs replay corpus/b-mismatch.json</failure>",
        "    </testcase>",
        '    <testcase classname="cbqs.replay" name="c-unusable.json" time="0.000">',
        '      <error type="unusable" message="corpus/c-unusable.json: $: not valid JSON">reproduce: cbqs replay corpus/c-unusable.json</error>',
        "    </testcase>",
        '    <testcase classname="cbqs.replay" name="d-skipped.json" time="0.000">',
        '      <skipped message="not in this shard"/>',
        "    </testcase>",
        "    <system-out>replay: 4 fixtures</system-out>",
        "  </testsuite>",
        "</testsuites>",
        "",
      ].join("\n"),
    );
  });

  it("several suites add up in <testsuites>; a suite without a timestamp or summary leaves them out; no suite at all is an empty <testsuites>", () => {
    const xml = junitXml([suite(CASES.slice(0, 2)), { name: "cbqs gas-vectors verify", classname: "cbqs.gas-vectors", cases: CASES.slice(2, 3), seconds: 0.25 }]);
    expect(xml).toMatch(/^<testsuites tests="3" failures="1" errors="1" time="0.750">$/m);
    expect(xml).toMatch(/^  <testsuite name="cbqs gas-vectors verify" tests="1" failures="0" errors="1" skipped="0" time="0.250">$/m);
    expect(xml).not.toMatch(/<testsuite name="cbqs gas-vectors verify"[^>]*timestamp|<system-out>/);
    expect(junitXml([])).toBe('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites tests="0" failures="0" errors="0" time="0.000">\n</testsuites>\n');
  });

  it("what it writes is valid against test/junit.xsd (xmllint), and the schema is not vacuous: it refuses a case with two outcomes or without a name", (ctx) => {
    requireTool(ctx, xmllintMissing());
    expect(junitSchemaErrors(put("layout.xml", junitXml([suite(CASES, { summary: "s" }), suite([])])))).toBeNull();
    const two = junitXml([suite(CASES.slice(1, 2))]).replace("</failure>", '</failure><error message="x"/>');
    expect(junitSchemaErrors(put("two.xml", two))).toMatch(/error/);
    expect(junitSchemaErrors(put("nameless.xml", junitXml([suite(CASES.slice(0, 1))]).replace(' name="a-ok.json"', "")))).toMatch(/name/);
    expect(junitSchemaErrors(put("count.xml", junitXml([suite(CASES)]).replace('tests="4" failures="1" errors="1" skipped', 'tests="four" failures="1" errors="1" skipped')))).toMatch(/tests/);
  });

  it("input echoed into names, messages and details — every control character, DEL and C1, U+FFFE/U+FFFF, unpaired surrogates, markup, quotes — stays well-formed and valid (property, one file of 300 cases)", (ctx) => {
    requireTool(ctx, xmllintMissing());
    // Any UTF-16 code unit, so unpaired surrogates too, weighted towards the ones XML 1.0 forbids.
    const unit = fc.oneof(fc.integer({ min: 0, max: 0x20 }), fc.constantFrom(0x7f, 0x85, 0x9f, 0xfffe, 0xffff, 0xd800, 0xdfff, 0x26, 0x3c, 0x3e, 0x22, 0x27, 0x5d), fc.integer({ min: 0, max: 0xffff })).map((c) => String.fromCharCode(c));
    const text = fc.string({ unit, maxLength: 40 });
    const cases = fc.sample(fc.record({ id: text, message: text, detail: text, reproduce: text }), { numRuns: 300, seed: 24 }).map(
      (r, i): TestCase => ({ id: r.id, status: i % 2 === 0 ? "failed" : "error", seconds: 0, message: r.message, details: [r.detail], reproduce: r.reproduce }),
    );
    const file = put("fuzzed.xml", junitXml([suite(cases, { name: cases[0]!.id, summary: cases[1]!.message! })]));
    expect(junitSchemaErrors(file)).toBeNull();
    // Read back by xmllint, a name is exactly what the CLI would show (tab, LF and CR kept, as character references).
    for (const i of [0, 1, 2, 3, 17, 299]) {
      expect(xpathString(file, `//testcase[${i + 1}]/@name`)).toBe(visible(cases[i]!.id).replace(/\n$/, ""));
    }
  });

  it("escapes markup and keeps tab, LF and CR in an attribute as character references (a parser would make them spaces)", (ctx) => {
    requireTool(ctx, xmllintMissing());
    const message = `x<script>alert("1")</script> & 'y'\tz\r\nw]]>`;
    const xml = junitXml([suite([{ id: "a<b>&c\"d'.json", status: "failed", seconds: 0, message, details: ["</failure><failure>"], reproduce: "cbqs replay 'a<b>&c\"d'\\''.json'" }])]);
    expect(xml).not.toMatch(/<script|<b>|<\/failure><failure>/);
    expect(xml).toContain('message="x&lt;script&gt;alert(&quot;1&quot;)&lt;/script&gt; &amp; \'y\'&#9;z&#13;&#10;w]]&gt;"');
    const file = put("markup.xml", xml);
    expect(junitSchemaErrors(file)).toBeNull();
    expect(xpathString(file, "//failure/@message")).toBe(message);
    expect(xpathString(file, "//testcase/@name")).toBe("a<b>&c\"d'.json");
    expect(xpathString(file, "//failure")).toBe("</failure><failure>\nreproduce: cbqs replay 'a<b>&c\"d'\\''.json'");
  });

  it("every text echoed into the document is escaped where it is written, without xmllint: suite name and classname, case name, type and message as attributes; details, reproduce line and summary as text", () => {
    const m = `<m>&"\t`;
    const xml = junitXml([
      {
        name: `<suite>&"`,
        classname: `<class>&"`,
        seconds: 0,
        summary: `<summary>&"`,
        cases: [{ id: `<id>&"`, status: "failed", seconds: 0, type: `<type>&"`, message: m, details: [`<detail>&"`, "]]>"], reproduce: `cbqs replay '<r>&"'` }],
      },
    ]);
    expect(xml).toBe(
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<testsuites tests="1" failures="1" errors="0" time="0.000">',
        '  <testsuite name="&lt;suite&gt;&amp;&quot;" tests="1" failures="1" errors="0" skipped="0" time="0.000">',
        '    <testcase classname="&lt;class&gt;&amp;&quot;" name="&lt;id&gt;&amp;&quot;" time="0.000">',
        '      <failure type="&lt;type&gt;&amp;&quot;" message="&lt;m&gt;&amp;&quot;&#9;">&lt;detail&gt;&amp;"',
        "]]&gt;",
        "reproduce: cbqs replay '&lt;r&gt;&amp;\"'</failure>",
        "    </testcase>",
        '    <system-out>&lt;summary&gt;&amp;"</system-out>',
        "  </testsuite>",
        "</testsuites>",
        "",
      ].join("\n"),
    );
  });

  it("a control character is written as the CLI shows it (\\x01), never as the character", () => {
    const xml = junitXml([suite([{ id: "e\u0001ctl.json", status: "error", seconds: 0, message: "bad \u001b[31m \ud800 \uffff" }])]);
    expect(xml).toContain('name="e\\x01ctl.json"');
    expect(xml).toContain('message="bad \\x1b[31m \\ud800 \\uffff"');
    expect(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/.test(xml)).toBe(false);
  });
});
