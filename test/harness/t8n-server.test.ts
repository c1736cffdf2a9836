// the long-lived t8n protocol cbqs-t8n-server/v1 (docs/reference/formats/t8n-server.md), driven as a
// node team's client drives it: spawned processes, JSON lines over stdin/stdout.
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { toHex } from "../../src/bytes.js";
import { genesisHash } from "../../src/chain/block.js";
import { loadFixture, type Fixture } from "../../src/harness/fixture.js";
import { Replay } from "../../src/harness/replay.js";
import { lines } from "../../src/harness/t8n-server.js";
import { transition } from "../../src/harness/t8n.js";
import { loadDump } from "../../state/kv/dump.js";
import { envOf, readDoc } from "./helpers.js";
import { marked } from "../marked-processes.js";

const CLI = "dist/src/cli.js";
const FIXTURE = "fixtures/corpus/provider-lifecycle.json";
const fixture = loadFixture(readDoc(FIXTURE));
const tmp = mkdtempSync(join(tmpdir(), "cbqs-t8n-server-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

type Answer = Record<string, unknown>;

/** A server process and a client that sends a line and awaits the next answer line. */
class Client {
  readonly child: ChildProcessWithoutNullStreams;
  private buffered = "";
  private waiting: Array<(line: string) => void> = [];
  private received: string[] = [];
  stderr = "";
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;

  constructor(command: string, args: string[]) {
    this.child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"] });
    this.child.stdout.setEncoding("utf8");
    this.child.stdout.on("data", (chunk: string) => {
      this.buffered += chunk;
      for (let nl = this.buffered.indexOf("\n"); nl >= 0; nl = this.buffered.indexOf("\n")) {
        const line = this.buffered.slice(0, nl);
        this.buffered = this.buffered.slice(nl + 1);
        const w = this.waiting.shift();
        if (w !== undefined) w(line);
        else this.received.push(line);
      }
    });
    this.child.stderr.setEncoding("utf8");
    this.child.stderr.on("data", (c: string) => (this.stderr += c));
    this.exited = new Promise((resolve) => this.child.on("close", (code, signal) => resolve({ code, signal })));
  }

  nextLine(): Promise<string> {
    const got = this.received.shift();
    if (got !== undefined) return Promise.resolve(got);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** A line already received, if any. */
  drain(): string | undefined {
    return this.received.shift();
  }

  async next(): Promise<Answer> {
    return JSON.parse(await this.nextLine()) as Answer;
  }

  send(line: string): void {
    this.child.stdin.write(line + "\n");
  }

  async request(req: Answer): Promise<Answer> {
    this.send(JSON.stringify(req));
    return this.next();
  }

  async end(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    this.child.stdin.end();
    return this.exited;
  }
}

const server = (...extra: string[]) => new Client("node", [CLI, "t8n", "--server", ...extra]);
const adapter = (command: string) => new Client("node", [CLI, "t8n-adapter", command]);
const PER_CALL = `node ${CLI} t8n --quiet`;

function envJson(f: Fixture, i: number): Answer {
  const b = f.blocks[i]!;
  const g = f.genesis.config;
  return {
    height: b.height.toString(),
    timestamp: b.timestamp.toString(),
    chain_id: g.chain_id.toString(),
    chain_instance_id: toHex(f.genesis.chain_instance_id),
    governance: toHex(g.governance),
    cycle_price: g.cycle_price.toString(),
    cell_price: g.cell_price.toString(),
    ...(i === 0 ? {} : { parent_hash: toHex(f.blocks[i - 1]!.block_hash) }),
  };
}
const txsJson = (f: Fixture, i: number) => f.blocks[i]!.transactions.map(toHex);
const allocJson = (entries: Iterable<readonly [Uint8Array, Uint8Array]>, height: bigint) => ({
  format: "cbqs-state-dump/v1",
  height: height.toString(),
  entries: [...entries].map(([k, v]) => ({ key: toHex(k), value: toHex(v) })),
});
const genesisAlloc = (f: Fixture) => allocJson(Replay.start(f).replay.store.entries(), 0n);

/** `cbqs t8n` per call over three files: its result and post-state documents. */
function perCall(alloc: unknown, txs: unknown, env: unknown): { result: unknown; post: unknown } {
  const file = (name: string, v: unknown) => (writeFileSync(join(tmp, name), JSON.stringify(v)), join(tmp, name));
  const args = ["--input.alloc", file("alloc.json", alloc), "--input.txs", file("txs.json", txs), "--input.env", file("env.json", env)];
  const r = spawnSync("node", [CLI, "t8n", "--quiet", ...args, "--output.result", join(tmp, "result.json"), "--output.alloc", join(tmp, "post.json")], { encoding: "utf8" });
  expect(r.status, r.stderr).toBe(0);
  return { result: JSON.parse(readFileSync(join(tmp, "result.json"), "utf8")), post: JSON.parse(readFileSync(join(tmp, "post.json"), "utf8")) };
}

/** A result without the two fields that depend on how the pre-state was committed. */
const historyFree = (r: unknown) => {
  const { state_root: _s, block_hash: _b, ...rest } = r as Answer;
  return rest;
};

describe("cbqs t8n --server (cbqs-t8n-server/v1, docs/reference/formats/t8n-server.md)", () => {
  it("the first line is the hello line naming the protocol version, the implementation and max_line_bytes", async () => {
    const c = server("--max-line-bytes", "4096");
    expect(await c.next()).toEqual({ protocol: "cbqs-t8n-server/v1", implementation: expect.stringMatching(/^cbqs-emulator /), max_line_bytes: 4096, max_sessions: 16, session_state_root: "chain" });
    expect(await c.end()).toEqual({ code: 0, signal: null });
  });

  it("apply's result is byte-identical (as JSON) to what cbqs t8n writes for the same inputs, and post_state to its --output.alloc", async () => {
    // Block 2 from block 1's post-state: a non-genesis pre-state, a parent hash, receipts with events.
    const first = transition(Replay.start(fixture).replay.store.entries(), fixture.blocks[0]!.transactions, { ...envOfFixture(0) });
    const alloc = allocJson(first.store.entries(), fixture.blocks[0]!.height);
    const want = perCall(alloc, txsJson(fixture, 1), envJson(fixture, 1));
    const c = server();
    await c.next();
    const a = await c.request({ id: "a", method: "apply", alloc, txs: txsJson(fixture, 1), env: envJson(fixture, 1), want_post_state: true });
    expect(Object.keys(a)).toEqual(["id", "result", "post_state"]);
    expect(a["id"]).toBe("a");
    expect(JSON.stringify(a["result"])).toBe(JSON.stringify(want.result));
    expect(JSON.stringify(a["post_state"])).toBe(JSON.stringify(want.post));
    // Without want_post_state, no post_state.
    const b = await c.request({ id: 7, method: "apply", alloc, txs: txsJson(fixture, 1), env: envJson(fixture, 1) });
    expect(Object.keys(b)).toEqual(["id", "result"]);
    expect(JSON.stringify(b["result"])).toBe(JSON.stringify(want.result));
    expect(await c.end()).toEqual({ code: 0, signal: null });
  });

  it("a session from a corpus fixture's genesis gives every block's roots, receipts and block hash as the fixture has them (CIP-4 §5.1 history)", async () => {
    const c = server();
    await c.next();
    const open = await c.request({ id: 1, method: "session.open", alloc: genesisAlloc(fixture) });
    expect(open).toEqual({ id: 1, session: "s1", height: "0" });
    const g = fixture.genesis;
    for (let i = 0; i < fixture.blocks.length; i++) {
      const b = fixture.blocks[i]!;
      const a = await c.request({ id: i + 2, method: "session.apply", session: "s1", txs: txsJson(fixture, i), env: { ...envJson(fixture, i), parent_hash: toHex(i === 0 ? genesisHash(g.chain_instance_id, g.config.timestamp, g.state_root) : fixture.blocks[i - 1]!.block_hash) } });
      expect(Object.keys(a)).toEqual(["id", "result"]);
      const r = a["result"] as Answer;
      expect([b.height, r["state_root"], r["tx_root"], r["receipt_root"], r["logs_root"], r["block_hash"], r["rejected"]]).toEqual([
        b.height,
        toHex(b.state_root),
        toHex(b.tx_root),
        toHex(b.receipt_root),
        toHex(b.logs_root),
        toHex(b.block_hash),
        [],
      ]);
      expect((r["receipts"] as Answer[]).map((x) => [x["tx_hash"], x["status"], x["cycles"], x["cells"]])).toEqual(b.receipts.map((x) => [toHex(x.tx_hash), x.status, x.cycles.toString(), x.cells.toString()]));
    }
    // The post-state on request equals the fixture's last post-state, where it records one.
    const last = fixture.blocks[fixture.blocks.length - 1]!;
    const post = (await c.request({ id: "p", method: "session.post_state", session: "s1" }))["post_state"] as Answer;
    expect(post["state_root"]).toBe(toHex(last.state_root));
    if (last.post_state !== undefined) expect([...loadDump(post)].map(([k, v]) => toHex(k) + toHex(v))).toEqual([...last.post_state].map(([k, v]) => toHex(k) + toHex(v)));
    expect(await c.request({ id: "x", method: "session.close", session: "s1" })).toEqual({ id: "x", closed: "s1" });
    expect(((await c.request({ id: "y", method: "session.post_state", session: "s1" }))["error"] as Answer)["code"]).toBe("unknown_session");
    expect(await c.end()).toEqual({ code: 0, signal: null });
  });

  it("a session of N blocks equals N per-call t8n runs, each on the previous post-state, on every field but state_root and block_hash", async () => {
    // Another fixture, started after its first block: the session's pre-state is not genesis.
    const f = loadFixture(readDoc("fixtures/corpus/rent-settle-suspend-expire.json"));
    let pre = [...transition(Replay.start(f).replay.store.entries(), f.blocks[0]!.transactions, envOf(f, 0)).store.entries()];
    const c = server();
    await c.next();
    await c.request({ id: 0, method: "session.open", alloc: allocJson(pre, f.blocks[0]!.height) });
    for (let i = 1; i < f.blocks.length; i++) {
      const run = transition(pre, f.blocks[i]!.transactions, envOf(f, i));
      const a = await c.request({ id: i, method: "session.apply", session: "s1", txs: txsJson(f, i), env: envJson(f, i) });
      expect(historyFree(a["result"])).toEqual(historyFree(JSON.parse(JSON.stringify(run.result))));
      pre = [...run.store.entries()];
    }
    const post = (await c.request({ id: "p", method: "session.post_state", session: "s1" }))["post_state"] as Answer;
    expect([...loadDump(post)].map(([k, v]) => toHex(k) + toHex(v))).toEqual(pre.map(([k, v]) => toHex(k) + toHex(v)));
    expect(await c.end()).toEqual({ code: 0, signal: null });
  });

  it("a bad request line, an unknown method, an oversized line and bad members each get an error line, and the next request is still served", async () => {
    const c = server("--max-line-bytes", "1024");
    await c.next();
    const ok = { id: "ok", method: "session.close", session: "none" };
    const expectServed = async () => expect(((await c.request(ok))["error"] as Answer)["code"]).toBe("unknown_session");
    c.send("{not json");
    expect(await c.next()).toEqual({ id: null, error: { code: "parse_error", message: expect.stringMatching(/^\$/) } });
    await expectServed();
    expect(await c.request({ id: 3, method: "t8n.magic" })).toEqual({ id: 3, error: { code: "unknown_method", message: expect.stringContaining("t8n.magic") } });
    await expectServed();
    // Over the bound by one byte, then by many chunks: both refused unread, the stream stays in step.
    c.send(JSON.stringify({ id: 4, method: "apply", pad: "x".repeat(1024) }).slice(0, 1025));
    expect(await c.next()).toEqual({ id: null, error: { code: "line_too_long", message: expect.stringContaining("1025 bytes, above max_line_bytes 1024") } });
    await expectServed();
    c.send("y".repeat(3_000_000));
    expect(((await c.next())["error"] as Answer)["code"]).toBe("line_too_long");
    await expectServed();
    // Exactly at the bound is served.
    const exact = JSON.stringify({ id: "e", method: "x" });
    c.send(exact + " ".repeat(1024 - exact.length));
    expect(((await c.next())["error"] as Answer)["code"]).toBe("unknown_method");
    // Members: unknown, missing, wrong type, bad content (named by JSON path), a bad id.
    expect(await c.request({ id: 5, method: "apply", alloc: {}, txs: [], env: {}, extra: 1 })).toEqual({ id: 5, error: { code: "invalid_request", message: expect.stringContaining("$.extra: unknown field") } });
    expect(((await c.request({ id: 6, method: "apply", txs: [], env: {} }))["error"] as Answer)["code"]).toBe("invalid_request");
    expect(await c.request({ id: 7, method: "apply", alloc: { format: "cbqs-state-dump/v1", entries: [] }, txs: ["0x1"], env: envJson(fixture, 0) })).toEqual({
      id: 7,
      error: { code: "invalid_request", message: expect.stringMatching(/^\$\.txs\[0\]: /) },
    });
    expect(((await c.request({ id: -1, method: "apply" } as Answer))["error"] as Answer)["code"]).toBe("parse_error");
    expect(await c.request({ id: true, method: "apply" } as Answer)).toEqual({ id: null, error: { code: "invalid_request", message: expect.stringContaining("$.id") } });
    await expectServed();
    expect(await c.end()).toEqual({ code: 0, signal: null });
  });

  it("a session refuses a block not above its height and stays as it was; sessions are bounded (too_many_sessions)", async () => {
    const c = server();
    await c.next();
    await c.request({ id: 0, method: "session.open", alloc: genesisAlloc(fixture) });
    const first = await c.request({ id: 1, method: "session.apply", session: "s1", txs: txsJson(fixture, 0), env: envJson(fixture, 0) });
    const again = await c.request({ id: 2, method: "session.apply", session: "s1", txs: txsJson(fixture, 0), env: envJson(fixture, 0) });
    expect(again).toEqual({ id: 2, error: { code: "invalid_request", message: expect.stringContaining("$.env.height: block 1 is not above the session's height 1") } });
    // A block whose content is refused (a bad env) leaves the state and height unchanged: block 2 still applies.
    const bad = await c.request({ id: 3, method: "session.apply", session: "s1", txs: txsJson(fixture, 1), env: { ...envJson(fixture, 1), governance: "0x12" } });
    expect(((bad["error"] as Answer)["message"] as string).startsWith("$.env.governance")).toBe(true);
    const second = await c.request({ id: 4, method: "session.apply", session: "s1", txs: txsJson(fixture, 1), env: envJson(fixture, 1) });
    expect((second["result"] as Answer)["state_root"]).toBe(toHex(fixture.blocks[1]!.state_root));
    expect((first["result"] as Answer)["state_root"]).toBe(toHex(fixture.blocks[0]!.state_root));
    const small = { format: "cbqs-state-dump/v1", height: "0", entries: [] };
    for (let i = 2; i <= 16; i++) expect((await c.request({ id: i, method: "session.open", alloc: small }))["session"]).toBe(`s${i}`);
    expect(((await c.request({ id: 17, method: "session.open", alloc: small }))["error"] as Answer)["code"]).toBe("too_many_sessions");
    await c.request({ id: 18, method: "session.close", session: "s16" });
    expect((await c.request({ id: 19, method: "session.open", alloc: small }))["session"]).toBe("s17");
    expect(await c.end()).toEqual({ code: 0, signal: null });
  });

  it("a session leaves out a transaction that cannot be included and re-runs the block from the same state, as per-call t8n does", async () => {
    // Block 1's first transaction twice: the copy's nonce is stale once the first has run.
    const b = fixture.blocks[0]!;
    const doubled = [b.transactions[0]!, ...b.transactions];
    const want = transition(Replay.start(fixture).replay.store.entries(), doubled, envOf(fixture, 0)).result;
    expect((want["rejected"] as Answer[]).map((r) => r["index"])).toEqual(["1"]);
    const c = server();
    await c.next();
    await c.request({ id: 0, method: "session.open", alloc: genesisAlloc(fixture) });
    const a = await c.request({ id: 1, method: "session.apply", session: "s1", txs: doubled.map(toHex), env: envJson(fixture, 0) });
    expect(a["result"]).toEqual(JSON.parse(JSON.stringify(want)));
    // The held batch was committed once: block 2 follows with the fixture's root.
    const next = await c.request({ id: 2, method: "session.apply", session: "s1", txs: txsJson(fixture, 1), env: envJson(fixture, 1) });
    expect((next["result"] as Answer)["state_root"]).toBe(toHex(fixture.blocks[1]!.state_root));
    expect(await c.end()).toEqual({ code: 0, signal: null });
  });

  it("EOF exits 0 after answering every request sent before it, the last line without its newline included", async () => {
    const c = server();
    const reqs = Array.from({ length: 20 }, (_, i) => JSON.stringify({ id: i, method: "session.close", session: "s1" }));
    c.child.stdin.end(reqs.join("\n"));
    const { code } = await c.exited;
    expect(code).toBe(0);
    await c.next(); // hello
    const ids: unknown[] = [];
    for (let i = 0; i < 20; i++) ids.push((await c.next())["id"]);
    expect(ids).toEqual(reqs.map((_, i) => i));
    expect(c.stderr).toBe("");
  });

  it("SIGTERM exits 143 and SIGINT 130 (CLI convention) with the stop line, after answering the request in progress", async () => {
    for (const [signal, code] of [["SIGTERM", 143], ["SIGINT", 130]] as const) {
      const c = server();
      await c.next();
      await c.request({ id: 0, method: "session.open", alloc: genesisAlloc(fixture) });
      // Two blocks in one write; the signal as soon as the first is answered, while the second is
      // read, running or done: whatever was started is answered whole, and the stop line counts it.
      const block = (i: number) => JSON.stringify({ id: i + 1, method: "session.apply", session: "s1", txs: txsJson(fixture, i), env: envJson(fixture, i) });
      c.send(block(0) + "\n" + block(1));
      expect((await c.next())["id"]).toBe(1);
      c.child.kill(signal);
      expect(await c.exited).toEqual({ code, signal: null });
      const rest: Answer[] = [];
      for (let line = c.drain(); line !== undefined; line = c.drain()) rest.push(JSON.parse(line) as Answer);
      expect(rest.map((a) => [a["id"], typeof a["result"]])).toEqual(rest.length === 0 ? [] : [[2, "object"]]);
      expect(c.stderr).toBe(`cbqs: stopped by ${signal}; ${2 + rest.length} requests answered, none left half-done\n`);
    }
  });

  it("the docs/reference/formats/t8n-server.md example is byte-exact: its hello line and each request's answer line are what the server writes", async () => {
    const section = readFileSync("docs/reference/formats/t8n-server.md", "utf8");
    const hello = /\n(\{"protocol":.*\})\n/.exec(section)![1]!;
    const pairs = [...section.matchAll(/^→ (.*)\n← (.*)$/gm)].map((m) => [m[1]!, m[2]!] as const);
    expect(pairs.length).toBeGreaterThanOrEqual(10);
    const version = (JSON.parse(readFileSync("package.json", "utf8")) as { version: string }).version;
    const c = server();
    expect((await c.nextLine()).replace(`cbqs-emulator ${version}`, "cbqs-emulator 0.1.0")).toBe(hello);
    for (const [request, answer] of pairs) {
      c.send(request);
      expect(await c.nextLine()).toBe(answer);
    }
    expect(await c.end()).toEqual({ code: 0, signal: null });
  });

  it("t8n --server refuses the per-call files and a line bound below 1024; the bound is only for --server (exit 2, one line)", () => {
    const r = spawnSync("node", [CLI, "t8n", "--server", "--input.alloc", "a.json"], { encoding: "utf8", input: "" });
    expect([r.status, r.stdout, r.stderr]).toEqual([2, "", "cbqs: error: --input.alloc is not used with --server (a request carries the inputs, an answer the outputs)\n"]);
    const small = spawnSync("node", [CLI, "t8n", "--server", "--max-line-bytes", "1023"], { encoding: "utf8", input: "" });
    expect([small.status, small.stdout, small.stderr]).toEqual([2, "", "cbqs: error: --max-line-bytes must be at least 1024 (got 1023)\n"]);
    const perCallBound = spawnSync("node", [CLI, "t8n", "--max-line-bytes", "2048", "--input.alloc", "a", "--input.txs", "t", "--input.env", "e"], { encoding: "utf8" });
    expect([perCallBound.status, perCallBound.stderr]).toEqual([2, "cbqs: error: --max-line-bytes is only used with --server\n"]);
  });

  it("the line splitter bounds a line across chunks without buffering it, and keeps every line in step", async () => {
    async function* chunks() {
      yield Buffer.from('{"a":1}\n{"b"');
      yield Buffer.from(":2}\n" + "z".repeat(10));
      yield Buffer.from("z".repeat(10) + "\n\n");
      yield Buffer.from("tail");
    }
    const got: unknown[] = [];
    for await (const l of lines(chunks(), 12)) got.push(l.kind === "line" ? Buffer.from(l.bytes).toString() : l);
    expect(got).toEqual(['{"a":1}', '{"b":2}', { kind: "too_long", bytes: 20 }, "", "tail"]);
  });
});

describe("cbqs t8n-adapter and a Python wrapper over the per-call t8n", () => {
  /** The same requests to two servers; their answers, as lines. */
  async function exchange(c: Client): Promise<Answer[]> {
    const hello = await c.next();
    const first = transition(Replay.start(fixture).replay.store.entries(), fixture.blocks[0]!.transactions, envOfFixture(0));
    const alloc = allocJson(first.store.entries(), fixture.blocks[0]!.height);
    const answers: Answer[] = [hello];
    answers.push(await c.request({ id: 1, method: "apply", alloc, txs: txsJson(fixture, 1), env: envJson(fixture, 1), want_post_state: true }));
    answers.push(await c.request({ id: 2, method: "session.open", alloc: genesisAlloc(fixture) }));
    for (let i = 0; i < 3; i++) answers.push(await c.request({ id: 3 + i, method: "session.apply", session: "s1", txs: txsJson(fixture, i), env: envJson(fixture, i) }));
    // A block not above the session's height is refused by every implementation (invalid_request).
    answers.push(await c.request({ id: 10, method: "session.apply", session: "s1", txs: [], env: envJson(fixture, 2) }));
    answers.push(await c.request({ id: 6, method: "session.post_state", session: "s1" }));
    answers.push(await c.request({ id: 7, method: "session.close", session: "s1" }));
    answers.push(await c.request({ id: 8, method: "session.apply", session: "s1", txs: [], env: envJson(fixture, 0) }));
    answers.push(await c.request({ id: 9, method: "no.such" }));
    c.send("{");
    answers.push(await c.next());
    expect(await c.end()).toEqual({ code: 0, signal: null });
    return answers;
  }

  /** Answers with the per-block-history fields (state roots and block hashes) taken out. */
  const comparable = (answers: Answer[]) =>
    answers.slice(1).map((a) => {
      if (a["error"] !== undefined) return { id: a["id"], code: (a["error"] as Answer)["code"] };
      if (a["id"] === 1) return a; // apply: everything, post-state included
      const { post_state, result, ...rest } = a;
      return { ...rest, ...(result === undefined ? {} : { result: historyFree(result) }), ...(post_state === undefined ? {} : { entries: (post_state as Answer)["entries"] }) };
    });

  it("cbqs t8n-adapter over our own per-call `cbqs t8n` answers as t8n --server does (apply exactly; sessions but for the state_root their history gives)", async () => {
    const ours = await exchange(server());
    const adapted = await exchange(adapter(PER_CALL));
    expect(adapted[0]).toEqual({ protocol: "cbqs-t8n-server/v1", implementation: `cbqs t8n-adapter ${JSON.stringify(PER_CALL)}`, max_line_bytes: 64 * 1024 * 1024, max_sessions: 16, session_state_root: "per_block" });
    expect(JSON.stringify(adapted[1])).toBe(JSON.stringify(ours[1]));
    expect(comparable(adapted)).toEqual(comparable(ours));
    // The adapter's session roots are the per-call ones: block 1 from genesis equals the chain's, block 2 does not.
    expect((adapted[3]!["result"] as Answer)["state_root"]).toBe((ours[3]!["result"] as Answer)["state_root"]);
    expect((adapted[4]!["result"] as Answer)["state_root"]).not.toBe((ours[4]!["result"] as Answer)["state_root"]);
  });

  it("the adapter answers t8n_failed when the command fails, and goes on serving", async () => {
    const c = adapter("exit 3 #");
    await c.next();
    const a = await c.request({ id: 1, method: "apply", alloc: genesisAlloc(fixture), txs: [], env: envJson(fixture, 0) });
    expect(a).toEqual({ id: 1, error: { code: "t8n_failed", message: expect.stringContaining("exit 3 without writing --output.result") } });
    expect(((await c.request({ id: 2, method: "x" }))["error"] as Answer)["code"]).toBe("unknown_method");
    expect(await c.end()).toEqual({ code: 0, signal: null });
  });

  it("a malformed request is refused by the adapter before its command runs, with the code and words t8n --server gives", async () => {
    const env = envJson(fixture, 0);
    const { timestamp: _t, ...noTimestamp } = env;
    const malformed: Answer[] = [
      { id: 1, method: "apply", alloc: genesisAlloc(fixture), txs: {}, env },
      { id: 2, method: "apply", alloc: genesisAlloc(fixture), txs: [], env: noTimestamp },
      { id: 3, method: "apply", alloc: { height: "0", entries: [] }, txs: [], env },
      { id: 4, method: "session.open", alloc: { format: "cbqs-state-dump/v1", height: "0", entries: [{ key: "0x01", value: "0x" }] } },
      { id: 5, method: "session.open", alloc: genesisAlloc(fixture) },
      { id: 6, method: "session.apply", session: "s1", txs: ["0xzz"], env },
    ];
    const answers = async (c: Client) => {
      await c.next();
      const got: Answer[] = [];
      for (const req of malformed) got.push(await c.request(req));
      expect(await c.end()).toEqual({ code: 0, signal: null });
      return got;
    };
    // A command that would answer t8n_failed if it ran.
    const adapted = await answers(adapter("exit 3 #"));
    expect(adapted).toEqual(await answers(server()));
    expect(adapted.map((a) => (a["error"] as Answer | undefined)?.["message"] ?? a["session"])).toEqual([
      "$.txs: expected a JSON array",
      "$.env.timestamp: missing",
      expect.stringMatching(/^\$\.alloc\.format: missing/),
      expect.stringMatching(/^\$\.alloc\.entries\[0\]\.key: /),
      "s1",
      expect.stringMatching(/^\$\.txs\[0\]: /),
    ]);
  });

  it("SIGTERM ends the adapter's command under way: that request is answered t8n_failed, then exit 143 with nothing left running", async () => {
    const started = join(tmp, "sigterm-started");
    const mark = `cbqs-adapter-sigterm-${process.pid}`;
    const c = new Client("env", [`CBQS_TEST_MARK=${mark}`, "node", CLI, "t8n-adapter", `touch ${started}; sleep 60 #`]);
    await c.next();
    c.send(JSON.stringify({ id: 1, method: "apply", alloc: genesisAlloc(fixture), txs: [], env: envJson(fixture, 0) }));
    while (!existsSync(started)) await new Promise((r) => setTimeout(r, 20));
    c.child.kill("SIGTERM");
    expect(await c.next()).toEqual({ id: 1, error: { code: "t8n_failed", message: "the t8n command was stopped (the adapter received SIGTERM)" } });
    expect(await c.exited).toEqual({ code: 143, signal: null });
    expect(c.stderr).toBe("cbqs: stopped by SIGTERM; 1 request answered, none left half-done\n");
    expect(marked(mark, CLI)).toEqual([]);
  });

  it("t8n-adapter with an empty command is unusable input (exit 2, one line), never a server", () => {
    const r = spawnSync(process.execPath, ["dist/src/cli.js", "t8n-adapter", " "], { input: "", encoding: "utf8" });
    expect({ status: r.status, out: r.stdout, err: r.stderr }).toEqual({ status: 2, out: "", err: expect.stringMatching(/^cbqs: error: the t8n command is empty: [^\n]*\n$/) });
  });

  const python = spawnSync("sh", ["-c", "command -v python3"]).status === 0;
  // Outside CI a machine without python3 skips it; in CI it must run, so there it fails with the reason.
  it("a node team's wrapper — scripts/t8n-server.py (Python) over the per-call t8n — serves the protocol end to end like cbqs t8n-adapter", async () => {
    if (!python) throw new Error("this test needs python3 on the PATH (the Python wrapper is run for real); install python3 (every machine that runs this suite needs it)");
    const ours = await exchange(adapter(PER_CALL));
    const py = await exchange(new Client("python3", ["scripts/t8n-server.py", PER_CALL]));
    expect(py[0]).toEqual({ ...ours[0], implementation: "scripts/t8n-server.py" });
    // Every answer but the errors' messages is the same, state roots included (both per_block).
    const codes = (as: Answer[]) => as.map((a) => (a["error"] === undefined ? a : { id: a["id"], code: (a["error"] as Answer)["code"] }));
    expect(codes(py.slice(1))).toEqual(codes(ours.slice(1)));
    expect(JSON.stringify(py[1])).toBe(JSON.stringify(ours[1]));
  });
});

const envOfFixture = (i: number) => envOf(fixture, i);
