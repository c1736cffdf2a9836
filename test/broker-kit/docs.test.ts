// docs/guides/verify-a-broker.md "Running it in CI": the session after `<!-- example: verify-broker-session … -->`
// runs here line by line in one bash, with the compiled CLI as `cbqs` on the PATH, against a
// `cbqs node` started with the options the marker names (its URL for http://127.0.0.1:8545, a
// fresh directory for /tmp/); each line must print every piece its `# →` comment promises.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { requireFreshDist } from "../fuzz/dist.js";
import { cbqsOnPath } from "../docs/cbqs-on-path.js";
import { spawnNode } from "../node/spawned-node.js";

const ROOT = join(import.meta.dirname, "..", "..");
const CLI = join(ROOT, "dist", "src", "cli.js");

function session(): { args: string[]; lines: Array<{ command: string; pieces: string[] }> } {
  const doc = readFileSync(join(ROOT, "docs", "guides", "verify-a-broker.md"), "utf8");
  const m = /<!-- example: verify-broker-session([^>]*?) -->\n```sh\n([\s\S]*?)\n```/.exec(doc)!;
  return {
    args: m[1]!.trim().split(/\s+/),
    lines: m[2]!.split("\n").map((line) => {
      const at = line.indexOf("# →");
      return { command: line.slice(0, at).trimEnd(), pieces: line.slice(at + 3).split("…").map((p) => p.trim()) };
    }),
  };
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv): { child: ReturnType<typeof spawn>; done: Promise<{ status: number | null; stdout: string; stderr: string }> } {
  const child = spawn(command, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env });
  let stdout = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString()));
  return { child, done: new Promise((resolve) => child.on("close", (status) => resolve({ status, stdout, stderr }))) };
}

describe("docs/guides/verify-a-broker.md: the verify-broker session", () => {
  const { args, lines } = session();

  it("the session starts its node from the kit chain and checks what each line prints (test precondition)", () => {
    expect(args).toEqual(["--fixture", "fixtures/broker/kit-chain.json"]);
    expect(lines.length).toBeGreaterThanOrEqual(5);
    expect(lines.every((l) => l.pieces.length > 0 && l.pieces[0] !== "")).toBe(true);
  });

  it("every line runs against a fresh node and prints what its comment says", async () => {
    requireFreshDist();
    const tmp = mkdtempSync(join(tmpdir(), "cbqs-docs-broker-"));
    const node = await spawnNode(CLI, args, { cwd: ROOT });
    const url = node.url;
    const bin = cbqsOnPath(CLI);
    try {
      const script = lines.map((l, i) => `echo "@@${i}"\n${l.command.replaceAll("/tmp/", `${tmp}/`).replaceAll("http://127.0.0.1:8545", url)}\necho`).join("\n");
      const r = await run("bash", ["-e", "-o", "pipefail", "-c", script], bin.env).done;
      expect([r.status, r.stderr]).toEqual([0, ""]);
      const outputs = r.stdout.split(/^@@\d+\n/m).slice(1);
      expect(outputs).toHaveLength(lines.length);
      lines.forEach((l, i) => {
        for (const piece of l.pieces) expect(outputs[i], l.command).toContain(piece.replaceAll("/tmp/", `${tmp}/`));
      });
    } finally {
      await node.stop();
      bin.remove();
      rmSync(tmp, { recursive: true, force: true });
    }
  }, 60_000);
});
