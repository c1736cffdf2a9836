// The follower's checks against the node it follows: the node must still hold the
// follower's head block (every start, every poll); a request that never gets an answer times out
// (and a signal stops it); a malformed feed answer names the URL, the path in the answer and the
// height; a node whose history starts at a snapshot is refused for a fresh follower, which can
// start from that snapshot (with a trusted anchor, as `cbqs snapshot import` can); any port works;
// --until with --watch is refused. Real sockets, real LMDB stores in a temp dir, the spawned CLI
// where signals and exit codes matter.
import { spawn } from "node:child_process";
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer as createHttpServer, type Server } from "node:http";
import { createServer as createNetServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readFixture } from "../../src/harness/documents.js";
import { CbqsNode } from "../../src/chain-node/chain-node.js";
import { downloadSnapshot, follow, FollowInputError } from "../../src/follower/follower.js";
import { exportSnapshot } from "../../src/store-tools/snapshot.js";
import { MemoryChainDb } from "../../state/chain-db/memory.js";
import { LmdbChainDb } from "../../state/lmdb/chain-db.js";
import { SNAPSHOT_MAGIC } from "../../state/lmdb/snapshot.js";
import { cbqs } from "../cli/program.js";
import { address, DOWNLOAD, get, post, startNode, toHex, transferTx, re, type TestNode } from "./helpers.js";

