// A hostile node, or a broken proxy in front of one, cannot make the follower read without bound
// (docs/guides/run-a-devnet.md "The follower"): an event stream that never ends its event is refused at
// MAX_EVENT_BYTES and the follower stops with exit 2's FollowInputError naming the node; a
// snapshot download is judged by its status and magic before a byte is written, and bounded in
// bytes and time. Every stand-in server here counts what it sent, so "bounded" is measured, not
// assumed: a follower that kept reading would take all of it.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { devnetGenesisSource } from "../../src/harness/devnet.js";
import { downloadSnapshot, follow, FollowInputError } from "../../src/follower/follower.js";
import { EventBound, EventTooLarge, MAX_EVENT_BYTES } from "../../src/follower/head-watch.js";
import { MemoryChainDb } from "../../state/chain-db/memory.js";
import { SNAPSHOT_MAGIC } from "../../state/lmdb/snapshot.js";
import { requireFreshDist } from "../fuzz/dist.js";
import { DOWNLOAD, post, startNode } from "./helpers.js";

const root = mkdtempSync(join(tmpdir(), "cbqs-follow-hostile-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** What a stand-in server may send at most: far more than any bound it tests, far less than a test can afford. */
const CAP = 64 * 1024 * 1024;

/**
 * A stand-in server on loopback whose `flood` writes a body until CAP, as fast as its client reads.
 * `hungUp()` resolves once the flooded answer's connection has closed: true when the client hung
 * up before CAP (it stopped reading), false when it took all of it.
 */
async function standIn(handle: (req: IncomingMessage, res: ServerResponse, flood: (res: ServerResponse, first?: Uint8Array) => void) => void) {
  const stats = { sent: 0 };
  let closed: (early: boolean) => void = () => undefined;
  const hungUp = new Promise<boolean>((r) => (closed = r));
  const flood = (res: ServerResponse, first: Uint8Array = new Uint8Array(0)) => {
    const chunk = Buffer.alloc(64 * 1024, 0x78);
    res.write(first);
    stats.sent += first.length;
    res.on("close", () => closed(stats.sent < CAP));
    const more = () => {
      while (stats.sent < CAP && !res.destroyed) {
        stats.sent += chunk.length;
        if (!res.write(chunk)) return void res.once("drain", more);
      }
      res.end();
    };
    more();
  };
  const server: Server = createServer((req, res) => handle(req, res, flood));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, stats, hungUp: () => hungUp, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe("an event stream whose event never ends", () => {
  it(`the follower refuses it at ${MAX_EVENT_BYTES} bytes and stops naming the node (exit 2's FollowInputError), having read a bounded part of it`, async () => {
    const n = await startNode({ kind: "genesis", source: devnetGenesisSource(10) });
    // A proxy that passes every request to the node, but answers GET /subscribe with one endless data line.
    const proxy = await standIn((req, res, flood) => {
      if (req.url === "/subscribe") {
        res.writeHead(200, { "content-type": "text/event-stream" });
        return flood(res, Buffer.from("event: block\ndata: "));
      }
      const upstream = request(`${n.url}${req.url}`, { method: req.method, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      req.pipe(upstream);
    });
    try {
      await post(n.url, "/mine?blocks=2", "");
      const db = new MemoryChainDb();
      const followed = follow({ url: proxy.url, db, watch: true, pollMs: 3_600_000 });
      await expect(followed).rejects.toThrow(new FollowInputError(`${proxy.url}/subscribe: the node sent an event of more than ${MAX_EVENT_BYTES} bytes`));
      // It had verified the chain up to the node's head first: the refusal came while it waited.
      expect(db.head()!.height).toBe(2n);
      expect(await proxy.hungUp()).toBe(true);
    } finally {
      await proxy.close();
      await n.close();
    }
  });

  it("the bound counts an event's lines up to the blank line that ends it, whatever the line ends (LF, CR, CRLF)", () => {
    const bound = new EventBound(10);
    const feed = (text: string) => bound.check(Buffer.from(text));
    // 10 bytes in two lines, then a blank line: the next event starts from 0.
    feed("data: ab\r\ndd\r\n\r\n");
    feed("data:12345\n\n");
    feed("data: abcd\r\rdata: abcd\n\ndata:");
    // A CRLF is one line end, not a line end and a blank line: the event goes on counting.
    expect(() => feed("1234\r\nx\r\ny")).toThrow(new EventTooLarge("the node sent an event of more than 10 bytes"));
  });
});

describe("a snapshot download from a hostile server", () => {
  it("an endless body after the magic: `cbqs follow --snapshot` stops at --snapshot-max-bytes, exit 2, nothing left on disk", async () => {
    requireFreshDist();
    const server = await standIn((_req, res, flood) => {
      res.writeHead(200);
      flood(res, SNAPSHOT_MAGIC);
    });
    const db = join(root, "endless-store");
    try {
      const r = await new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
        const child = spawn(process.execPath, ["dist/src/cli.js", "follow", server.url, "--db", db, "--snapshot", `${server.url}/s.cbqs`, "--snapshot-max-bytes", "4194304", "--quiet"], { stdio: ["ignore", "pipe", "pipe"] });
        let out = "";
        let err = "";
        child.stdout.on("data", (c) => (out += String(c)));
        child.stderr.on("data", (c) => (err += String(c)));
        child.on("close", (code) => resolve({ code, out, err }));
      });
      expect(r).toEqual({ code: 2, out: "", err: `cbqs: error: ${server.url}/s.cbqs: the snapshot has more than 4194304 bytes, above --snapshot-max-bytes 4194304\n` });
      expect(await server.hungUp()).toBe(true);
      expect(existsSync(db)).toBe(false);
      expect(readdirSync(root).filter((f) => f.startsWith("endless-store"))).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it("an answer other than 200 is refused from its status line: its endless body is not read, nothing is written", async () => {
    const server = await standIn((_req, res, flood) => {
      res.writeHead(404);
      flood(res);
    });
    const stem = join(root, "not-found");
    try {
      await expect(downloadSnapshot(`${server.url}/s.cbqs`, stem, DOWNLOAD)).rejects.toThrow(new FollowInputError(`${server.url}/s.cbqs: HTTP 404, not a snapshot file`));
      expect(await server.hungUp()).toBe(true);
      expect(existsSync(`${stem}.cbqs`)).toBe(false);
    } finally {
      await server.close();
    }
  });

  it("a body that is not a snapshot is refused by its first bytes; a Content-Length above the bound before its body", async () => {
    const server = await standIn((req, res, flood) => {
      if (req.url === "/page") {
        res.writeHead(200, { "content-type": "text/html" });
        return flood(res, Buffer.from("<!doctype html>\n<p>"));
      }
      res.writeHead(200, { "content-length": String(DOWNLOAD.maxBytes + 1) });
      flood(res, SNAPSHOT_MAGIC);
    });
    const stem = join(root, "not-a-snapshot");
    try {
      await expect(downloadSnapshot(`${server.url}/page`, stem, DOWNLOAD)).rejects.toThrow(new FollowInputError(`${server.url}/page: not a cbqs snapshot (bad magic)`));
      await expect(downloadSnapshot(`${server.url}/big`, stem, DOWNLOAD)).rejects.toThrow(
        new FollowInputError(`${server.url}/big: the snapshot has ${DOWNLOAD.maxBytes + 1} bytes, above --snapshot-max-bytes ${DOWNLOAD.maxBytes}`),
      );
      expect(await server.hungUp()).toBe(true);
      expect(readdirSync(root).filter((f) => f.startsWith("not-a-snapshot"))).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it("a body shorter than the magic is no snapshot; a server that drips its body is cut off at --snapshot-timeout", async () => {
    const server = await standIn((req, res) => {
      res.writeHead(200);
      if (req.url === "/short") return void res.end("CBQS");
      res.write(SNAPSHOT_MAGIC);
      const drip = setInterval(() => (res.destroyed ? clearInterval(drip) : res.write("x")), 50);
    });
    const stem = join(root, "slow");
    try {
      await expect(downloadSnapshot(`${server.url}/short`, stem, DOWNLOAD)).rejects.toThrow(new FollowInputError(`${server.url}/short: not a cbqs snapshot (4 bytes, shorter than its magic)`));
      await expect(downloadSnapshot(`${server.url}/drip`, stem, { ...DOWNLOAD, deadlineMs: 500 })).rejects.toThrow(
        new FollowInputError(`${server.url}/drip: the download did not finish within --snapshot-timeout 0.5 s`),
      );
      expect(readdirSync(root).filter((f) => f.startsWith("slow"))).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
