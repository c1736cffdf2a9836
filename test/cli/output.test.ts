// what `-o` (and every other output option) does to the path it names
// (src/output-file.ts, docs/reference/cli-conventions.md "Outputs"): a new or regular file is replaced atomically, a symlink
// is followed and its target written, a device, FIFO or /dev/stdout is written in place, a write
// error is exit 2. The real CLI is spawned: devices, FIFOs and exit codes belong to a real process.
import { spawn, spawnSync } from "node:child_process";
import { closeSync, lstatSync, mkdirSync, openSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { toHex } from "../../src/bytes.js";
import { loadFixture } from "../../src/harness/fixture.js";
import { readDoc } from "../harness/helpers.js";
import { requireFreshDist } from "../fuzz/dist.js";

const CLI = "dist/src/cli.js";
const root = mkdtempSync(join(tmpdir(), "cbqs-output-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
beforeAll(() => requireFreshDist());

interface Ran {
  code: number | null;
  out: string;
  err: string;
}

function cbqs(args: string[], stdin?: Buffer): Promise<Ran> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => (err += c.toString()));
  child.stdin.end(stdin);
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, out, err })));
}

const path = (name: string) => join(root, name);

/**
 * A character device of our own (major 1: 3 is null, 7 is full) when we may make one, so that a
 * regression in the rule replaces a node in our temporary folder, never the system's /dev/null
 * or /dev/full (the suite runs as root in CI). As an ordinary user /dev itself is safe: renaming
 * over a file in it is refused.
 */
function device(name: "null" | "full", minor: number): string {
  const own = path(`dev-${name}`);
  if (spawnSync("mknod", [own, "c", "1", String(minor)]).status === 0) {
    try {
      closeSync(openSync(own, "w"));
      return own;
    } catch {
      rmSync(own, { force: true }); // a nodev mount: the node cannot be opened
    }
  }
  return `/dev/${name}`;
}
let FULL = "/dev/full";
let NULL = "/dev/null";
beforeAll(() => {
  FULL = device("full", 7);
  NULL = device("null", 3);
});
// /dev/stdout cannot be a private node: if a regression ever replaces the system's link, put it
// back and fail loudly rather than leave the machine broken.
afterEach(() => {
  if (lstatSync("/dev/stdout", { throwIfNoEntry: false })?.isSymbolicLink() === true) return;
  rmSync("/dev/stdout", { force: true });
  symlinkSync("/proc/self/fd/1", "/dev/stdout");
  throw new Error("/dev/stdout was replaced by the command under test (restored)");
});
/** Files under `root` whose name says they are temporary outputs. */
const temporaries = () => readdirSync(root, { recursive: true }).map(String).filter((f) => /\.partial-\d+(-\d+)?$/.test(f));
/** What `gas-vectors schedule` prints: the text every `-o` below should receive. */
let schedule = "";

beforeAll(async () => {
  const r = await cbqs(["gas-vectors", "schedule"]);
  expect(r.code).toBe(0);
  schedule = r.out;
  expect(schedule.length).toBeGreaterThan(1000);
});

