// A client that opens a connection and never finishes its request's headers is answered
// 408 once the server's header timeout (10 s, checked every 30 s by node:http) has passed, in the
// node's error shape, and the connection is closed (src/node/server.ts "clientError"). Slow by
// nature (up to 40 s): kept apart from the other request tests.
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { startNode } from "./helpers.js";

describe("unfinished request headers (src/node/server.ts)", () => {
  it("headers never finished are answered 408 Request Timeout naming the timeout, then the connection is closed", async () => {
    const n = await startNode("fixtures/corpus/create-quote.json");
    try {
      const { hostname, port } = new URL(n.url);
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(port), hostname);
        let text = "";
        const timer = setTimeout(() => socket.destroy(), 90_000);
        socket.on("data", (d) => (text += d.toString("latin1")));
        socket.on("close", () => {
          clearTimeout(timer);
          resolve(text);
        });
        socket.on("error", reject);
        socket.write("GET /genesis HTTP/1.1\r\nHost: x\r\n");
      });
      const [head, body] = answer.split("\r\n\r\n");
      expect(head!.split("\r\n")[0]).toBe("HTTP/1.1 408 Request Timeout");
      expect(head).toMatch(/\r\nconnection: close(\r\n|$)/);
      expect(JSON.parse(body!)).toEqual({ error: { code: "bad_request", message: "malformed HTTP request (ERR_HTTP_REQUEST_TIMEOUT)" } });
    } finally {
      await n.close();
    }
  }, 120_000);
});
