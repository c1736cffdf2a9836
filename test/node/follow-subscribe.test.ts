// `cbqs follow --watch` woken by the node's GET /subscribe (docs/guides/run-a-devnet.md "The follower"): with a
// poll interval of an hour, only an event can make it read the next block in time — it does, and
// verifies it through the feed as ever; a revert's rewind makes it find the fork (exit 1's
// divergence); a node without subscriptions is polled; a subscription that ends is reported and
// polling takes over.
import { getEventListeners } from "node:events";
import { createServer, type ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { devnetGenesisSource } from "../../src/harness/devnet.js";
import { follow, type FollowResult, type WaitHow } from "../../src/follower/follower.js";
import { HeadWatch, subscribeUrl } from "../../src/follower/head-watch.js";
import { MemoryChainDb } from "../../state/chain-db/memory.js";
import { post, startNode, toHex, type TestNode } from "./helpers.js";

const DEVNET = { kind: "genesis", source: devnetGenesisSource(10) } as const;
const HOUR = 3_600_000;

/** Resolves once `check` holds (polled every 5 ms), failing after 10 s. */
async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`still waiting for ${what} after 10 s`);
}

interface Following {
  db: MemoryChainDb;
  waits: WaitHow[];
  states: Array<[string, string]>;
  result: Promise<FollowResult>;
  stop: () => Promise<FollowResult>;
}

function start(n: TestNode, pollMs: number): Following {
  const db = new MemoryChainDb();
  const abort = new AbortController();
  const waits: WaitHow[] = [];
  const states: Array<[string, string]> = [];
  const result = follow({ url: n.url, db, watch: true, pollMs, signal: abort.signal, onWait: (_h, _n, how) => waits.push(how), onSubscription: (state, _url, reason) => states.push([state, reason]) });
  return {
    db,
    waits,
    states,
    result,
    stop: () => {
      abort.abort();
      return result;
    },
  };
}

describe("cbqs follow --watch with GET /subscribe", () => {
  it("woken by the node's events: each new block is read from the feed and verified though the poll interval is an hour", async () => {
    const n = await startNode(DEVNET);
    try {
      await post(n.url, "/mine?blocks=2", "");
      const f = start(n, HOUR);
      await until("the first wait", () => f.waits.length > 0 && n.subscriptions.size === 1);
      expect(f.waits[0]).toEqual({ subscribed: `${n.url}/subscribe` });
      for (const blocks of [1, 5, 1]) {
        const head = Number((await post(n.url, `/mine?blocks=${blocks}`, "")).body["height"]);
        await until(`block ${head}`, () => f.db.head()!.height === BigInt(head));
      }
      expect(toHex(f.db.head()!.block_hash)).toBe(toHex(n.node.head().block_hash));
      expect(await f.stop()).toMatchObject({ status: "stopped", height: 9n, blocks: 9 });
      // Its subscription ended with it.
      await until("the subscription to end", () => n.subscriptions.size === 0);
      expect(f.states).toEqual([["up", ""]]);
    } finally {
      await n.close();
    }
  });

  it("a devnet revert's rewind event makes it read the feed at once and stop at the fork", async () => {
    const n = await startNode(DEVNET);
    try {
      await post(n.url, "/mine", "");
      const snap = String((await post(n.url, "/devnet/snapshot", "")).body["id"]);
      await post(n.url, "/mine?blocks=3", "");
      const f = start(n, HOUR);
      await until("block 4 and the subscription", () => f.db.head()?.height === 4n && n.subscriptions.size === 1 && f.waits.length > 0);
      await post(n.url, `/devnet/revert?id=${snap}`, "");
      const r = await Promise.race([f.result, new Promise<"still watching">((done) => setTimeout(done, 10_000, "still watching"))]);
      expect(r).toMatchObject({ status: "diverged" });
      expect((r as { message: string }).message).toMatch(/^the node's chain no longer contains our block 4 \(ours 0x[0-9a-f]{64}, node's head is 1\)$/);
    } finally {
      await n.close();
    }
  });

  it("a node without GET /subscribe (--max-subscribers 0) is polled", async () => {
    const n = await startNode(DEVNET, { maxSubscribers: 0 });
    try {
      const f = start(n, 20);
      await until("the first wait", () => f.waits.length > 0);
      await post(n.url, "/mine?blocks=3", "");
      await until("block 3", () => f.db.head()?.height === 3n);
      expect(await f.stop()).toMatchObject({ status: "stopped", height: 3n });
      expect(f.waits.every((w) => "pollMs" in w && w.pollMs === 20)).toBe(true);
    } finally {
      await n.close();
    }
  });

  it("a subscription that ends is reported, and polling takes over while it cannot be opened again", async () => {
    const n = await startNode(DEVNET);
    try {
      const f = start(n, 50);
      await until("the subscription", () => n.subscriptions.size === 1 && f.states.length === 1);
      // The node ends every subscription and takes no new one (as a node stopping does).
      n.subscriptions.close();
      await until("the end to be reported", () => f.states.length >= 2);
      expect(f.states[1]).toEqual(["down", "the node ended the subscription"]);
      await post(n.url, "/mine?blocks=2", "");
      await until("block 2, by polling", () => f.db.head()?.height === 2n);
      expect(f.states.slice(2).every(([state, reason]) => state === "down" && reason === "HTTP 503")).toBe(true);
      expect(await f.stop()).toMatchObject({ status: "stopped", height: 2n });
    } finally {
      await n.close();
    }
  });
});

