// docs/guides/run-a-devnet.md's examples of commands that keep running — a subscription, `cbqs follow --watch`
// (each block after `<!-- example: NAME -->` with its `<!-- output: NAME -->` block): run here in
// one bash against a fresh `cbqs node` process (the compiled CLI as `cbqs` on the PATH), the
// documented URL replaced by the node's; what they print (stdout and stderr) must be the
// documented output line for line, `…` standing for the rest of a line's text. The lines after
// the background command run once it has printed its first documented line (a `sleep` in the
// docs is a person's wait; on a loaded machine a test cannot trust one), and the background
// command is stopped once the output is complete (and a moment later, to catch anything extra).
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { requireFreshDist } from "../fuzz/dist.js";
import { cbqsOnPath } from "../docs/cbqs-on-path.js";
import { spawnNode } from "./spawned-node.js";

const ROOT = join(import.meta.dirname, "..", "..");
const CLI = join(ROOT, "dist", "src", "cli.js");
const DOC_URL = "http://127.0.0.1:8545";

/** A fenced block's lines, the fence's indentation (a block inside a list item) removed. */
const block = (indent: string, text: string): string[] => text.split("\n").map((l) => l.slice(indent.length));

function examples(): Array<{ name: string; commands: string[]; output: string[] }> {
  const doc = readFileSync(join(ROOT, "docs", "guides", "run-a-devnet.md"), "utf8");
  const outputs = new Map([...doc.matchAll(/<!-- output: ([a-z-]+) -->\n( *)```\n([\s\S]*?)\n *```/g)].map((m) => [m[1]!, block(m[2]!, m[3]!)]));
  return [...doc.matchAll(/<!-- example: ([a-z-]+) -->\n( *)```sh\n([\s\S]*?)\n *```/g)]
    .filter((m) => outputs.has(m[1]!))
    .map((m) => ({ name: m[1]!, commands: block(m[2]!, m[3]!).map((l) => l.replace(/\s+#.*$/, "")), output: outputs.get(m[1]!)! }));
}

/** Whether `line` is `pattern` with each `…` standing for any text. */
const matches = (line: string, pattern: string): boolean =>
  new RegExp(`^${pattern.split("…").map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`).test(line);

const trimEnd = (lines: string[]): string[] => {
  const out = [...lines];
  while (out.length > 0 && out[out.length - 1] === "") out.pop();
  return out;
};

describe("docs/guides/run-a-devnet.md: examples that keep running, and what they print", () => {
  const all = examples();

  it("there are the subscription and follow --watch examples (test precondition)", () => {
    expect(all.map((e) => e.name)).toEqual(["subscribe", "follow-watch"]);
  });

  it.each(all.map((e) => [e.name, e] as const))("%s: the lines run against a fresh devnet and print the documented output", async (_, { commands, output }) => {
    requireFreshDist();
    const { url, stop } = await spawnNode(CLI, ["--quiet"]);
    const expected = trimEnd(output.map((l) => l.replaceAll(DOC_URL, url)));
    const lines = commands.map((c) => c.replaceAll(DOC_URL, url));
    const bin = cbqsOnPath(CLI);
    const background = lines.findIndex((l) => l.trimEnd().endsWith("&")) + 1;
    expect(background, "an example with a background command").toBeGreaterThan(0);
    let text = "";
    const run = (script: string, detached: boolean) => {
      const sh = spawn("bash", ["-e", "-o", "pipefail", "-c", ["exec 2>&1", script].join("\n")], { cwd: ROOT, detached, stdio: ["ignore", "pipe", "pipe"], env: bin.env });
      sh.stdout.on("data", (d: Buffer) => (text += d.toString()));
      return sh;
    };
    const received = () => trimEnd(text.split("\n"));
    const waitFor = async (done: () => boolean) => {
      for (let i = 0; i < 3000 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
    };
    // Its own process group: the background command outlives bash, and is stopped with it.
    const first = run(lines.slice(0, background).join("\n"), true);
    try {
      await waitFor(() => received().some((l) => matches(l, expected[0]!)));
      const rest = run(lines.slice(background).join("\n"), false);
      const code = await new Promise<number | null>((r) => rest.on("close", r));
      expect(code, text).toBe(0);
      await waitFor(() => received().length >= expected.length);
      await new Promise((r) => setTimeout(r, 300));
      const got = received();
      expect(got.length, text).toBe(expected.length);
      got.forEach((line, i) => expect(matches(line, expected[i]!), `line ${i + 1}:\n  ${line}\nis not\n  ${expected[i]}`).toBe(true));
    } finally {
      process.kill(-first.pid!, "SIGKILL");
      await stop();
      bin.remove();
    }
  });
});