describe("-o by what the path already is", () => {
  it("-o /dev/full is exit 2 with one ENOSPC line, and /dev/full stays a character device", async () => {
    for (const args of [["gas-vectors", "schedule"], ["run", "fixtures/scenarios/transfers.json", "--json", "--quiet"]]) {
      const r = await cbqs([...args, "-o", FULL]);
      expect(r).toEqual({ code: 2, out: "", err: `cbqs: error: cannot write ${FULL}: no space left on the device (ENOSPC)\n` });
      expect(lstatSync(FULL).isCharacterDevice()).toBe(true);
    }
  });

  it("-o /dev/null is exit 0 and /dev/null stays a character device", async () => {
    expect(await cbqs(["gas-vectors", "schedule", "-o", NULL])).toEqual({ code: 0, out: "", err: "" });
    expect(lstatSync(NULL).isCharacterDevice()).toBe(true);
  });

  it("-o <FIFO> writes the content into the FIFO, which stays a FIFO", async () => {
    const fifo = path("fifo");
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    // The reader opens the FIFO (in a thread) while the command's open waits for it.
    const [read, r] = await Promise.all([readFile(fifo, "utf8"), cbqs(["gas-vectors", "schedule", "-o", fifo])]);
    expect(r.code).toBe(0);
    expect(read).toBe(schedule);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
  });

  it("-o /dev/stdout writes to the standard output (a pipe here) without replacing anything", async () => {
    expect(await cbqs(["gas-vectors", "schedule", "-o", "/dev/stdout"])).toEqual({ code: 0, out: schedule, err: "" });
  });

  it("-o /dev/stdout, /dev/fd/1, /proc/self/fd/1 and /dev/stderr reach a slow reader whole (> 64 KiB: no EAGAIN), as -o - does", async () => {
    const TRACE = ["trace", "fixtures/corpus/endpoint-admission.json", "--block", "1"];
    const whole = await cbqs([...TRACE, "-o", "-"]);
    expect(whole.code).toBe(0);
    expect(whole.out.length).toBeGreaterThan(128 * 1024);
    const q = (a: string) => `'${a}'`;
    // The reader sleeps before it reads: the pipe fills (64 KiB) and the writer must wait for it.
    const slow = (args: string[], redirect: string): Ran => {
      const r = spawnSync("bash", ["-c", `set -o pipefail; ${q(process.execPath)} ${[CLI, ...args].map(q).join(" ")} ${redirect} | (sleep 1.5; cat)`], { encoding: "utf8", maxBuffer: 1 << 26 });
      return { code: r.status, out: r.stdout, err: r.stderr };
    };
    for (const name of ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"]) expect(slow([...TRACE, "-o", name], "")).toEqual({ code: 0, out: whole.out, err: "" });
    const errOut = path("slow-stderr-stdout.txt");
    expect(slow([...TRACE, "-o", "/dev/stderr"], `2>&1 >${q(errOut)}`)).toEqual({ code: 0, out: whole.out, err: "" });
    expect(readFileSync(errOut, "utf8")).toBe("");
  });

  it("prove-state -o /dev/stdout is -o -: stdout holds the proof JSON alone, the root line goes to stderr", async () => {
    const doc = JSON.parse(readFileSync("fixtures/corpus/create-quote.json", "utf8")) as { blocks: Array<{ post_state: { entries: Array<{ key: string }> } }> };
    const dump = path("prove-dump.json");
    writeFileSync(dump, JSON.stringify(doc.blocks[1]!.post_state));
    const args = ["prove-state", dump, "--key", doc.blocks[1]!.post_state.entries[0]!.key];
    const dash = await cbqs([...args, "-o", "-"]);
    expect(dash.code).toBe(0);
    expect(dash.err).toMatch(/^state root: 0x[0-9a-f]{64}\n$/);
    const dev = await cbqs([...args, "-o", "/dev/stdout"]);
    expect(dev).toEqual(dash);
    expect(() => JSON.parse(dev.out) as unknown).not.toThrow();
  });

  it("the temporary file is created exclusively: a symlink planted at <name>.partial-<pid> is not written through", async () => {
    const victim = path("victim.txt");
    writeFileSync(victim, "keep me\n");
    const out = path("excl.md");
    const child = spawn(process.execPath, [CLI, "gas-vectors", "schedule", "-o", out], { stdio: ["ignore", "pipe", "pipe"] });
    // Planted before the command (still starting up) opens its temporary.
    symlinkSync(victim, `${out}.partial-${child.pid}`);
    let err = "";
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    child.stdout.resume();
    const code = await new Promise<number | null>((r) => child.on("close", r));
    expect(code, err).toBe(0);
    expect(readFileSync(victim, "utf8")).toBe("keep me\n");
    expect(readFileSync(out, "utf8")).toBe(schedule);
    expect(lstatSync(`${out}.partial-${child.pid}`).isSymbolicLink()).toBe(true); // not ours: left alone
    rmSync(`${out}.partial-${child.pid}`);
    expect(temporaries()).toEqual([]);
  });

  it("-o <symlink> keeps the link and writes its target; a dangling link's target is created", async () => {
    writeFileSync(path("target.md"), "old\n");
    symlinkSync("target.md", path("link.md"));
    expect((await cbqs(["gas-vectors", "schedule", "-o", path("link.md")])).code).toBe(0);
    expect(lstatSync(path("link.md")).isSymbolicLink()).toBe(true);
    expect(readlinkSync(path("link.md"))).toBe("target.md");
    expect(readFileSync(path("target.md"), "utf8")).toBe(schedule);

    mkdirSync(path("sub"));
    symlinkSync(join("sub", "new.md"), path("dangling.md"));
    expect((await cbqs(["gas-vectors", "schedule", "-o", path("dangling.md")])).code).toBe(0);
    expect(lstatSync(path("dangling.md")).isSymbolicLink()).toBe(true);
    expect(readFileSync(path("sub/new.md"), "utf8")).toBe(schedule);
    expect(temporaries()).toEqual([]);
  });

  it("-o <symlink>.gz writes its target gzipped; a link to a directory is refused like the directory", async () => {
    symlinkSync("target.md.gz", path("link.md.gz"));
    expect((await cbqs(["gas-vectors", "schedule", "-o", path("link.md.gz")])).code).toBe(0);
    expect(lstatSync(path("link.md.gz")).isSymbolicLink()).toBe(true);
    expect(gunzipSync(readFileSync(path("target.md.gz"))).toString()).toBe(schedule);

    symlinkSync("sub", path("dirlink"));
    expect(await cbqs(["gas-vectors", "schedule", "-o", path("dirlink")])).toEqual({ code: 2, out: "", err: `cbqs: error: cannot write ${path("dirlink")}: it is a directory (give a file name)\n` });
    expect(lstatSync(path("dirlink")).isSymbolicLink()).toBe(true);
  });

  it("-o <regular file> is still replaced atomically (a new file renamed over it; no temporary left)", async () => {
    writeFileSync(path("plain.md"), "old\n");
    const before = statSync(path("plain.md")).ino;
    expect((await cbqs(["gas-vectors", "schedule", "-o", path("plain.md")])).code).toBe(0);
    expect(readFileSync(path("plain.md"), "utf8")).toBe(schedule);
    expect(statSync(path("plain.md")).ino).not.toBe(before);
    expect(temporaries()).toEqual([]);
  });

  describe("t8n", () => {
    const doc = readDoc("fixtures/corpus/provider-lifecycle.json");
    const f = loadFixture(doc);
    const put = (name: string, v: unknown) => {
      writeFileSync(path(name), JSON.stringify(v));
      return path(name);
    };
    const b = f.blocks[1]!;
    const inputs = () => [
      "t8n",
      "--input.alloc", put("alloc.json", doc.blocks[0]!["post_state"]),
      "--input.txs", put("txs.json", doc.blocks[1]!.transactions),
      "--input.env", put("env.json", {
        height: b.height.toString(),
        timestamp: b.timestamp.toString(),
        chain_id: f.genesis.config.chain_id.toString(),
        chain_instance_id: toHex(f.genesis.chain_instance_id),
        governance: toHex(f.genesis.config.governance),
        parent_hash: toHex(f.blocks[0]!.block_hash),
      }),
      "--quiet",
    ];

    it("-o t8n --output.result link.json keeps the link and writes its target", async () => {
      writeFileSync(path("result-target.json"), "old\n");
      symlinkSync("result-target.json", path("result-link.json"));
      const r = await cbqs([...inputs(), "--output.result", path("result-link.json")]);
      expect(r).toMatchObject({ code: 0, err: "" });
      expect(lstatSync(path("result-link.json")).isSymbolicLink()).toBe(true);
      const toStdout = await cbqs(inputs());
      expect(toStdout.out).toMatch(/"format": "cbqs-t8n-result\/v1"/);
      expect(readFileSync(path("result-target.json"), "utf8")).toBe(toStdout.out);
    });

    it("-o a failed write leaves an existing regular file as it was and no temporary (t8n --output.alloc /dev/full)", async () => {
      writeFileSync(path("kept.json"), "old\n");
      const r = await cbqs([...inputs(), "--output.result", path("kept.json"), "--output.alloc", FULL]);
      expect(r).toEqual({ code: 2, out: "", err: `cbqs: error: cannot write ${FULL}: no space left on the device (ENOSPC)\n` });
      expect(readFileSync(path("kept.json"), "utf8")).toBe("old\n");
      expect(temporaries()).toEqual([]);
    });

    it("every output path is checked before any work: t8n --output.alloc into a missing folder is refused before its inputs are read", async () => {
      const missing = path("no-such-folder/post.json");
      const r = await cbqs(["t8n", "--input.alloc", path("never-read.json"), "--input.txs", path("never-read.json"), "--input.env", path("never-read.json"), "--output.alloc", missing]);
      expect(r).toEqual({ code: 2, out: "", err: `cbqs: error: cannot write ${missing}: no such file or directory (ENOENT)\n` });
    });
  });

  it("fuzz --out <existing file> is exit 2 before the campaign (no header, no t8n run, the file untouched)", async () => {
    writeFileSync(path("report.json"), "mine\n");
    const r = await cbqs(["fuzz", "--t8n", `node ${CLI} t8n`, "--seed", "1", "--runs", "1", "--out", path("report.json")]);
    expect(r).toEqual({
      code: 2,
      out: "",
      err: `cbqs: error: --out ${path("report.json")}: a file with that name exists; --out names the directory the report is written into\n`,
    });
    expect(readFileSync(path("report.json"), "utf8")).toBe("mine\n");
  });

  it("snapshot export -o <symlink> keeps the link, and snapshot import - reads the snapshot from the standard input", async () => {
    const store = path("store");
    expect((await cbqs(["replay", "fixtures/corpus/transfers.json", "--db", store, "--quiet"])).code).toBe(0);
    symlinkSync("snap.bin", path("snap-link.bin"));
    const exported = await cbqs(["snapshot", "export", "--db", store, "-o", path("snap-link.bin")]);
    expect(exported.code).toBe(0);
    expect(lstatSync(path("snap-link.bin")).isSymbolicLink()).toBe(true);
    const snapshot = readFileSync(path("snap.bin"));
    expect(snapshot.subarray(0, 16).toString()).toBe("CBQS-SNAPSHOT/1\n");
    const imported = await cbqs(["snapshot", "import", "-", "--db", path("imported")], snapshot);
    expect(imported).toMatchObject({ code: 0, err: "" });
    expect(imported.out).toMatch(/^imported block \d+ \(state_root 0x[0-9a-f]{64}\) into /);
    // A truncated stream is refused like a truncated file.
    const cut = await cbqs(["snapshot", "import", "-", "--db", path("imported-cut")], snapshot.subarray(0, snapshot.length - 10));
    expect(cut).toEqual({ code: 2, out: "", err: "cbqs: error: -: the snapshot is truncated\n" });
  });
});