/**
 * A server on 127.0.0.1:0 that answers every request as `answer` says: an event stream held open
 * (its answers in `streams`, written to by `send`), or a fixed status and body.
 */
async function fakeNode() {
  const streams: ServerResponse[] = [];
  const state = { requests: 0, accept: undefined as string | undefined, answer: { kind: "stream" } as { kind: "stream" } | { kind: "fixed"; status: number; contentType: string; body: string } };
  const server = createServer((req, res) => {
    state.requests++;
    state.accept = req.headers.accept;
    const a = state.answer;
    if (a.kind === "fixed") {
      res.writeHead(a.status, { "content-type": a.contentType }).end(a.body);
      return;
    }
    res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8" });
    res.flushHeaders();
    streams.push(res);
    res.on("close", () => streams.splice(streams.indexOf(res), 1));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  return {
    url,
    state,
    streams,
    send: (text: string) => streams.forEach((r) => r.write(text)),
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    },
  };
}

describe("subscribeUrl: GET /subscribe's URL from the node's discovery document", () => {
  it("the path of cbqs.subscribe's template, its query expression removed; undefined for a document without it, a template that is not a path, a non-200 answer, not JSON, over 1 MiB, or no node", async () => {
    const f = await fakeNode();
    try {
      const doc = (template: unknown) => JSON.stringify({ endpoints: { "cbqs.discovery": "/.well-known/cbqs", "cbqs.subscribe": template } });
      const answer = (body: string, status = 200) => {
        f.state.answer = { kind: "fixed", status, contentType: "application/json", body };
        return subscribeUrl(f.url, 5_000);
      };
      expect(await answer(doc("/subscribe{?stream}"))).toBe(`${f.url}/subscribe`);
      expect(await answer(doc("/events"))).toBe(`${f.url}/events`);
      expect(await answer(JSON.stringify({ endpoints: {} }))).toBeUndefined();
      expect(await answer("null")).toBeUndefined();
      expect(await answer(doc(5))).toBeUndefined();
      expect(await answer(doc("http://127.0.0.1:1/subscribe"))).toBeUndefined();
      expect(await answer(doc("/subscribe{?stream}"), 503)).toBeUndefined();
      expect(await answer("<html>not a discovery document</html>")).toBeUndefined();
      // 1 MiB exactly is a discovery document; one byte more is not.
      const padded = (size: number) => doc("/subscribe").replace(/^\{/, "{" + " ".repeat(size - doc("/subscribe").length));
      expect(Buffer.byteLength(padded(1024 * 1024))).toBe(1024 * 1024);
      expect(await answer(padded(1024 * 1024))).toBe(`${f.url}/subscribe`);
      expect(await answer(padded(1024 * 1024 + 1))).toBeUndefined();
    } finally {
      await f.close();
    }
    // The server is gone: nothing listens there now.
    expect(await subscribeUrl(f.url, 5_000)).toBeUndefined();
  });
});

describe("HeadWatch: one subscription, waits woken by its chain events", () => {
  it("'event' for a block, rewind or gap event newer than `seen` (never another event, a data-only message or a comment); 'timeout' when none comes, a quiet subscription kept open however short --timeout is", async () => {
    const f = await fakeNode();
    const states: Array<[string, string]> = [];
    const w = new HeadWatch(`${f.url}/subscribe`, 20, undefined, (state, reason) => states.push([state, reason]));
    try {
      expect([w.seen, w.up]).toEqual([0, false]);
      const first = w.wait(0, HOUR);
      await until("the subscription", () => f.streams.length === 1 && w.up);
      expect(f.state.accept).toBe("text/event-stream"); // as an EventSource asks
      f.send("retry: 1000\n\n: heartbeat\n\ndata: {}\n\nevent: other\ndata: {}\n\nid: 0\nevent: block\ndata: {}\n\n");
      expect(await first).toBe("event");
      expect(w.seen).toBe(1);
      // Nothing newer than 1 comes: its own time passes, several times the watch's --timeout.
      expect(await w.wait(1, 300)).toBe("timeout");
      expect(w.up).toBe(true);
      for (const [name, seen] of [["rewind", 2], ["gap", 3]] as const) {
        const next = w.wait(seen - 1, HOUR);
        f.send(`event: ${name}\ndata: {}\n\n`);
        expect(await next).toBe("event");
        expect(w.seen).toBe(seen);
      }
      // An event already received ends a wait at once: before the event loop turns again.
      expect(await Promise.race([w.wait(2, HOUR), new Promise((r) => setImmediate(r, "not yet"))])).toBe("event");
      expect([f.state.requests, f.streams.length]).toEqual([1, 1]);
      expect(states).toEqual([["up", ""]]);
    } finally {
      w.close();
      await f.close();
    }
  });

  it("two waits at once share one subscription; one timing out leaves the other to the next event; a resolved wait leaves no timer behind", async () => {
    const f = await fakeNode();
    const w = new HeadWatch(`${f.url}/subscribe`, 5_000);
    try {
      const long = w.wait(0, HOUR);
      let longOutcome: string | undefined;
      void long.then((o) => (longOutcome = o));
      const short = w.wait(0, 50);
      expect(await short).toBe("timeout");
      await until("the subscription", () => f.streams.length === 1 && w.up);
      f.send("event: block\ndata: {}\n\n");
      await until("the event", () => w.seen === 1);
      expect(longOutcome).toBe("event");
      expect(await long).toBe("event");
      // A wait's timer would keep a stopped follower's process alive for up to its maxMs.
      const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
      const base = timers();
      const again = w.wait(1, HOUR);
      expect(timers()).toBe(base + 1);
      f.send("event: block\ndata: {}\n\n");
      expect(await again).toBe("event");
      expect(timers()).toBe(base);
      expect(f.state.requests).toBe(1);
    } finally {
      w.close();
      await f.close();
    }
  });

  it("the subscription ending, a non-200 answer or one that is not an event stream: 'down' with the reason, and the next wait subscribes again; close() ends it unreported", async () => {
    const f = await fakeNode();
    const abort = new AbortController();
    const states: Array<[string, string]> = [];
    const w = new HeadWatch(`${f.url}/subscribe`, 5_000, abort.signal, (state, reason) => states.push([state, reason]));
    try {
      const ended = w.wait(0, 5_000);
      await until("the subscription", () => f.streams.length === 1 && w.up);
      f.streams[0]!.end();
      expect(await ended).toBe("down");
      expect(w.up).toBe(false);
      f.state.answer = { kind: "fixed", status: 503, contentType: "application/json", body: "{}" };
      expect(await w.wait(0, 5_000)).toBe("down");
      f.state.answer = { kind: "fixed", status: 200, contentType: "application/json", body: "{}" };
      expect(await w.wait(0, 5_000)).toBe("down");
      expect(states).toEqual([
        ["up", ""],
        ["down", "the node ended the subscription"],
        ["down", "HTTP 503"],
        ["down", "the answer is not an event stream"],
      ]);
      // Nothing is left listening on the signal.
      expect(getEventListeners(abort.signal, "abort")).toHaveLength(0);
      f.state.answer = { kind: "stream" };
      const closed = w.wait(0, 5_000);
      await until("the subscription again", () => f.streams.length === 1 && w.up);
      expect(f.state.requests).toBe(4);
      w.close();
      expect(await closed).toBe("down");
      await until("the node to see it closed", () => f.streams.length === 0);
      expect(states.slice(4)).toEqual([["up", ""]]);
      expect(getEventListeners(abort.signal, "abort")).toHaveLength(0);
    } finally {
      w.close();
      await f.close();
    }
  });

  it("the signal: an abort during a wait is 'stopped' and ends the subscription (unreported); once aborted, a wait is 'stopped' without subscribing", async () => {
    const f = await fakeNode();
    const abort = new AbortController();
    const states: Array<[string, string]> = [];
    const w = new HeadWatch(`${f.url}/subscribe`, 5_000, abort.signal, (state, reason) => states.push([state, reason]));
    try {
      const waiting = w.wait(0, 5_000);
      await until("the subscription", () => f.streams.length === 1 && w.up);
      abort.abort();
      expect(await waiting).toBe("stopped");
      await until("the node to see it closed", () => f.streams.length === 0);
      expect(w.up).toBe(false);
      expect(await w.wait(0, 2_000)).toBe("stopped");
      expect([f.state.requests, w.up]).toEqual([1, false]);
      expect(states).toEqual([["up", ""]]);
    } finally {
      w.close();
      await f.close();
    }
  });
});
