// Text echoed from input into a report (src/report/text.ts): shown as the CLI shows it
// (`visible`), then escaped for the format it is written into (XML text, XML attribute, HTML), and
// a command quoted so a POSIX shell reads it back as written (`shellWord`, the reproduce lines).
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { html, shellWord, visible, xmlAttribute, xmlText } from "../../src/report/text.js";

describe("visible: the characters a report cannot write, spelled as the CLI does", () => {
  it("C0 controls other than tab, LF and CR, DEL and the C1 controls become \\xNN; tab, LF, CR and the rest of Latin-1 stay", () => {
    expect(visible("a\u0000b\u0008\t\n\r\u000b\u000c\u000e\u001b\u001f \u007f\u0080\u0085\u009f\u00a0\u00e9\u00ff~")).toBe(
      "a\\x00b\\x08\t\n\r\\x0b\\x0c\\x0e\\x1b\\x1f \\x7f\\x80\\x85\\x9f\u00a0\u00e9\u00ff~",
    );
  });

  it("the noncharacters U+FFFE and U+FFFF become \\ufffe and \\uffff; U+FFFD and other BMP text stay", () => {
    expect(visible("\ufffe\uffff\ufffd\u4e2d\u200b")).toBe("\\ufffe\\uffff\ufffd\u4e2d\u200b");
  });

  it("a surrogate pair (a character beyond the BMP) stays; an unpaired high or low surrogate, wherever it is, becomes \\uNNNN", () => {
    expect(visible("\ud83d\ude00 \udbff\udfff")).toBe("\ud83d\ude00 \udbff\udfff");
    expect(visible("\ud800x")).toBe("\\ud800x");
    expect(visible("x\ud800")).toBe("x\\ud800");
    expect(visible("x\udc00")).toBe("x\\udc00");
    expect(visible("\udfff")).toBe("\\udfff");
    // Low before high is not a pair: both are unpaired.
    expect(visible("\udc00\ud800")).toBe("\\udc00\\ud800");
    expect(visible("\ud800\ud83d\ude00\udc00")).toBe("\\ud800\ud83d\ude00\\udc00");
  });
});

describe("escaping for each format", () => {
  const text = `a & b < c > d " e ' f\tg\nh\ri \u0001`;

  it("XML character data: &, < and > as entities; quotes, tab, LF and CR as they are; controls as the CLI shows them", () => {
    expect(xmlText(text)).toBe(`a &amp; b &lt; c &gt; d " e ' f\tg\nh\ri \\x01`);
  });

  it("an XML attribute: also \" as &quot;, and tab, LF and CR as character references (a parser would make them spaces)", () => {
    expect(xmlAttribute(text)).toBe("a &amp; b &lt; c &gt; d &quot; e ' f&#9;g&#10;h&#13;i \\x01");
  });

  it("HTML text or a quoted attribute: &, <, >, \" and ' as references; tab, LF and CR as they are", () => {
    expect(html(text)).toBe(`a &amp; b &lt; c &gt; d &quot; e &#39; f\tg\nh\ri \\x01`);
  });

  it("an entity already in the input is text, escaped again", () => {
    expect(html("&amp;")).toBe("&amp;amp;");
    expect(xmlText("&lt;")).toBe("&amp;lt;");
  });
});

describe("shellWord: a reproduce command's word, read back by a POSIX shell as written", () => {
  it("a word of only safe characters is left bare; anything else is single-quoted, a ' inside as '\\''", () => {
    expect(shellWord("corpus/a-b_c.json")).toBe("corpus/a-b_c.json");
    expect(shellWord("A=1,b+c@d%e:f")).toBe("A=1,b+c@d%e:f");
    expect(shellWord("")).toBe("''");
    expect(shellWord("a b")).toBe("'a b'");
    expect(shellWord("it's")).toBe("'it'\\''s'");
    expect(shellWord("$HOME")).toBe("'$HOME'");
  });

  it("sh reads each quoted word back as exactly that word", () => {
    const words = ["plain.json", "", "a b", "it's", "''", "$HOME", "`id`", "$(id)", 'a"b\\c', "*", "~", "x;y|z&", "line\nbreak", "-n"];
    const r = spawnSync("sh", ["-c", `for w in ${words.map(shellWord).join(" ")}; do printf '%s\\0' "$w"; done`], { encoding: "utf8" });
    expect(r.status).toBe(0);
    expect(r.stdout.split("\0").slice(0, -1)).toEqual(words);
  });
});
