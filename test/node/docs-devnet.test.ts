// docs/guides/run-a-devnet.md's devnet sessions (each block after `<!-- example: devnet-session -->`: the devnet,
// `--mining auto`, the explorer's reads) are what a broker or SDK author types first: each runs
// here, line by line in one bash, against a fresh `cbqs node` process (the compiled CLI as `cbqs` on
// the PATH), with the documented URL replaced by the node's and /tmp/ by a fresh
// directory; each line must print every piece its `# →` comment promises.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bash, blockLines } from "../docs/doc-blocks.js";
import { requireFreshDist } from "../fuzz/dist.js";
import { cbqsOnPath } from "../docs/cbqs-on-path.js";
import { spawnNode } from "./spawned-node.js";

const ROOT = join(import.meta.dirname, "..", "..");
const CLI = join(ROOT, "dist", "src", "cli.js");

interface Line {
  command: string;
  pieces: string[];
}

/** Every block after `<!-- example: devnet-session [node options] -->`: the options its node is started with, and its lines. */
function sessions(): Array<{ args: string[]; lines: Line[] }> {
  const doc = readFileSync(join(ROOT, "docs", "guides", "run-a-devnet.md"), "utf8");
  return [...doc.matchAll(/<!-- example: devnet-session([^>]*?) -->\n```sh\n([\s\S]*?)\n```/g)].map((m) => ({
    args: m[1]!.trim() === "" ? [] : m[1]!.trim().split(/\s+/),
    lines: blockLines(m[2]!),
  }));
}


describe("docs/guides/run-a-devnet.md: the devnet sessions", () => {
  const all = sessions();

  it("there are sessions, each checking most of its lines (test precondition)", () => {
    expect(all.map((x) => x.args.join(" "))).toEqual(["--mining auto", "--mining auto", "", "", ""]);
    expect(all[2]!.lines.filter((l) => l.pieces.length > 0).length).toBeGreaterThan(12);
    // The explorer's reads (docs/guides/run-a-devnet.md "The explorer").
    expect(all[3]!.lines.some((l) => l.command.includes("/history?"))).toBe(true);
  });

  it.each(all.map((x) => [x.args.join(" ") || "(no options)", x] as const))("cbqs node %s: every line runs against a fresh node and prints what its comment says", async (_, { args, lines }) => {
    requireFreshDist();
    const tmp = mkdtempSync(join(tmpdir(), "cbqs-docs-devnet-"));
    const { url: base, stop } = await spawnNode(CLI, [...args, "--quiet"]);
    const bin = cbqsOnPath(CLI);
    try {
      // One bash for the whole session (SNAP=… carries over), a marker before each line's output.
      // The docs' /tmp/ paths first: the CLI's own path may be under /tmp (a clone there).
      const script = lines
        .map((l, i) => `echo "@@${i}"\n${l.command.replaceAll("/tmp/", `${tmp}/`).replaceAll("http://127.0.0.1:8545", base)}\necho`)
        .join("\n");
      const r = await bash(script, bin.env);
      expect([r.status, r.stderr]).toEqual([0, ""]);
      const outputs = r.stdout.split(/^@@\d+\n/m).slice(1);
      expect(outputs).toHaveLength(lines.length);
      lines.forEach((l, i) => {
        for (const piece of l.pieces) expect(outputs[i], l.command).toContain(piece);
      });
    } finally {
      await stop();
      bin.remove();
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
