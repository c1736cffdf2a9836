// `cbqs fuzz --t8n-server` end to end, the compiled CLI as a user runs it: our own server runs
// clean on several lanes; a server that answers wrongly is found, shrunk and reported the same
// way whatever --jobs is; a server that dies once is replaced and the run repeated, one that
// dies on every try or stops answering is unusable input (exit 2); a Python wrapper over the
// per-call t8n (a node team's page of code) works end to end; SIGINT leaves no process behind.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { marked } from "../marked-processes.js";
import { requireFreshDist } from "./dist.js";

const SERVER = "node dist/src/cli.js t8n --server";
let scratch: string;

beforeAll(requireFreshDist);
beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), "cbqs-fuzz-server-"));
});
afterEach(() => rmSync(scratch, { recursive: true, force: true }));

interface Ran {
  code: number | null;
  out: string;
  err: string;
}

function fuzz(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["dist/src/cli.js", "fuzz", ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (c) => (out += String(c)));
    child.stderr.on("data", (c) => (err += String(c)));
    child.on("close", (code) => resolve({ code, out, err }));
  });
}

/**
 * A wrapper in front of our server, as a node team would put one in front of theirs:
 * `tamper` adds one cycle to each block's first receipt; `die N MARKER` exits with status 3
 * after N answers (only while MARKER does not exist, when MARKER is given; it is created then);
 * `die-mid-line N MARKER` writes half of its next answer instead and exits (once: MARKER);
 * `hang` never passes session.apply on.
 */
function proxy(): string {
  const file = join(scratch, "proxy.cjs");
  writeFileSync(
    file,
    `const { spawn } = require("child_process");
const fs = require("fs");
const readline = require("readline");
const [mode, limit, marker] = process.argv.slice(2);
const server = spawn(process.execPath, ["dist/src/cli.js", "t8n", "--server"], { stdio: ["pipe", "pipe", "inherit"] });
let answers = 0;
readline.createInterface({ input: server.stdout }).on("line", (line) => {
  const a = JSON.parse(line);
  if (mode === "tamper" && a.result && a.result.receipts.length > 0) {
    a.result.receipts[0].cycles = String(BigInt(a.result.receipts[0].cycles) + 1n);
    line = JSON.stringify(a);
  }
  if (mode === "die-mid-line" && ++answers > Number(limit) && !fs.existsSync(marker)) {
    fs.writeFileSync(marker, "");
    process.stdout.write('{"id":', () => process.exit(3));
    return;
  }
  process.stdout.write(line + "\\n");
  if (mode === "die" && ++answers > Number(limit) && !(marker && fs.existsSync(marker))) {
    if (marker) fs.writeFileSync(marker, "");
    console.error("proxy: dying on purpose");
    process.exit(3);
  }
});
readline.createInterface({ input: process.stdin }).on("line", (line) => {
  if (mode === "hang" && line.includes('"session.apply"')) return;
  server.stdin.write(line + "\\n");
}).on("close", () => server.stdin.end());
`,
  );
  return `node ${file}`;
}

const SUMMARY = /^fuzz: (\d+) runs? \(seed \d+\), ([\d,]+) blocks?, ([\d,]+) txs? in [\d.]+ s \([\d.,]+ runs\/s, [\d.,]+ blocks\/s, [\d.,]+ tx\/s\): ([\d,]+) states? reached, (.*)$/;

