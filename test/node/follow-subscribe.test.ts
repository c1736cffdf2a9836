// `cbqs follow --watch` woken by the node's GET /subscribe (docs/node.md "The follower"): with a
// poll interval of an hour, only an event can make it read the next block in time — it does, and
// verifies it through the feed as ever; a revert's rewind makes it find the fork (exit 1's
// divergence); a node without subscriptions is polled; a subscription that ends is reported and
// polling takes over.
import { describe, expect, it } from "vitest";
import { devnetGenesisSource } from "../../src/harness/devnet.js";
import { follow, type FollowResult, type WaitHow } from "../../src/node/follower.js";
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
