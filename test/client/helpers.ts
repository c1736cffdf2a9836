// Shared by the client tests: servers on 127.0.0.1:0 that stand between the client and a real
// node (a proxy that rewrites answers, one that counts requests) or stand in for one (a scripted
// fake). Every test closes what it starts.
import { createServer, type IncomingMessage, type ServerResponse, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { createServer as createNetServer } from "node:net";

export interface TestServer {
  url: string;
  server: Server;
  /** Request paths (with queries) in arrival order. */
  requests: string[];
  close(): Promise<void>;
}

async function listen(server: Server, requests: string[]): Promise<TestServer> {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
  });
}

/**
 * Forwards every request to `target`; `edit` may rewrite an answer's JSON (return undefined to
 * leave it as it is). The answer's status and Retry-After are kept.
 */
export async function proxy(target: string, edit: (path: string, body: Record<string, unknown>) => Record<string, unknown> | undefined = () => undefined): Promise<TestServer> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(req.url!);
    void (async () => {
      const body = await readBody(req);
      const upstream = await fetch(target + req.url, {
        method: req.method!,
        headers: { "content-type": String(req.headers["content-type"] ?? "text/plain"), ...(req.headers["x-cbqs-client"] === undefined ? {} : { "x-cbqs-client": String(req.headers["x-cbqs-client"]) }) },
        ...(req.method === "POST" ? { body } : {}),
      });
      let text = await upstream.text();
      const edited = upstream.status === 200 ? edit(req.url!, JSON.parse(text) as Record<string, unknown>) : undefined;
      if (edited !== undefined) text = JSON.stringify(edited);
      const retry = upstream.headers.get("retry-after");
      res.writeHead(upstream.status, { "content-type": "application/json", ...(retry === null ? {} : { "retry-after": retry }) });
      res.end(text);
    })();
  });
  return listen(server, requests);
}

/** Answers each request with `answer(path, index)`: a status, headers and a body. */
export async function fake(answer: (path: string, index: number, res: ServerResponse) => { status: number; headers?: Record<string, string>; body: string } | "hang"): Promise<TestServer> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(req.url!);
    void readBody(req).then(() => {
      const a = answer(req.url!, requests.length - 1, res);
      if (a === "hang") return;
      res.writeHead(a.status, { "content-type": "application/json", ...a.headers });
      res.end(a.body);
    });
  });
  return listen(server, requests);
}

/** A TCP server that accepts and never answers. */
export async function silentServer(): Promise<{ url: string; close: () => void }> {
  const sockets: Socket[] = [];
  const server = createNetServer((s) => sockets.push(s));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

/** A hex string with one digit changed: one byte altered. */
export const flipHex = (h: string): string => h.slice(0, -1) + (h.endsWith("0") ? "1" : "0");

/** The error a promise rejects with (fails the test when it resolves). */
export async function rejection(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (err) {
    return err as Error;
  }
  throw new Error("expected a rejection, got a value");
}
