// An implementation under test written to misbehave, run the way a node team runs `cbqs consume`
// and `cbqs t8n-adapter` (the compiled CLI): each reading of what it leaves behind is bounded and
// time-limited (src/target/bounded.ts). A FIFO, a link to an endless device or a 700 MB file where
// an output should be is unusable at once, named; a deadline ends the command's process group and
// does not wait for a daemon holding its stderr; a server's flood of words is cut in the error
// line, and an endless answer line is refused at its bound.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { MAX_ERROR_LINE, MAX_ANSWER_BYTES } from "../../src/bounds.js";
import { marked } from "../marked-processes.js";
import { requireFreshDist } from "../fuzz/dist.js";

const CLI = "dist/src/cli.js";
let scratch: string;
const mark = `cbqs-hostile-${process.pid}`;

beforeAll(() => {
  requireFreshDist();
  scratch = mkdtempSync(join(tmpdir(), "cbqs-hostile-"));
  // A per-call t8n that runs ours, then misbehaves as its first argument says.
  writeFileSync(
    join(scratch, "t8n.sh"),
    `mode=$1; shift
case $mode in
  fifo-for-the-next) node ${process.cwd()}/${CLI} t8n --quiet "$@" || exit $?;;
esac
while [ $# -gt 0 ]; do case $1 in --input.alloc) input=$2;; --output.result) result=$2;; --output.alloc) alloc=$2;; esac; shift 2; done
case $mode in
  fifo-for-the-next) rm -f "$input"; mkfifo "$input";;
  fifo) mkfifo "$result"; echo {} > "$alloc";;
  zero) echo {} > "$result"; ln -s /dev/zero "$alloc";;
  huge) truncate -s 700000000 "$result"; echo {} > "$alloc";;
  hang-leaving-daemon) setsid sleep 30 & sleep 60;;
esac
`,
  );
  // A cbqs-t8n-server/v1 server that says hello, then answers every request with an error of a million characters, or an endless line.
  writeFileSync(
    join(scratch, "server.cjs"),
    `const mode = process.argv[2];
process.stdout.write(JSON.stringify({ protocol: "cbqs-t8n-server/v1", implementation: "hostile", max_line_bytes: 1 << 26, max_sessions: 16, session_state_root: "chain" }) + "\\n");
require("readline").createInterface({ input: process.stdin }).on("line", (line) => {
  const id = JSON.parse(line).id;
  if (mode === "loud") process.stdout.write(JSON.stringify({ id, error: { code: "bad", message: "x".repeat(1000000) } }) + "\\n");
  if (mode === "tiny") process.stdout.write('{"id":' + id + ',"session":"s1","x":[' + "[],".repeat(1000000) + "[]]}\\n");
  if (mode === "endless") {
    const mib = Buffer.alloc(1 << 20, 0x20);
    const more = () => { while (process.stdout.write(mib)); process.stdout.once("drain", more); };
    more();
  }
});
`,
  );
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
afterEach(() => {
  for (const pid of marked(mark, CLI)) {
    try {
      process.kill(Number(pid), "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
});

interface Ran {
  code: number | null;
  out: string;
  err: string;
}

function cbqs(args: string[], input?: string): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, CBQS_TEST_MARK: mark }, stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout!.on("data", (c) => (out += String(c)));
    child.stderr!.on("data", (c) => (err += String(c)));
    child.on("close", (code) => resolve({ code, out, err }));
    if (input !== undefined) child.stdin!.end(input);
  });
}

const perCall = (mode: string) => `sh ${join(scratch, "t8n.sh")} ${mode}`;
const consumeQuote = (...target: string[]) => cbqs(["consume", "fixtures/corpus/create-quote.json", ...target, "--quiet"]);
/** The processes a command left behind, by their command lines. */
const strays = () => marked(mark, CLI).map((pid) => readFileSync(`/proc/${pid}/cmdline`, "latin1").replaceAll("\0", " ").trim());

describe("a per-call t8n that leaves something other than a file where an output should be", () => {
  it("a FIFO as --output.result: unusable at once, named, instead of a read that never returns (exit 2)", async () => {
    const r = await consumeQuote("--t8n", perCall("fifo"));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^cbqs: error: create-quote\.json: t8n sh .*t8n\.sh fifo: block 1: exit 0, but --output\.result is a FIFO, not a regular file\n$/);
  });

  it("a link to /dev/zero as --output.alloc: refused as the character device it names, nothing read from it", async () => {
    const r = await consumeQuote("--t8n", perCall("zero"));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/block 1: exit 0, but --output\.alloc is a character device, not a regular file\n$/);
  });

  it("a 700 MB --output.result: refused by its size (not called missing), before a byte is read", async () => {
    const r = await consumeQuote("--t8n", perCall("huge"));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(new RegExp(`block 1: exit 0, but --output\\.result has 700000000 bytes, above the ${MAX_ANSWER_BYTES}-byte bound on what is read from a target\\n$`));
  });

  it("fuzz --t8n ends its campaign on it the same way, naming the block, with its inputs kept (exit 2)", async () => {
    const r = await cbqs(["fuzz", "--t8n", perCall("fifo"), "--seed", "1", "--runs", "1", "--blocks", "1", "--jobs", "1", "--quiet", "--out", join(scratch, "fuzz-report")]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^cbqs: error: --t8n command failed on block \d+ of run 0 \(seed 1\): exit 0, but --output\.result is a FIFO, not a regular file \(kept for a look: /);
  });

  it("cbqs t8n-adapter answers the same as a t8n_failed error, and serves on", async () => {
    const alloc = { format: "cbqs-state-dump/v1", height: "0", entries: [] };
    const env = { height: "1", timestamp: "1", chain_id: "7", chain_instance_id: `0x${"c1".repeat(32)}`, governance: `0x${"00".repeat(19)}aa` };
    const request = (id: number) => JSON.stringify({ id, method: "apply", alloc, txs: [], env });
    const r = await cbqs(["t8n-adapter", perCall("fifo")], `${request(1)}\n${request(2)}\n`);
    const lines = r.out.trimEnd().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(r.code).toBe(0);
    expect(lines.slice(1)).toEqual([1, 2].map((id) => ({ id, error: { code: "t8n_failed", message: "the t8n command exit 0, but --output.result is a FIFO, not a regular file" } })));
  });

  it("a FIFO left where the next call's input was written: each call gets a new directory, so nothing hangs and the corpus fixture passes", async () => {
    const r = await consumeQuote("--t8n", perCall("fifo-for-the-next"));
    expect([r.code, r.err]).toEqual([0, ""]);
    expect(r.out).toMatch(/^consume: 1 fixture: 1 ok, 0 mismatches, 0 unusable; /);
  });
});

