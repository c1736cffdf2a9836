// GET /subscribe (docs/guides/run-a-devnet.md "Subscriptions"): the head block first, then an event per block as
// it is committed, each the block the feed serves; Last-Event-ID resumes (missed blocks replayed,
// a `gap` past the bound, a `rewind` when the subscriber is ahead); a devnet revert is a `rewind`;
// `?stream=` adds that stream's events; heartbeats; the subscriber bound (503); a subscriber that
// does not read is dropped — a real socket that never reads, against a reading one that is kept;
// a shutdown ends every subscription.
import { createServer, request, type IncomingMessage } from "node:http";
import { connect } from "node:net";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { describe, expect, it } from "vitest";
import { cbqs } from "../cli/program.js";
import { devnetGenesisSource } from "../../src/harness/devnet.js";
import { clientKey, LOOPBACK_CLIENT } from "../../src/node/client-key.js";
import { defaultClientSubscribers, MAX_REPLAY_BLOCKS, SubscribeRequest } from "../../src/node/subscriptions.js";
import { get, lanAddress, noRemoteClient, post, startNode, waitFor, type TestNode } from "./helpers.js";

const DEVNET = { kind: "genesis", source: devnetGenesisSource(10) } as const;
/** A page's origin given to --http-corsdomain. */
const PAGE = "http://localhost:3000";

interface Subscription {
  status: number;
  headers: IncomingMessage["headers"];
  events: EventSourceMessage[];
  comments: string[];
  /** The raw text received. */
  text: () => string;
  /** Resolves once `n` events in all have arrived (rejects after 10 s). */
  until(n: number): Promise<EventSourceMessage[]>;
  /** Resolves when the node ends the answer. */
  ended: Promise<void>;
  close(): void;
}

/** A subscription from `localAddress` when given (lanAddress(): another client to the node; every loopback address is the one loopback client). */
function subscribe(base: string, path = "/subscribe", headers: Record<string, string> = {}, localAddress?: string): Promise<Subscription> {
  return new Promise((resolve, reject) => {
    const req = request(base + path, { headers, agent: false, ...(localAddress === undefined ? {} : { localAddress }) }, (res) => {
      const events: EventSourceMessage[] = [];
      const comments: string[] = [];
      let text = "";
      const waiters: Array<() => void> = [];
      const parser = createParser({
        onEvent: (e) => {
          events.push(e);
          for (const w of waiters.splice(0)) w();
        },
        onComment: (c) => void comments.push(c),
      });
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
        parser.feed(chunk);
      });
      const ended = new Promise<void>((done) => res.on("end", done));
      res.on("error", () => {});
      resolve({
        status: res.statusCode ?? 0,
        headers: res.headers,
        events,
        comments,
        text: () => text,
        ended,
        until: (n) =>
          new Promise((done, fail) => {
            const t = setTimeout(() => fail(new Error(`${events.length} events of ${n} after 10 s: ${text.slice(-400)}`)), 10_000);
            const check = () => {
              if (events.length >= n) {
                clearTimeout(t);
                done(events.slice(0, n));
              } else waiters.push(check);
            };
            check();
          }),
        close: () => req.destroy(),
      });
    });
    req.on("error", reject);
    req.end();
  });
}

const data = (e: EventSourceMessage): Record<string, unknown> => JSON.parse(e.data) as Record<string, unknown>;

async function withNode(options: Parameters<typeof startNode>[1], use: (n: TestNode) => Promise<void>): Promise<void> {
  const n = await startNode(DEVNET, options);
  try {
    await use(n);
  } finally {
    await n.close();
  }
}