const FIXTURE = "fixtures/corpus/rent-settle-suspend-expire.json";
const GENESIS = readFixture("fixtures/corpus/transfers.json").genesis.source;
const CHAIN = 7n;
const root = mkdtempSync(join(tmpdir(), "cbqs-follow-checks-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const tmp = (name: string) => join(root, `${name}-${dirs++}`);

/** A devnet from GENESIS with `blocks` empty blocks, after `transfers` transfers in block 1. */
async function devnet(blocks: number, transfers = 0): Promise<TestNode> {
  const n = await startNode({ kind: "genesis", source: GENESIS });
  for (let i = 0; i < transfers; i++) await post(n.url, "/tx", toHex(transferTx(CHAIN, address(0x11), BigInt(i), address(0x22), 1n)));
  for (let i = 0; i < blocks; i++) await post(n.url, "/mine", "");
  return n;
}

/** Forwards every request to `target.url` (switchable: the node behind it is replaced); `hang` accepts and never answers. */
async function switchingProxy(url: string): Promise<{ url: string; target: { url: string }; hang: { on: boolean }; server: Server }> {
  const target = { url };
  const hang = { on: false };
  const server = createHttpServer((req, res) => {
    if (hang.on) return;
    void (async () => {
      const upstream = await fetch(target.url + req.url);
      const text = await upstream.text();
      res.writeHead(upstream.status, { "content-type": "application/json", connection: "close" });
      res.end(text);
    })().catch(() => res.destroy());
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, target, hang, server };
}

/** A TCP server that accepts and never answers; `connected` resolves at the first connection. */
async function silentServer(): Promise<{ url: string; close: () => void; connected: Promise<void> }> {
  const sockets: Socket[] = [];
  let onConnect: () => void = () => {};
  const connected = new Promise<void>((r) => (onConnect = r));
  const server = createNetServer((s) => {
    sockets.push(s);
    onConnect();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connected,
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!cond()) throw new Error(`timed out waiting for ${what}`);
}

describe("the node must still hold the follower's head block", () => {
  it("follow --db refuses (exit 1) a restarted node whose block 10 differs, or whose head (3) is below ours", async () => {
    const db = tmp("store");
    const a = await devnet(10);
    const ours = toHex(a.db.blockByHeight(10n)!.block_hash);
    try {
      const first = await cbqs("follow", a.url, "--db", db);
      expect(first.exitCode, first.err).toBe(0);
      expect(first.out).toMatch(/^follow: synced at height 10; 10 blocks/);
    } finally {
      await a.close();
    }
    // The same genesis, another history: one transfer, 10 blocks.
    const b = await devnet(10, 1);
    try {
      const theirs = toHex(b.db.blockByHeight(10n)!.block_hash);
      expect(theirs).not.toBe(ours);
      const r = await cbqs("follow", b.url, "--db", db);
      expect(r.exitCode, r.err).toBe(1);
      expect(r.out).toBe(
        `follow: ${b.url}/replication?since=10&limit=100: the node's chain no longer contains our block 10 (ours ${ours}, node's ${theirs})\nfollow: stopped; 0 blocks, 0 txs verified\n`,
      );
    } finally {
      await b.close();
    }
    const c = await devnet(3);
    try {
      const r = await cbqs("follow", c.url, "--db", db);
      expect(r.exitCode, r.err).toBe(1);
      expect(r.out).toMatch(new RegExp(`^follow: ${re(c.url)}/replication\\?since=10&limit=100: the node's chain no longer contains our block 10 \\(ours ${ours}, node's head is 3\\)\\n`));
    } finally {
      await c.close();
    }
  });

  it("follow --until h with h at or below our head asks the node first: a node restarted as another chain with head 3 is exit 1, never 'synced'", async () => {
    const db = tmp("store-until");
    const a = await devnet(10);
    const ours = toHex(a.db.blockByHeight(10n)!.block_hash);
    try {
      expect((await cbqs("follow", a.url, "--db", db)).exitCode).toBe(0);
      // The same node: our head block is still its block 10, so --until 10 and --until 5 are synced at once.
      for (const h of ["10", "5"]) {
        const r = await cbqs("follow", a.url, "--db", db, "--until", h);
        expect(r.exitCode, r.err).toBe(0);
        expect(r.out).toMatch(/^follow: synced at height 10; 0 blocks/);
      }
    } finally {
      await a.close();
    }
    const c = await devnet(3);
    try {
      for (const h of ["10", "5"]) {
        const r = await cbqs("follow", c.url, "--db", db, "--until", h);
        expect(r.exitCode, r.out).toBe(1);
        expect(r.out).toMatch(new RegExp(`^follow: ${re(c.url)}/replication\\?since=10&limit=100&until=10: the node's chain no longer contains our block 10 \\(ours ${ours}, node's head is 3\\)\\n`));
        expect(r.out).not.toMatch(/synced/);
      }
    } finally {
      await c.close();
    }
  });

  it("under --watch, a node replaced by another history (block 10 differs) or a shorter one (head 3) stops the follower with exit 1's divergence", async () => {
    for (const replacement of [() => devnet(12, 1), () => devnet(3)]) {
      const a = await devnet(10);
      const proxy = await switchingProxy(a.url);
      const b = await replacement();
      try {
        const db = new MemoryChainDb();
        const abort = new AbortController();
        const following = follow({ url: proxy.url, db, watch: true, pollMs: 10, signal: abort.signal });
        await until(() => (db.head()?.height ?? 0n) === 10n, "height 10");
        proxy.target.url = b.url;
        const r = await Promise.race([following, new Promise((r) => setTimeout(r, 5000, "still watching"))]);
        abort.abort();
        const bHead = b.db.head()!.height;
        const expected =
          bHead < 10n
            ? `the node's chain no longer contains our block 10 (ours ${toHex(a.db.blockByHeight(10n)!.block_hash)}, node's head is ${bHead})`
            : `the node's chain no longer contains our block 10 (ours ${toHex(a.db.blockByHeight(10n)!.block_hash)}, node's ${toHex(b.db.blockByHeight(10n)!.block_hash)})`;
        expect(r).toMatchObject({ status: "diverged", message: expected, source: `${proxy.url}/replication?since=10&limit=100` });
      } finally {
        proxy.server.close();
        await a.close();
        await b.close();
      }
    }
  });
});

describe("request timeout and signals", () => {
  it("a node that accepts and never answers is exit 2 after --timeout, naming the URL and the timeout", async () => {
    const silent = await silentServer();
    try {
      const r = await cbqs("follow", silent.url, "--timeout", "1");
      expect(r).toEqual({ exitCode: 2, out: "", err: `cbqs: error: ${silent.url}/genesis: no answer within 1 s (--timeout 1)\n` });
      expect((await cbqs("follow", silent.url, "--timeout", "0")).err).toMatch(/^cbqs: error: --timeout must be a number of seconds from 1 to 3600/);
    } finally {
      silent.close();
    }
  });

  it("under --watch a node that stops answering is retried with a doubling wait, and followed again once it answers", async () => {
    const n = await startNode(FIXTURE);
    const proxy = await switchingProxy(n.url);
    try {
      const db = new MemoryChainDb();
      const abort = new AbortController();
      const retries: Array<[string, number]> = [];
      const following = follow({ url: proxy.url, db, watch: true, pollMs: 10, timeoutMs: 1000, signal: abort.signal, onUnreachable: (m, ms) => retries.push([m, ms]) });
      // A start-up failure would otherwise surface as an unhandled rejection instead of this test's.
      following.catch(() => {});
      await until(() => db.head()?.height === n.db.head()!.height, "the node's head");
      proxy.hang.on = true;
      await until(() => retries.length >= 3, "three retries");
      expect(retries[0]![0]).toMatch(new RegExp(`^${re(proxy.url)}/replication\\?since=\\d+&limit=100: no answer within 1 s \\(--timeout 1\\)$`));
      expect(retries.slice(0, 3).map(([, ms]) => ms)).toEqual([10, 20, 40]);
      proxy.hang.on = false;
      await post(n.url, "/mine", "");
      const target = n.db.head()!.height;
      await until(() => db.head()?.height === target, "the new block");
      abort.abort();
      expect(await following).toMatchObject({ status: "stopped", height: target });
    } finally {
      proxy.server.closeAllConnections();
      proxy.server.close();
      await n.close();
    }
  });

  for (const [signal, code] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const) {
    it(`${signal} while a request hangs stops follow at once: exit ${code}, "cbqs: stopped by ${signal}; …"`, async () => {
      const silent = await silentServer();
      try {
        const child = spawn(process.execPath, ["dist/src/cli.js", "follow", silent.url, "--db", tmp("signal")], { stdio: ["ignore", "pipe", "pipe"] });
        let err = "";
        child.stderr.on("data", (c: Buffer) => (err += c.toString()));
        const closed = new Promise<number | null>((r) => child.on("close", r));
        await silent.connected;
        child.kill(signal);
        expect(await closed).toBe(code);
        expect(err).toBe(`cbqs: stopped by ${signal}; nothing verified yet; the store is unchanged\n`);
      } finally {
        silent.close();
      }
    });
  }
});

describe("malformed feed answers", () => {
  it("an unknown field in a feed item is exit 2 naming the page URL with its query, $.items[i] and the block's height", async () => {
    const n = await startNode(FIXTURE);
    const server = createHttpServer((req, res) => {
      void (async () => {
        const upstream = await fetch(n.url + req.url);
        let text = await upstream.text();
        if (req.url!.startsWith("/replication")) {
          const page = JSON.parse(text) as { items: Array<Record<string, unknown>> };
          for (const item of page.items) if (item["height"] === "10") item["note"] = "x";
          text = JSON.stringify(page);
        }
        res.writeHead(upstream.status, { "content-type": "application/json" });
        res.end(text);
      })();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const r = await cbqs("follow", url, "--quiet");
      expect(r.exitCode).toBe(2);
      expect(r.err).toMatch(new RegExp(`^cbqs: error: ${re(url)}/replication\\?since=1&limit=100: block 10: \\$\\.items\\[3\\]\\.note: unknown field \\(expected one of: [^\\n]*\\)\\n$`));
    } finally {
      server.close();
      await n.close();
    }
  });
});

describe("follow --snapshot <url> downloads into a file of its own", () => {
  it("the download file is created exclusively: a symlink planted at its name is not written through, another name is taken", async () => {
    const body = Buffer.concat([SNAPSHOT_MAGIC, Buffer.from("snapshot bytes\n".repeat(100))]);
    const server = createHttpServer((_req, res) => res.end(body));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const victim = tmp("victim");
      writeFileSync(victim, "keep me\n");
      const stem = tmp("store") + ".snapshot-download-1";
      symlinkSync(victim, `${stem}.cbqs`);
      const file = await downloadSnapshot(`http://127.0.0.1:${(server.address() as AddressInfo).port}/s.cbqs`, stem, DOWNLOAD);
      expect(file).toBe(`${stem}-1.cbqs`);
      expect(readFileSync(file).equals(body)).toBe(true);
      expect(readFileSync(victim, "utf8")).toBe("keep me\n");
      expect(lstatSync(`${stem}.cbqs`).isSymbolicLink()).toBe(true);
      for (const f of [file, `${stem}.cbqs`, victim]) rmSync(f); // the tests below check that no download is left
    } finally {
      server.close();
    }
  });
});

describe("a snapshot download that fails leaves nothing", () => {
  it("an answer other than 200 is refused naming the URL and status, and its file is removed", async () => {
    const server = createHttpServer((_req, res) => {
      res.writeHead(404);
      res.end("no such snapshot");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/s.cbqs`;
      const stem = tmp("gone") + ".snapshot-download-1";
      await expect(downloadSnapshot(url, stem, DOWNLOAD)).rejects.toThrow(new FollowInputError(`${url}: HTTP 404, not a snapshot file`));
      expect(existsSync(`${stem}.cbqs`)).toBe(false);
      // The descriptor was closed: the name can be taken again at once.
      await expect(downloadSnapshot(url, stem, DOWNLOAD)).rejects.toThrow(FollowInputError);
      expect(existsSync(`${stem}.cbqs`)).toBe(false);
    } finally {
      server.close();
    }
  });
});

describe("a node whose history starts at a snapshot", () => {
  /** A node on an LMDB store rebuilt from the snapshot of FIXTURE's chain at its head H, then 2 blocks more. */
  async function snapshotNode(): Promise<{ node: TestNode; file: string; h: bigint; hash: string }> {
    const full = LmdbChainDb.open(tmp("full"));
    CbqsNode.open(full, { kind: "fixture", fixture: readFixture(FIXTURE) });
    const file = tmp("snap") + ".cbqs";
    const block = exportSnapshot(full, file);
    full.close();
    const dir = tmp("from-snapshot");
    expect((await cbqs("snapshot", "import", file, "--db", dir)).exitCode).toBe(0);
    const node = await startNode({ kind: "store" }, { db: LmdbChainDb.open(dir) });
    await post(node.url, "/mine", "");
    await post(node.url, "/mine", "");
    return { node, file, h: block.height, hash: toHex(block.block_hash) };
  }

  it("GET /genesis and discovery say where the history starts: genesis for a whole chain, block H for a node started from a snapshot (CIP-4 §8.1)", async () => {
    const whole = await startNode(FIXTURE);
    const { node, h, hash } = await snapshotNode();
    try {
      const genesisHash = toHex(whole.db.genesis()!.block.block_hash);
      expect((await get(whole.url, "/genesis")).body["history_start"]).toEqual({ height: "0", block_hash: genesisHash });
      expect((await get(whole.url, "/.well-known/cbqs")).body["history_start"]).toEqual({ height: "0", block_hash: genesisHash });
      expect((await get(node.url, "/genesis")).body["history_start"]).toEqual({ height: h.toString(), block_hash: hash });
      expect((await get(node.url, "/.well-known/cbqs")).body["history_start"]).toEqual({ height: h.toString(), block_hash: hash });
    } finally {
      await whole.close();
      await node.close();
    }
  });

  it("a fresh follower (or one below H) is refused with exit 2 and the way to start; with --snapshot <file> or <url> it follows to the head (CIP-4 §8.1)", async () => {
    const { node, file, h, hash } = await snapshotNode();
    const files = createHttpServer((req, res) => {
      if (req.url !== "/snap.cbqs") return res.writeHead(404).end();
      res.writeHead(200, { "content-type": "application/octet-stream" });
      res.end(readFileSync(file));
    });
    await new Promise<void>((r) => files.listen(0, "127.0.0.1", r));
    const filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
    const whole = await startNode(FIXTURE);
    try {
      const refused = await cbqs("follow", node.url);
      expect(refused).toEqual({
        exitCode: 2,
        out: "",
        err: `cbqs: error: ${node.url}/genesis: the node's history starts at ${h}: start from its snapshot (cbqs follow --snapshot <file|url> --db <dir>)\n`,
      });
      // A follower that has verified the chain only up to block 5 lacks the blocks up to H as well.
      const behind = new MemoryChainDb();
      await follow({ url: whole.url, db: behind, until: 5n, watch: false, pollMs: 5 });
      await expect(follow({ url: node.url, db: behind, watch: false, pollMs: 5 })).rejects.toThrow(new FollowInputError(`${node.url}/genesis: the node's history starts at ${h}: start from its snapshot (cbqs follow --snapshot <file|url> --db <dir>)`));

      const head = node.db.head()!;
      for (const source of [file, `${filesUrl}/snap.cbqs`]) {
        const db = tmp("follower");
        const r = await cbqs("follow", node.url, "--db", db, "--snapshot", source, "--trusted-block-hash", hash, "--quiet");
        expect(r.exitCode, r.err).toBe(0);
        expect(r.out).toBe(
          `follow: imported block ${h} (state_root ${toHex(node.db.blockByHeight(h)!.state_root)}) into ${db}\n` +
            `follow: block ${h}'s hash is the trusted ${hash}\n` +
            `follow: synced at height ${head.height}; 2 blocks, 0 txs verified\n`,
        );
        const ours = LmdbChainDb.open(db);
        expect(toHex(ours.head()!.block_hash)).toBe(toHex(head.block_hash));
        ours.close();
      }
      expect(readdirNames(root).filter((f) => f.includes(".snapshot-download-"))).toEqual([]);
      // --snapshot needs a store to import into; a URL that is not a snapshot is exit 2.
      expect((await cbqs("follow", node.url, "--snapshot", file)).err).toMatch(/^cbqs: error: --snapshot needs --db <dir>/);
      const missing = await cbqs("follow", node.url, "--db", tmp("follower"), "--snapshot", `${filesUrl}/nothing`);
      expect(missing).toEqual({ exitCode: 2, out: "", err: `cbqs: error: ${filesUrl}/nothing: HTTP 404, not a snapshot file\n` });
    } finally {
      files.close();
      await whole.close();
      await node.close();
    }
  });
});

function readdirNames(dir: string): string[] {
  return existsSync(dir) ? readdirSync(dir) : [];
}

describe("snapshot import --trusted-block-hash (CIP-4 §8.1)", () => {
  it("import with a matching anchor says so; a mismatching one is exit 1 with nothing written; none says the snapshot is checked only against itself", async () => {
    const full = LmdbChainDb.open(tmp("full"));
    CbqsNode.open(full, { kind: "fixture", fixture: readFixture(FIXTURE) });
    const file = tmp("snap") + ".cbqs";
    const block = exportSnapshot(full, file);
    const other = toHex(full.blockByHeight(block.height - 1n)?.block_hash ?? full.genesis()!.block.block_hash);
    full.close();
    const hash = toHex(block.block_hash);
    const line = `imported block ${block.height} (state_root ${toHex(block.state_root)}) into`;

    const none = tmp("none");
    expect(await cbqs("snapshot", "import", file, "--db", none)).toEqual({
      exitCode: 0,
      out: `${line} ${none}\nno trusted anchor given: the snapshot is checked only against its own block record\n`,
      err: "",
    });
    const match = tmp("match");
    expect(await cbqs("snapshot", "import", file, "--db", match, "--trusted-block-hash", hash)).toEqual({
      exitCode: 0,
      out: `${line} ${match}\nblock ${block.height}'s hash is the trusted ${hash}\n`,
      err: "",
    });
    const mismatch = tmp("mismatch");
    expect(await cbqs("snapshot", "import", file, "--db", mismatch, "--trusted-block-hash", other)).toEqual({
      exitCode: 1,
      out: `MISMATCH ${file}: block ${block.height}: block_hash: expected ${other} (the trusted anchor) got ${hash}\nsnapshot refused; ${mismatch} is left as it was\n`,
      err: "",
    });
    expect(existsSync(mismatch)).toBe(false);
    expect(readdirNames(root).filter((f) => f.includes(".import-"))).toEqual([]);
    expect((await cbqs("snapshot", "import", file, "--db", tmp("bad"), "--trusted-block-hash", "0x12")).err).toMatch(/^cbqs: error: --trusted-block-hash must be a 0x-prefixed 32-byte hex/);
  });
});

describe("smaller refusals", () => {
  it("follow reaches a node on a port fetch would refuse ('bad port'), and http://127.0.0.1:1 is a plain connection refusal", async () => {
    const r1 = await cbqs("follow", "http://127.0.0.1:1");
    expect(r1).toEqual({ exitCode: 2, out: "", err: "cbqs: error: cannot reach http://127.0.0.1:1/genesis: ECONNREFUSED\n" });
    // Ports on the fetch spec's blocked-port list; the first one free here is used, and none free
    // is a failure with its reason, never a silent pass.
    let n: TestNode | undefined;
    for (const port of [10080, 6697, 6669, 6668, 6667, 6666, 6665, 6000, 5061, 5060]) {
      try {
        n = await startNode(FIXTURE, { port });
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE") throw err;
      }
    }
    if (n === undefined) throw new Error("every fetch-blocked port tried (10080, 6697, 6665–6669, 6000, 5060, 5061) is in use on this machine");
    try {
      const r = await cbqs("follow", n.url, "--quiet");
      expect(r.exitCode, r.err).toBe(0);
      expect(r.out).toMatch(/^follow: synced at height \d+/);
    } finally {
      await n.close();
    }
  });

  it("--until with --watch is refused with exit 2 (one would be ignored)", async () => {
    expect(await cbqs("follow", "http://127.0.0.1:8545", "--until", "3", "--watch")).toEqual({
      exitCode: 2,
      out: "",
      err: "cbqs: error: --until and --watch do not combine: --until exits once that height is verified, --watch keeps following; give one\n",
    });
  });
});

describe("the follower's requests go through the client", () => {
  it("a node that keeps answering 429 past the client's bound (5 retries) is exit 2 naming the URL; under --watch it is waited out like an unreachable node", async () => {
    const n = await startNode(FIXTURE);
    const limited = { on: true };
    const server = createHttpServer((req, res) => {
      void (async () => {
        if (limited.on && req.url!.startsWith("/replication")) {
          res.writeHead(429, { "content-type": "application/json", "retry-after": "0" });
          res.end(JSON.stringify({ error: { code: "rate_limited", message: "one client may make at most 25 requests per second" } }));
          return;
        }
        const upstream = await fetch(n.url + req.url);
        res.writeHead(upstream.status, { "content-type": "application/json" });
        res.end(await upstream.text());
        // The node closed under a request still forwarded (the follower's subscription): drop it.
      })().catch(() => res.destroy());
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const refused = `${url}/replication?since=1&limit=100: HTTP 429 rate_limited: one client may make at most 25 requests per second (gave up after 6 attempts; Retry-After 0 s)`;
      const err = (await follow({ url, db: new MemoryChainDb(), watch: false, pollMs: 5 }).catch((e: unknown) => e)) as Error;
      expect(err).toBeInstanceOf(FollowInputError); // exit 2
      expect(err.message).toBe(refused);
      const db = new MemoryChainDb();
      const abort = new AbortController();
      const retries: string[] = [];
      const following = follow({ url, db, watch: true, pollMs: 5, signal: abort.signal, onUnreachable: (m) => retries.push(m) });
      following.catch(() => {});
      await until(() => retries.length >= 2, "two retries");
      expect(retries[0]).toBe(refused);
      limited.on = false;
      await until(() => db.head()?.height === n.db.head()!.height, "the node's head");
      abort.abort();
      expect(await following).toMatchObject({ status: "stopped", height: n.db.head()!.height });
    } finally {
      server.close();
      await n.close();
    }
  });

  it("a genesis block_hash that is not the genesis header's is the first divergence (exit 1's MISMATCH), as before the client checked it", async () => {
    const n = await startNode(FIXTURE);
    const server = createHttpServer((req, res) => {
      void (async () => {
        const upstream = await fetch(n.url + req.url);
        let text = await upstream.text();
        if (req.url === "/genesis") {
          const g = JSON.parse(text) as Record<string, string>;
          g["block_hash"] = g["block_hash"]!.slice(0, -1) + (g["block_hash"]!.endsWith("0") ? "1" : "0");
          text = JSON.stringify(g);
        }
        res.writeHead(upstream.status, { "content-type": "application/json" });
        res.end(text);
      })();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const ours = toHex(n.db.blockByHeight(0n)!.block_hash);
      const r = await follow({ url, db: new MemoryChainDb(), watch: false, pollMs: 5 });
      expect(r).toMatchObject({ status: "mismatch", source: `${url}/genesis`, mismatch: { height: 0n, path: "$.block_hash", field: "genesis block_hash", actual: ours } });
      expect((r as { mismatch: { expected: string } }).mismatch.expected).not.toBe(ours);
    } finally {
      server.close();
      await n.close();
    }
  });
});
