// A guide starts with something to run: its first block comes before its first section, and runs as
// printed. A shell block's lines run here in one bash with the compiled CLI as `cbqs` on the PATH
// and /tmp/ a fresh directory; each line must print every piece its `# →` comment promises (`…`
// between pieces). A block against a node (http://127.0.0.1:8545) is a devnet session, which
// test/node/docs-devnet.test.ts runs against a fresh node; a `ts` block is run by
// test/api/examples.test.ts.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bash, blockLines } from "./doc-blocks.js";
import { requireFreshDist } from "../fuzz/dist.js";
import { cbqsOnPath } from "./cbqs-on-path.js";

const ROOT = join(import.meta.dirname, "..", "..");
const CLI = join(ROOT, "dist", "src", "cli.js");
const GUIDES = join(ROOT, "docs", "guides");

interface FirstBlock {
  guide: string;
  /** The block's info string: sh, ts, … */
  language: string;
  /** The text above it, without the title. */
  before: string;
  lines: Array<{ command: string; pieces: string[] }>;
  marker: string;
}

function firstBlocks(): FirstBlock[] {
  return readdirSync(GUIDES)
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((guide) => {
      const text = readFileSync(join(GUIDES, guide), "utf8");
      const m = /^```(\w*)\n([\s\S]*?)\n```$/m.exec(text);
      if (m === null) return { guide, language: "", before: text, lines: [], marker: "" };
      const before = text.slice(text.indexOf("\n") + 1, m.index);
      return {
        guide,
        language: m[1]!,
        before,
        marker: /<!-- [^>]* -->\n$/.exec(before)?.[0] ?? "",
        lines: blockLines(m[2]!),
      };
    });
}


const blocks = firstBlocks();
const shell = blocks.filter((b) => b.language === "sh" && !b.lines.some((l) => l.command.includes("http://127.0.0.1:8545")));

describe("guides start with something to run", () => {
  it("every guide's first block comes before its first section; a node session is marked as one (test precondition for the runs below)", () => {
    expect(blocks.length).toBeGreaterThanOrEqual(6);
    for (const b of blocks.filter((x) => x.guide !== "cli-tour.md")) {
      expect(b.before, b.guide).not.toMatch(/^## /m);
      expect(["sh", "ts"], b.guide).toContain(b.language);
      if (b.language === "sh" && !shell.includes(b)) expect(b.marker, b.guide).toMatch(/^<!-- example: devnet-session/);
    }
    expect(shell.map((b) => b.guide)).toEqual(["ci-recipes.md", "test-your-node.md", "verify-a-broker.md"]);
  });

  it.each(shell.map((b) => [b.guide, b] as const))("%s: its first block runs and prints what its comments say", async (_, block) => {
    requireFreshDist();
    const bin = cbqsOnPath(CLI);
    try {
      const script = block.lines.map((l, i) => `echo "@@${i}"\n${l.command.replaceAll("/tmp/", `${bin.dir}/`)}`).join("\n");
      const r = await bash(script, bin.env);
      expect([r.status, r.stderr]).toEqual([0, ""]);
      const outputs = r.stdout.split(/^@@\d+\n/m).slice(1);
      expect(outputs).toHaveLength(block.lines.length);
      block.lines.forEach((l, i) => {
        for (const piece of l.pieces) expect(outputs[i], l.command).toContain(piece);
      });
    } finally {
      bin.remove();
    }
  });
});
