// src/node/explorer.ts by hand (its mutants): the fixed list of the page's files (each
// script module of src/explorer/, compiled; uPlot from its package; the page and its style sheet),
// their types and ETags (the body's SHA-256, 32 hex digits), read once; which paths are the page's;
// a path that is none (404, echoed at most 120 characters); a file missing from an incomplete build
// (503 naming it); the headers that keep the page to the node's own files. These compare with what
// dist/ holds now, however old: the page's own behaviour is test/node/explorer.test.ts's.
import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { afterEach, describe, expect, it, vi } from "vitest";
import { devnetGenesisSource } from "../../src/harness/devnet.js";
import { RequestError } from "../../src/node/errors.js";
import { EXPLORER_HEADERS, EXPLORER_MODULES, explorerAsset, isExplorerPath } from "../../src/node/explorer.js";
import { startNode } from "./helpers.js";

const uplot = (file: string) => readFileSync(createRequire(import.meta.url).resolve(`uplot/dist/${file}`));
const etagOf = (body: Buffer) => `"${createHash("sha256").update(body).digest("hex").slice(0, 32)}"`;
const JS = "text/javascript; charset=utf-8";
const CSS = "text/css; charset=utf-8";

/** Every file of the page: its path, type and bytes as they are on disk (the page and style sheet are in the module). */
const files = (): Array<[string, string, Buffer | undefined]> => [
  ["/", "text/html; charset=utf-8", undefined],
  ["/explorer/style.css", CSS, undefined],
  ["/explorer/uPlot.iife.min.js", JS, uplot("uPlot.iife.min.js")],
  ["/explorer/uPlot.min.css", CSS, uplot("uPlot.min.css")],
  ...EXPLORER_MODULES.map((m): [string, string, Buffer] => [`/explorer/${m}.js`, JS, readFileSync(`dist/src/explorer/${m}.js`)]),
];

afterEach(() => {
  vi.doUnmock("node:fs");
  vi.resetModules();
});

describe("the explorer's files", () => {
  it("the script modules are exactly src/explorer/'s", () => {
    const sources = readdirSync("src/explorer").filter((f) => f.endsWith(".ts")).map((f) => f.slice(0, -3));
    expect([...EXPLORER_MODULES].sort()).toEqual(sources.sort());
  });

  it("each file has its type, its bytes (compiled modules and uPlot as on disk) and an ETag of its SHA-256; read once, the same object every time", () => {
    for (const [path, type, bytes] of files()) {
      const a = explorerAsset(path);
      expect(Buffer.isBuffer(a.body), path).toBe(true);
      expect(a.type, path).toBe(type);
      if (bytes !== undefined) expect(a.body.equals(bytes), path).toBe(true);
      expect(a.etag, path).toBe(etagOf(a.body));
      expect(explorerAsset(path), path).toBe(a);
    }
    const page = explorerAsset("/").body.toString("utf8");
    expect(page).toMatch(/^<!doctype html>\n/);
    expect(page).toContain('<script type="module" src="/explorer/main.js"></script>');
    expect(page).toContain('<link rel="stylesheet" href="/explorer/style.css">');
    // The classes the page's scripts set are styled.
    const style = explorerAsset("/explorer/style.css").body.toString("utf8");
    for (const rule of [".live.on::before", "tr.new", ".hash", ".bad", ".ok"]) expect(style).toContain(rule);
  });

  it("the node serves each file whole, with its type, ETag and the page's headers (the page's non-ASCII text counted in bytes)", async () => {
    const n = await startNode({ kind: "genesis", source: devnetGenesisSource(1) });
    try {
      for (const [path, type] of files()) {
        const r = await fetch(n.url + path);
        const body = Buffer.from(await r.arrayBuffer());
        expect([r.status, r.headers.get("content-type"), r.headers.get("etag")], path).toEqual([200, type, explorerAsset(path).etag]);
        expect(body.equals(explorerAsset(path).body), path).toBe(true);
        for (const [name, value] of Object.entries(EXPLORER_HEADERS)) expect(r.headers.get(name), `${path} ${name}`).toBe(value);
      }
      expect((await (await fetch(`${n.url}/`)).text()).endsWith("</html>\n")).toBe(true);
    } finally {
      await n.close();
    }
  });

  it("the page may load only the node's own files and be framed by nobody; revalidated on every load", () => {
    expect(EXPLORER_HEADERS).toEqual({
      "content-security-policy": "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
      "x-content-type-options": "nosniff",
      "cache-control": "no-cache",
    });
  });

  it("/ and paths under /explorer/ are the page's, nothing else", () => {
    for (const path of ["/", "/explorer/", "/explorer/main.js", "/explorer/nothing"]) expect(isExplorerPath(path), path).toBe(true);
    for (const path of ["", "/explorer", "/explorerx/main.js", "/genesis", "//", "/main.js", "/x/explorer/"]) expect(isExplorerPath(path), path).toBe(false);
  });

  it("a path under /explorer/ that is no file is 404 not_found, echoing at most 120 characters of it", () => {
    const long = `/explorer/${"a".repeat(200)}`;
    for (const [path, echoed] of [
      ["/explorer/main.ts", "/explorer/main.ts"],
      [long, long.slice(0, 120)],
    ] as Array<[string, string]>) {
      let err: unknown;
      try {
        explorerAsset(path);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(RequestError);
      expect(err).toMatchObject({ status: 404, code: "not_found", message: `no explorer file at ${JSON.stringify(echoed)}` });
    }
  });

  it("a file the build did not write is 503 explorer_unavailable naming it and the fix (its error code, or 'error' without one)", async () => {
    for (const [thrown, code] of [
      [Object.assign(new Error("gone"), { code: "ENOENT" }), "ENOENT"],
      [new Error("no code"), "error"],
    ] as const) {
      vi.resetModules();
      vi.doMock("node:fs", async (original) => {
        const fs = await original<typeof import("node:fs")>();
        return {
          ...fs,
          readFileSync: (path: string, ...rest: unknown[]) => {
            if (String(path).endsWith("views.js")) throw thrown;
            return (fs.readFileSync as (...a: unknown[]) => unknown)(path, ...rest);
          },
        };
      });
      const fresh = await import("../../src/node/explorer.js");
      let err: unknown;
      try {
        fresh.explorerAsset("/");
      } catch (e) {
        err = e;
      }
      expect(err).toMatchObject({ status: 503, code: "explorer_unavailable" });
      expect((err as Error).message).toMatch(new RegExp(`^the explorer's file /\\S+/dist/src/explorer/views\\.js cannot be read \\(${code}\\): run npm run build$`));
    }
  });
});