describe("a per-call t8n that leaves a daemon behind", () => {
  it("--timeout ends the command's whole process group and does not wait for a daemon in another session holding its stderr", async () => {
    const r = await consumeQuote("--t8n", perCall("hang-leaving-daemon"), "--timeout", "1");
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/block 1: did not finish within 1 s\n$/);
    // The command and its `sleep 60` are gone; the daemon (its own session) still runs: it was not waited for.
    expect(strays()).toEqual(["sleep 30"]);
  });

  it("a command that exits with its outputs written is read at once, whatever still holds its stderr", async () => {
    const r = await consumeQuote("--t8n", `setsid sleep 30 & node ${CLI} t8n --quiet`);
    expect([r.code, r.err]).toEqual([0, ""]);
    expect(r.out).toMatch(/^consume: 1 fixture: 1 ok, 0 mismatches, 0 unusable; /);
    expect(strays().length).toBeGreaterThan(0);
    expect(new Set(strays())).toEqual(new Set(["sleep 30"]));
  });
});

describe("a t8n server that floods", () => {
  const server = (mode: string) => `node ${join(scratch, "server.cjs")} ${mode}`;

  it("an error message of a million characters is cut in the one error line, its length said", async () => {
    const r = await consumeQuote("--t8n-server", server("loud"));
    expect(r.code).toBe(2);
    expect(r.err.split("\n")).toHaveLength(2);
    expect(r.err.length).toBeLessThan(MAX_ERROR_LINE);
    expect(r.err).toMatch(/starting the chain: session\.open at height 0: answered error bad: x{20,}… \(1000000 characters\)/);
  });

  it("an answer of a million tiny values is refused after a sixteenth of its bytes' worth of values, not parsed into gigabytes", async () => {
    const r = await consumeQuote("--t8n-server", server("tiny"));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/starting the chain: session\.open at height 0: the answer is not strict JSON \(\$: more values than a document of its size may hold \(at most 187502\)\)\n$/);
  });

  it(`an answer line that does not end is refused at ${MAX_ANSWER_BYTES} bytes and the server ended`, async () => {
    const r = await consumeQuote("--t8n-server", server("endless"));
    expect(r.code).toBe(2);
    expect(r.err).toContain(`starting the chain: wrote an answer line of more than ${MAX_ANSWER_BYTES} bytes`);
    expect(strays()).toEqual([]);
  });
});
