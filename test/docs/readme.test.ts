// The README is a doorway: short, readable in a terminal, and every quick-start block runs as printed.
// Each block after `<!-- quick-start: <name> [node options] -->` is a shell block followed by a text
// block of its expected output (`…` stands for any text). Its `cbqs` lines run here in one bash with
// the compiled CLI as `cbqs` on the PATH; `cbqs node … &` is a node started on a free port, whose URL
// replaces http://127.0.0.1:8545. `npm` lines are the reader's set-up (`npm ci`, `npm link`) or
// `npm start`, which test/cli/workflow.test.ts runs; its verdict line is checked against the pins.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bash } from "./doc-blocks.js";
import { GAS_VECTORS_SHA256 } from "../../src/gas/pinned.js";
import { requireFreshDist } from "../fuzz/dist.js";
import { spawnNode } from "../node/spawned-node.js";
import { cbqsOnPath } from "./cbqs-on-path.js";

const ROOT = join(import.meta.dirname, "..", "..");
const CLI = join(ROOT, "dist", "src", "cli.js");
const README = readFileSync(join(ROOT, "README.md"), "utf8");
const DOC_URL = "http://127.0.0.1:8545";

interface QuickStart {
  name: string;
  nodeArgs: string[];
  lines: string[];
  expected: string[];
}

function quickStarts(): QuickStart[] {
  return [...README.matchAll(/<!-- quick-start: ([a-z-]+)([^>]*?) -->\n```sh\n([\s\S]*?)\n```\n\n```text\n([\s\S]*?)\n```/g)].map((m) => ({
    name: m[1]!,
    nodeArgs: m[2]!.trim() === "" ? [] : m[2]!.trim().split(/\s+/),
    lines: m[3]!.split("\n").map((l) => l.replace(/\s+#.*$/, "")),
    expected: m[4]!.split("\n"),
  }));
}

/** Whether `line` is `pattern` with each `…` standing for any text. */
const matches = (line: string, pattern: string): boolean =>
  new RegExp(`^${pattern.split("…").map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`).test(line);


/** The README's lines outside code blocks. */
function prose(): string[] {
  let fenced = false;
  return README.split("\n").filter((line) => {
    if (line.startsWith("```")) fenced = !fenced;
    return !fenced && !line.startsWith("```");
  });
}

describe("README: a doorway", () => {
  it("is at most 150 lines, and no line outside a code block is over 120 characters", () => {
    expect(README.split("\n").length).toBeLessThanOrEqual(150);
    expect(prose().filter((l) => l.length > 120)).toEqual([]);
  });

  it("has a quick start per role, each a shell block and its expected output (test precondition)", () => {
    expect(quickStarts().map((q) => q.name)).toEqual(["install", "npm-start", "test-your-node", "devnet"]);
    expect(README).toMatch(/```ts\n[\s\S]*?\/\/ → ok true\n```/); // the library's, run by test/api/examples.test.ts
  });

  it("npm start: the verdict line it shows names every fixture the start script replays and the pinned gas-vector SHA-256", () => {
    const q = quickStarts().find((x) => x.name === "npm-start")!;
    expect(q.lines).toEqual(["npm ci && npm start"]);
    expect((JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts["start"]).toBe("node dist/scripts/start.js");
    const fixtures = readdirSync(join(ROOT, "fixtures", "corpus")).filter((f) => f !== "index.json").length + 1; // the corpus and the long chain
    expect(q.expected).toHaveLength(1);
    expect(q.expected[0]).toMatch(new RegExp(`^OK: ${fixtures} fixtures \\([0-9,]+ blocks, [0-9,]+ txs\\) replayed and matched; gas-vector SHA-256 ${GAS_VECTORS_SHA256} verified \\(13 vectors re-executed\\)$`));
  });

  it.each(quickStarts().filter((q) => q.name !== "npm-start").map((q) => [q.name, q] as const))("quick start %s: its cbqs lines print the expected output", async (_, q) => {
    requireFreshDist();
    const bin = cbqsOnPath(CLI);
    const nodeLine = q.lines.find((l) => /^cbqs node\b.*&$/.test(l));
    if (nodeLine !== undefined) expect(nodeLine.replace(/\s*&$/, "").split(/\s+/).slice(2)).toEqual(q.nodeArgs);
    const node = nodeLine === undefined ? undefined : await spawnNode(CLI, [...q.nodeArgs, "--quiet"]);
    try {
      const run = q.lines.filter((l) => l.startsWith("cbqs ") && l !== nodeLine).map((l) => (node === undefined ? l : l.replaceAll(DOC_URL, node.url)));
      expect(run.length).toBeGreaterThan(0);
      const r = await bash(run.join("\n"), bin.env);
      expect([r.status, r.stderr]).toEqual([0, ""]);
      const got = r.stdout.trimEnd().split("\n");
      expect(got).toHaveLength(q.expected.length);
      q.expected.forEach((pattern, i) => expect(matches(got[i]!, pattern), `${got[i]} ≠ ${pattern}`).toBe(true));
    } finally {
      await node?.stop();
      bin.remove();
    }
  });
});