describe("cbqs fuzz --t8n-server", () => {
  it("our own server on two lanes: no divergence, and the same counts as one lane", async () => {
    const one = await fuzz(["--t8n-server", SERVER, "--seed", "4", "--runs", "6", "--blocks", "3", "--jobs", "1", "--quiet"]);
    const two = await fuzz(["--t8n-server", SERVER, "--seed", "4", "--runs", "6", "--blocks", "3", "--jobs", "2", "--quiet"]);
    expect(one.code, one.err).toBe(0);
    expect(two.code, two.err).toBe(0);
    const [a, b] = [SUMMARY.exec(one.out.trim()), SUMMARY.exec(two.out.trim())];
    expect(a?.slice(1)).toEqual(["6", "18", a![3], a![4], "no divergence"]);
    expect(b?.slice(1)).toEqual(a?.slice(1));
  });

  it("a server that answers wrongly: found, shrunk and reported, the report the same with --jobs 1 and --jobs 2", async () => {
    const command = proxy() + " tamper";
    const runs = await Promise.all(
      ["1", "2"].map(async (jobs) => {
        const out = join(scratch, `report-${jobs}`);
        const r = await fuzz(["--t8n-server", command, "--seed", "7", "--runs", "5", "--blocks", "2", "--jobs", jobs, "--quiet", "--out", out]);
        return { r, report: JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as Record<string, unknown>, files: readdirSync(out).sort() };
      }),
    );
    for (const { r } of runs) {
      expect(r.code, r.err).toBe(1);
      expect(r.out).toMatch(/^DIVERGENCE seed 7 run \d+: block \d+ tx \d+ \S+: t8n result: receipts\[\d+\]\.cycles expected "(\d+)" got "\d+"/);
      expect(r.out).toMatch(new RegExp(`\\n  reproduce: cbqs fuzz --t8n-server '${command.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}' --seed 7 --run \\d+ --blocks 2\\n`));
    }
    // Everything but the timing line is the same, whatever the number of lanes.
    const lines = (r: Ran) => r.out.replace(/report-\d/g, "report-N").trimEnd().split("\n").slice(0, -1);
    expect(lines(runs[1]!.r)).toEqual(lines(runs[0]!.r));
    expect(runs[1]!.report).toEqual(runs[0]!.report);
    expect(runs[0]!.report["t8n_server"]).toBe(command);
    expect(runs[0]!.files).toEqual(["alloc.json", "env.json", "fixture.json", "ours.alloc.json", "ours.result.json", "report.json", "theirs.alloc.json", "theirs.result.json", "txs.json"]);
  });

  it("a server that dies once is replaced and the run repeated (the run and the last request named on stderr); one that dies every time is exit 2", async () => {
    const marker = join(scratch, "died-once");
    const once = await fuzz(["--t8n-server", `${proxy()} die 4 ${marker}`, "--seed", "2", "--runs", "3", "--blocks", "4", "--jobs", "1"]);
    expect(once.code, once.err).toBe(0);
    expect(once.err).toMatch(/\nfuzz: the t8n server died during run 0 at block \d+ \(last request: session\.apply block \d+\): exited with status 3: proxy: dying on purpose; a new one runs the run again\n/);
    expect(once.out).toMatch(/^fuzz: 3 runs \(seed 2\), 12 blocks, .*, no divergence\n$/);

    const always = await fuzz(["--t8n-server", `${proxy()} die 4`, "--seed", "2", "--runs", "3", "--blocks", "4", "--jobs", "1", "--quiet", "--out", join(scratch, "r")]);
    expect(always.code).toBe(2);
    expect(always.out).toBe("");
    expect(always.err).toMatch(/^cbqs: error: --t8n-server command failed on block \d+ of run 0 \(seed 2\): exited with status 3: proxy: dying on purpose \(kept for a look: .*alloc\.json, .*txs\.json, .*env\.json, .*theirs\.stderr\.txt: the block's inputs and the command's stderr\)\n$/);
  });

  it("a server that dies half-way through an answer line is replaced, and its half line is not read as the new server's hello", async () => {
    const marker = join(scratch, "died-mid-line");
    const r = await fuzz(["--t8n-server", `${proxy()} die-mid-line 4 ${marker}`, "--seed", "2", "--runs", "3", "--blocks", "4", "--jobs", "1"]);
    expect(r.code, r.err).toBe(0);
    expect(r.err).toMatch(/\nfuzz: the t8n server died during run 0 at block \d+ \(last request: session\.apply block \d+\): exited with status 3; a new one runs the run again\n/);
    expect(r.out).toMatch(/^fuzz: 3 runs \(seed 2\), 12 blocks, .*, no divergence\n$/);
  });

  it("a server that stops answering is ended after --timeout and, after its replacement does the same, exit 2", async () => {
    const r = await fuzz(["--t8n-server", `${proxy()} hang`, "--seed", "1", "--runs", "1", "--blocks", "1", "--jobs", "1", "--quiet", "--timeout", "1", "--out", join(scratch, "r")]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^cbqs: error: --t8n-server command failed on block \d+ of run 0 \(seed 1\): did not answer session\.apply block \d+ \(request \d+\) within 1 s/);
  });

  it("a command that is not a cbqs-t8n-server/v1 server is exit 2 at once, naming what it said", async () => {
    const r = await fuzz(["--t8n-server", `echo '{"protocol":"cbqs-t8n-server/v0"}'; sleep 5`, "--seed", "1", "--runs", "1", "--jobs", "1", "--quiet"]);
    expect(r).toEqual({ code: 2, out: "", err: expect.stringMatching(/^cbqs: error: --t8n-server command failed on run 0 \(opening its session\) \(seed 1\): is not a cbqs-t8n-server\/v1 server: its hello names protocol "cbqs-t8n-server\/v0", not cbqs-t8n-server\/v1\n$/) });
    const missing = await fuzz(["--t8n-server", "cbqs-no-such-server-anywhere", "--seed", "1", "--runs", "1", "--jobs", "1", "--quiet"]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/command not found \(exit 127\)/);
  });

  it("drives a non-TypeScript server: scripts/t8n-server.py over the per-call t8n (session_state_root per_block)", async () => {
    const r = await fuzz(["--t8n-server", `python3 scripts/t8n-server.py 'node dist/src/cli.js t8n'`, "--seed", "3", "--runs", "1", "--blocks", "3", "--jobs", "1", "--quiet"]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^fuzz: 1 run \(seed 3\), 3 blocks, .*, no divergence\n$/);
  });

  it("--duration runs until its time is up; it goes with neither --runs nor --run", async () => {
    const r = await fuzz(["--t8n-server", SERVER, "--seed", "1", "--duration", "2s", "--blocks", "2", "--jobs", "2", "--quiet"]);
    expect(r.code, r.err).toBe(0);
    expect(Number(SUMMARY.exec(r.out.trim())![1])).toBeGreaterThan(0);
    const both = await fuzz(["--t8n-server", SERVER, "--duration", "2s", "--runs", "3"]);
    expect(both).toEqual({ code: 2, out: "", err: "cbqs: error: give one of --run (one chain), --runs (many) or --duration (for a time), not --runs and --duration\n" });
    const bad = await fuzz(["--t8n-server", SERVER, "--duration", "2d"]);
    expect(bad.err).toBe('cbqs: error: --duration must be seconds or a number with s, m or h, from 1s to 168h (got 2d)\n');
    const neither = await fuzz(["--seed", "1"]);
    expect(neither.err).toMatch(/^cbqs: error: give the implementation under test as --t8n <command> \(per call\) or --t8n-server <command> \(a server\), one of them\n$/);
  });

  it("SIGINT on two lanes: exit 130, the summary, and no server process left behind", async () => {
    const mark = `cbqs-fuzz-test-${process.pid}-${Date.now()}`;
    const child = spawn(process.execPath, ["dist/src/cli.js", "fuzz", "--t8n-server", SERVER, "--seed", "1", "--runs", "100000", "--jobs", "2"], {
      env: { ...process.env, CBQS_TEST_MARK: mark },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (c) => (out += String(c)));
    child.stderr.on("data", (c) => (err += String(c)));
    for (let i = 0; i < 600 && marked(mark, "fuzz").length < 2; i++) await new Promise((r) => setTimeout(r, 50));
    expect(marked(mark, "fuzz").length, "two servers running").toBeGreaterThanOrEqual(2);
    child.kill("SIGINT");
    const code = await new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
    expect(code, err).toBe(130);
    expect(out).toMatch(/, no divergence so far\n$/);
    expect(err).toMatch(/\ncbqs: stopped by SIGINT; after [\d,]+ runs?: no divergence so far, nothing written\n$/);
    for (let i = 0; i < 40 && marked(mark, "fuzz").length > 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(marked(mark, "fuzz")).toEqual([]);
  });
});
