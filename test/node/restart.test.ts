// `cbqs node --db` and `cbqs follow --db` across a real process restart (the built CLI, as after
// `npm ci`): the node continues its stored chain without --genesis, and the follower resumes after
// its last verified block instead of verifying from genesis again.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readFixture } from "../../src/harness/documents.js";
import { get, post } from "./helpers.js";

const root = mkdtempSync(join(tmpdir(), "cbqs-restart-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Proc {
  child: ChildProcess;
  out: string;
  err: string;
  exit: Promise<number | null>;
}

function start(args: string[]): Proc {
  const child = spawn(process.execPath, ["dist/src/cli.js", ...args], { stdio: ["ignore", "pipe", "pipe"] });
  const p: Proc = { child, out: "", err: "", exit: new Promise((resolve) => child.on("close", (code) => resolve(code))) };
  child.stdout!.on("data", (c) => (p.out += String(c)));
  child.stderr!.on("data", (c) => (p.err += String(c)));
  return p;
}

async function listening(p: Proc): Promise<string> {
  for (let i = 0; i < 600; i++) {
    const url = /listening on (\S+)\n/.exec(p.out)?.[1];
    if (url !== undefined) return url;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`node did not start: ${p.err}`);
}

describe("persistent node and follower (--db) across restarts", () => {
  it("the node continues its chain; the follower resumes after its last verified block", async () => {
    const genesis = join(root, "genesis.json");
    writeFileSync(genesis, readFixture("fixtures/corpus/create-quote.json").genesis.source);
    const nodeDb = join(root, "node");
    const followerDb = join(root, "follower");

    const first = start(["node", "--db", nodeDb, "--genesis", genesis, "--port", "0", "--quiet"]);
    let url = await listening(first);
    expect((await post(url, "/mine", "")).status).toBe(200);
    expect((await post(url, "/mine", "")).status).toBe(200);
    const f1 = start(["follow", url, "--db", followerDb]);
    expect(await f1.exit).toBe(0);
    expect(f1.out).toMatch(/synced at height 2; 2 blocks, \d+ txs? verified/);
    const head = (await get(url, "/cbqs/finalized-view")).body;
    first.child.kill("SIGTERM");
    expect(await first.exit).toBe(0);

    const second = start(["node", "--db", nodeDb, "--port", "0", "--quiet"]);
    url = await listening(second);
    expect((await get(url, "/cbqs/finalized-view")).body).toEqual(head);
    expect((await post(url, "/mine", "")).status).toBe(200);
    const f2 = start(["follow", url, "--db", followerDb]);
    expect(await f2.exit).toBe(0);
    expect(f2.out).toMatch(/synced at height 3; 1 block, \d+ txs? verified/);
    // --watch, stopped while waiting: the line every stopped command ends with, naming what is kept.
    const f3 = start(["follow", url, "--db", followerDb, "--watch"]);
    for (let i = 0; i < 600 && !/waiting for new blocks/.test(f3.err); i++) await new Promise((r) => setTimeout(r, 50));
    f3.child.kill("SIGTERM");
    expect(await f3.exit).toBe(143);
    expect(f3.out).toMatch(/^follow: stopped at height 3; 0 blocks, 0 txs verified\n$/);
    expect(f3.err).toMatch(new RegExp(`\ncbqs: stopped by SIGTERM; the store ${followerDb} holds every block through height 3; run again to resume\n$`));
    second.child.kill("SIGINT");
    expect(await second.exit).toBe(0);
  });
});
