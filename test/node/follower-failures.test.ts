// A snapshot download (src/follower/follower.ts downloadSnapshot) whose file cannot be
// closed: Linux releases a descriptor even when close(2) reports EIO, so the file must not be
// closed a second time (which would fail EBADF and hide the first error) and must still be
// removed. node:fs's closeSync fails here on cue, once, after closing for real.
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { downloadSnapshot } from "../../src/follower/follower.js";
import { SNAPSHOT_MAGIC } from "../../state/lmdb/snapshot.js";
import { DOWNLOAD } from "./helpers.js";

const closeFails = vi.hoisted(() => ({ times: 0, calls: [] as number[] }));

vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>();
  return {
    ...real,
    closeSync: (fd: number) => {
      closeFails.calls.push(fd);
      real.closeSync(fd);
      if (closeFails.times > 0) {
        closeFails.times--;
        throw Object.assign(new Error("EIO: i/o error, close"), { code: "EIO", errno: -5, syscall: "close" });
      }
    },
  };
});

const root = mkdtempSync(join(tmpdir(), "cbqs-follower-failures-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("a downloaded snapshot whose file cannot be closed", () => {
  it("the close's own error is reported, the descriptor is closed once, and the file is removed", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { connection: "close" });
      res.end(Buffer.concat([SNAPSHOT_MAGIC, Buffer.from("a snapshot's bytes")]));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      closeFails.times = 1;
      closeFails.calls = [];
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/s.cbqs`;
      await expect(downloadSnapshot(url, join(root, "download"), DOWNLOAD)).rejects.toThrow(/^EIO: i\/o error, close$/);
      expect(closeFails.calls).toHaveLength(1);
      expect(readdirSync(root)).toEqual([]);
    } finally {
      closeFails.times = 0;
      server.close();
    }
  });
});