describe("GET /subscribe", () => {
  it("the head block first, then each block as it is committed: id = height, the feed's header fields and roots, the finalized view", async () => {
    await withNode({ corsOrigins: [PAGE] }, async (n) => {
      await post(n.url, "/mine?blocks=2", "");
      const s = await subscribe(n.url, "/subscribe", { origin: PAGE });
      expect(s.status).toBe(200);
      expect(s.headers["content-type"]).toBe("text/event-stream; charset=utf-8");
      expect(s.headers["cache-control"]).toBe("no-cache");
      expect(s.headers["access-control-allow-origin"]).toBe(PAGE);
      expect(s.headers["connection"]).toBe("close");
      // Told to nginx: an answer it buffered would deliver the events late, in bursts.
      expect(s.headers["x-accel-buffering"]).toBe("no");
      // A page of an allowed origin may resume with Last-Event-ID.
      const preflight = await fetch(`${n.url}/subscribe`, { method: "OPTIONS", headers: { origin: PAGE, "access-control-request-method": "GET", "access-control-request-headers": "last-event-id" } });
      expect(preflight.headers.get("access-control-allow-headers")).toBe("content-type, last-event-id, x-cbqs-client");
      await s.until(1);
      expect(s.text().startsWith("retry: 1000\n\n")).toBe(true);
      await post(n.url, "/mine", "");
      await post(n.url, "/mine?blocks=3", "");
      const events = await s.until(5);
      expect(events.map((e) => [e.event, e.id])).toEqual([["block", "2"], ["block", "3"], ["block", "4"], ["block", "5"], ["block", "6"]]);
      const feed = (await get(n.url, "/replication?since=2&until=6")).body["items"] as Array<Record<string, unknown>>;
      const view = (await get(n.url, "/cbqs/finalized-view")).body["view"];
      events.forEach((e, i) => {
        const d = data(e);
        const b = feed[i]!;
        expect(d).toEqual({
          height: b["height"],
          block_hash: b["block_hash"],
          state_root: b["state_root"],
          parent_hash: b["parent_hash"],
          timestamp: b["timestamp"],
          tx_root: b["tx_root"],
          receipt_root: b["receipt_root"],
          logs_root: b["logs_root"],
          effective_rent_height: b["effective_rent_height"],
          txs: 0,
          view: { chain_instance_id: (view as Record<string, string>)["chain_instance_id"], height: b["height"], block_hash: b["block_hash"] },
        });
      });
      expect(data(events[4]!)["view"]).toEqual(view);
      s.close();
    });
  });

  it("Last-Event-ID resumes: the missed blocks; nothing when it is the head; a rewind when it is above the head; a gap past the replay bound; 400 for a malformed one", async () => {
    await withNode({}, async (n) => {
      await post(n.url, "/mine?blocks=5", "");
      const missed = await subscribe(n.url, "/subscribe", { "last-event-id": "2" });
      expect((await missed.until(3)).map((e) => [e.event, e.id])).toEqual([["block", "3"], ["block", "4"], ["block", "5"]]);
      const atHead = await subscribe(n.url, "/subscribe", { "last-event-id": "5" });
      await post(n.url, "/mine", "");
      expect((await atHead.until(1)).map((e) => [e.event, e.id])).toEqual([["block", "6"]]);
      const ahead = await subscribe(n.url, "/subscribe", { "last-event-id": "9" });
      const [rewind] = await ahead.until(1);
      expect([rewind!.event, rewind!.id]).toEqual(["rewind", "6"]);
      expect(data(rewind!)).toMatchObject({ height: "6", from_height: "9" });
      await post(n.url, `/mine?blocks=${MAX_REPLAY_BLOCKS + 1}`, "");
      const late = await subscribe(n.url, "/subscribe", { "last-event-id": "5" });
      const [gap] = await late.until(1);
      const head = String(6 + MAX_REPLAY_BLOCKS + 1);
      expect([gap!.event, gap!.id]).toEqual(["gap", head]);
      expect(data(gap!)).toMatchObject({ height: head, from: "6", to: head });
      // Exactly the bound is still replayed.
      const bound = await subscribe(n.url, "/subscribe", { "last-event-id": String(6 + 1) });
      const replayed = await bound.until(MAX_REPLAY_BLOCKS);
      expect([replayed[0]!.id, replayed[MAX_REPLAY_BLOCKS - 1]!.id]).toEqual(["8", head]);
      for (const s of [missed, atHead, ahead, late, bound]) s.close();
      const form = "last_event_id must be the id (a block height) of the last event received";
      for (const [id, message] of [
        ["-1", `${form}: decimal digits without sign or leading zeros (got "-1")`],
        ["01", `${form}: decimal digits without sign or leading zeros (got "01")`],
        ["x", `${form}: decimal digits without sign or leading zeros (got "x")`],
        ["18446744073709551616", `${form} of at most 18446744073709551615 (got 18446744073709551616)`],
        // Not a space the HTTP parser strips (those are only SP and HTAB, and the header arrives without them).
        ["2\u00a0", `${form}: decimal digits without sign or leading zeros (got ${JSON.stringify("2\u00a0")})`],
      ]) {
        const bad = await fetch(`${n.url}/subscribe`, { headers: { "last-event-id": id! } });
        // An accepted one would be a subscription, an answer that never ends.
        const error = bad.status === 200 ? await bad.body?.cancel() : ((await bad.json()) as { error: unknown }).error;
        expect([bad.status, error], id).toEqual([400, { code: "invalid_last_event_id", message }]);
      }
    });
  });

  it("a devnet revert is a rewind event naming the new head and the height the subscriber was at; the new chain's blocks follow", async () => {
    await withNode({}, async (n) => {
      await post(n.url, "/mine", "");
      const snap = (await post(n.url, "/devnet/snapshot", "")).body["id"];
      await post(n.url, "/mine?blocks=3", "");
      const s = await subscribe(n.url);
      await s.until(1);
      const reverted = await post(n.url, `/devnet/revert?id=${String(snap)}`, "");
      await post(n.url, "/mine", "");
      const events = await s.until(3);
      expect(events.map((e) => [e.event, e.id])).toEqual([["block", "4"], ["rewind", "1"], ["block", "2"]]);
      expect(data(events[1]!)).toEqual({ height: "1", block_hash: reverted.body["block_hash"], state_root: reverted.body["state_root"], from_height: "4" });
      expect(data(events[2]!)["parent_hash"]).toBe(reverted.body["block_hash"]);
      s.close();
    });
  });

  it("?stream= adds that stream's events to each block event (an empty list when it has none); a malformed id is 400", async () => {
    await withNode({}, async (n) => {
      const stream = "owner:0xa05a065ba5d5888cc61c4e5ccfbd57f7bd9bbe99/nonce:1";
      const s = await subscribe(n.url, `/subscribe?stream=${encodeURIComponent(stream)}`);
      const plain = await subscribe(n.url);
      for (const file of ["register-provider", "create-stream"]) {
        expect((await cbqs("tx", `@fixtures/devnet/${file}.json`, "--node", n.url, "--send")).exitCode).toBe(0);
        await post(n.url, "/mine", "");
      }
      const id = String((await get(n.url, `/search?q=${encodeURIComponent(stream)}`)).body["id"]);
      const events = await s.until(3);
      expect(events.map((e) => [data(e)["height"], data(e)["stream_id"], (data(e)["events"] as unknown[]).length])).toEqual([
        ["0", id, 0],
        ["1", id, 0],
        ["2", id, 1],
      ]);
      const created = (await get(n.url, "/block/2")).body["transactions"] as Array<{ tx_hash: string }>;
      expect(events.map((e) => data(e)["txs"])).toEqual([0, 1, 1]);
      expect((data(events[2]!)["events"] as unknown[])[0]).toEqual({
        tx_hash: created[0]!.tx_hash,
        index: 0,
        emitter: "0x0000000000000000000000000000000000000017",
        topic: "cbqs.stream.created",
        payload: id,
        stream_id: id,
      });
      expect((await plain.until(3)).every((e) => !("events" in data(e)))).toBe(true);
      expect((await get(n.url, "/subscribe?stream=0x12")).body).toMatchObject({ error: { code: "invalid_stream" } });
      // A filtered subscriber that goes frees its place like any other.
      s.close();
      for (let i = 0; i < 200 && n.subscriptions.size > 1; i++) await new Promise((r) => setTimeout(r, 5));
      expect(n.subscriptions.size).toBe(1);
      plain.close();
    });
  });

  it("heartbeat comments keep an idle subscription talking", async () => {
    await withNode({ heartbeatMs: 30 }, async (n) => {
      const s = await subscribe(n.url);
      await s.until(1);
      for (let i = 0; i < 200 && s.comments.length < 2; i++) await new Promise((r) => setTimeout(r, 10));
      expect(s.comments.slice(0, 2)).toEqual(["heartbeat", "heartbeat"]);
      expect(s.text()).toContain("\n\n: heartbeat\n\n: heartbeat\n\n");
      s.close();
    });
  });

  it("--max-subscribers: one more is 503 too_many_subscribers with Retry-After; a closed subscription frees its place; HEAD takes none", async () => {
    await withNode({ maxSubscribers: 2, maxClientSubscribers: 2 }, async (n) => {
      const a = await subscribe(n.url);
      const b = await subscribe(n.url);
      await Promise.all([a.until(1), b.until(1)]);
      expect(n.subscriptions.size).toBe(2);
      const head = await fetch(`${n.url}/subscribe`, { method: "HEAD" });
      expect(head.status).toBe(503);
      const refused = await fetch(`${n.url}/subscribe`);
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toBe("5");
      expect(((await refused.json()) as { error: unknown }).error).toEqual({ code: "too_many_subscribers", message: "the node serves at most 2 subscriptions (--max-subscribers) and all are taken" });
      a.close();
      for (let i = 0; i < 200 && n.subscriptions.size > 1; i++) await new Promise((r) => setTimeout(r, 5));
      expect(n.subscriptions.size).toBe(1);
      const headOk = await fetch(`${n.url}/subscribe`, { method: "HEAD" });
      expect([headOk.status, headOk.headers.get("content-type"), await headOk.text()]).toEqual([200, "text/event-stream; charset=utf-8", ""]);
      expect(n.subscriptions.size).toBe(1);
      const c = await subscribe(n.url);
      expect(c.status).toBe(200);
      b.close();
      c.close();
    });
  });

  it("one client cannot take every subscription: past its share (--max-client-subscribers, default a quarter) it is refused 429, from any loopback address, while another client still subscribes", async (ctx) => {
    const lan = lanAddress();
    if (lan === undefined) return noRemoteClient(ctx);
    expect([defaultClientSubscribers(1_024), defaultClientSubscribers(8), defaultClientSubscribers(3), defaultClientSubscribers(0)]).toEqual([256, 2, 1, 0]);
    await withNode({ maxSubscribers: 8 }, async (n) => {
      const own = [await subscribe(n.url), await subscribe(n.url)];
      const refused = await fetch(`${n.url}/subscribe`);
      expect([refused.status, refused.headers.get("retry-after"), ((await refused.json()) as { error: unknown }).error]).toEqual([
        429,
        "5",
        { code: "too_many_subscriptions", message: "one client may hold at most 2 subscriptions (--max-client-subscribers) and this one holds 2" },
      ]);
      expect((await fetch(`${n.url}/subscribe`, { method: "HEAD" })).status).toBe(429);
      expect((await subscribe(n.url, "/subscribe", {}, "127.0.0.2")).status).toBe(429);
      const other = await subscribe(n.url, "/subscribe", {}, lan);
      expect(other.status).toBe(200);
      await other.until(1);
      expect(n.subscriptions.size).toBe(3);
      // A closed subscription gives its client that place back, and only that one: its other stays counted.
      own[0]!.close();
      await waitFor("the closed subscription gone", () => n.subscriptions.size === 2);
      const again = await subscribe(n.url);
      expect(again.status).toBe(200);
      expect((await fetch(`${n.url}/subscribe`, { method: "HEAD" })).status).toBe(429);
      // Once a client holds none, the node keeps nothing for it.
      for (const s of [own[1]!, other, again]) s.close();
      await waitFor("every subscription gone", () => n.subscriptions.size === 0);
      expect(n.subscriptions["byClient"].size).toBe(0);
    });
    await withNode({ maxSubscribers: 8, maxClientSubscribers: 3 }, async (n) => {
      const own = [await subscribe(n.url), await subscribe(n.url), await subscribe(n.url)];
      expect(own.map((s) => s.status)).toEqual([200, 200, 200]);
      expect((await fetch(`${n.url}/subscribe`)).status).toBe(429);
      for (const s of own) s.close();
    });
  });

  it("--max-subscribers 0: no GET /subscribe (404) and discovery does not list it; otherwise it does", async () => {
    await withNode({ maxSubscribers: 0 }, async (n) => {
      expect((await get(n.url, "/subscribe")).status).toBe(404);
      expect((await get(n.url, "/.well-known/cbqs")).body["endpoints"]).not.toHaveProperty("cbqs.subscribe");
    });
    await withNode({}, async (n) => {
      expect((await get(n.url, "/.well-known/cbqs")).body["endpoints"]).toHaveProperty("cbqs.subscribe", "/subscribe{?stream}");
    });
  });

  it("a subscriber that does not read is dropped once its unsent events pass the bound; one that reads keeps every block", async () => {
    const bound = 64 * 1024;
    await withNode({ subscriberBuffer: bound }, async (n) => {
      // A real socket that sends its request and then never reads: the kernel's buffers fill, then the node's.
      const stalled = connect(Number(new URL(n.url).port), "127.0.0.1");
      await new Promise<void>((r) => stalled.once("connect", () => r()));
      stalled.write("GET /subscribe HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
      stalled.pause();
      const reader = await subscribe(n.url);
      await reader.until(1);
      for (let i = 0; i < 200 && n.subscriptions.size < 2; i++) await new Promise((r) => setTimeout(r, 5));
      expect(n.subscriptions.size).toBe(2);
      let mined = 0;
      for (let i = 0; i < 50 && n.subscriptions.droppedSlow === 0; i++) mined = Number((await post(n.url, "/mine?blocks=2000", "")).body["height"]);
      const dropped = n.logs.filter((l) => l["msg"] === "subscriber dropped");
      expect(dropped).toHaveLength(1);
      expect(dropped[0]).toMatchObject({ level: "info", reason: "slow", client: LOOPBACK_CLIENT, max_buffered: bound });
      expect(dropped[0]!["buffered"] as number).toBeGreaterThan(bound);
      expect(n.subscriptions.droppedSlow).toBe(1);
      expect(n.subscriptions.size).toBe(1);
      // Its connection is closed: read at last, what the node had queued ends.
      let closed = false;
      stalled.on("error", () => {});
      stalled.once("close", () => (closed = true));
      stalled.resume();
      for (let i = 0; i < 2000 && !closed; i++) await new Promise((r) => setTimeout(r, 5));
      expect(closed).toBe(true);
      // The reading subscriber got every block, in order, to the last one.
      const events = await reader.until(mined + 1);
      expect(events.every((e, i) => e.id === String(i))).toBe(true);
      stalled.destroy();
      reader.close();
    });
  });

  it("only bytes still unsent count against the bound: with --subscriber-buffer 0 a subscriber that reads keeps every block", async () => {
    await withNode({ subscriberBuffer: 0 }, async (n) => {
      const s = await subscribe(n.url);
      await s.until(1);
      for (let i = 0; i < 3; i++) await post(n.url, "/mine", "");
      expect((await s.until(4)).map((e) => e.id)).toEqual(["0", "1", "2", "3"]);
      expect([n.subscriptions.droppedSlow, n.subscriptions.size]).toEqual([0, 1]);
      s.close();
    });
  });

  it("a subscriber that opens while blocks wait to be written starts from the store: it gets none of them twice, and the earlier subscriber misses none", async () => {
    await withNode({}, async (n) => {
      const early = await subscribe(n.url);
      await early.until(1);
      // A block committed and a subscription opened in the same turn of the event loop (the
      // block's event not yet written): the node's own hub, behind a server of this test's.
      const server = createServer((req, res) => {
        n.node.mine();
        const client = clientKey(req.socket.remoteAddress ?? "");
        n.subscriptions.open(res, client, new SubscribeRequest(undefined), n.subscriptions.check(client, undefined), {});
      });
      await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
      try {
        const late = await subscribe(`http://127.0.0.1:${(server.address() as { port: number }).port}`);
        await late.until(1);
        await post(n.url, "/mine", "");
        expect((await late.until(2)).map((e) => [e.event, e.id])).toEqual([["block", "1"], ["block", "2"]]);
        expect((await early.until(3)).map((e) => [e.event, e.id])).toEqual([["block", "0"], ["block", "1"], ["block", "2"]]);
        late.close();
      } finally {
        early.close();
        server.closeAllConnections();
        await new Promise((r) => server.close(r));
      }
    });
  });

  it("a stopping node takes no new subscription: 503 shutting_down", async () => {
    await withNode({}, async (n) => {
      const s = await subscribe(n.url);
      await s.until(1);
      n.subscriptions.close();
      await s.ended;
      expect(n.subscriptions.size).toBe(0);
      const refused = await fetch(`${n.url}/subscribe`);
      expect([refused.status, ((await refused.json()) as { error: unknown }).error]).toEqual([503, { code: "shutting_down", message: "the node is stopping" }]);
      expect(n.subscriptions.size).toBe(0);
    });
  });

  it("a shutdown ends every subscription's answer", async () => {
    const n = await startNode(DEVNET);
    const subs = [await subscribe(n.url), await subscribe(n.url, "/subscribe?stream=0x" + "11".repeat(32))];
    await Promise.all(subs.map((s) => s.until(1)));
    await n.close();
    await Promise.all(subs.map((s) => s.ended));
    expect(n.subscriptions.size).toBe(0);
  });
});
