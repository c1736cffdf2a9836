// Sending a streamed answer (src/node/streamed.ts, GET /fixture) against a stand-in for the
// response: writes gathered into pieces of 64 KiB, the socket's backpressure obeyed, production
// stopped when the client is gone, a failure after the status logged and the connection cut, a
// client that reads nothing cut off after STALL_MS.
import { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import { setImmediate as nextTurn } from "node:timers/promises";
import { afterEach, describe, expect, it, vi } from "vitest";
import { StreamedAnswer } from "../../src/node/json.js";
import { sendStreamed, STALL_MS } from "../../src/node/streamed.js";

class FakeResponse extends EventEmitter {
  destroyed = false;
  ended = false;
  readonly writes: string[] = [];
  head: [number, Record<string, string>] | undefined;
  /** What write() answers: false = the socket's buffer is full, wait for "drain". */
  accepting = true;
  writeHead(status: number, headers: Record<string, string>): void {
    this.head = [status, headers];
  }
  write(text: string): boolean {
    this.writes.push(text);
    return this.accepting;
  }
  end(): void {
    this.ended = true;
  }
  destroy(): void {
    this.destroyed = true;
    this.emit("close");
  }
}

/** An answer of `units` pieces of `size` characters; `seen` counts what was produced, `closed` its finally. */
function answer(units: number, size: number, each: (i: number) => void = () => {}) {
  const state = { produced: 0, closed: false };
  const a = new StreamedAnswer(function* (out) {
    try {
      for (let i = 0; i < units; i++) {
        each(i);
        out.write(String.fromCharCode(97 + (i % 26)).repeat(size));
        state.produced++;
        yield;
      }
      return { msg: "done", units };
    } finally {
      state.closed = true;
    }
  });
  return { a, state };
}

const send = (res: FakeResponse, a: StreamedAnswer, log: (e: Record<string, unknown>) => void = () => {}) =>
  sendStreamed(res as unknown as ServerResponse, a, { "x-test": "1" }, log);

afterEach(() => vi.useRealTimers());

describe("streamed answers", () => {
  it("sends 200 with its headers, gathers text into writes of 64 KiB (exactly at the bound), ends, and logs the producer's summary", async () => {
    const res = new FakeResponse();
    const logs: Array<Record<string, unknown>> = [];
    const { a, state } = answer(8, 16 * 1024);
    await send(res, a, (e) => logs.push(e));
    expect(res.head).toEqual([200, { "content-type": "application/json; charset=utf-8", "x-test": "1" }]);
    expect(res.writes.map((w) => w.length)).toEqual([65536, 65536]); // no empty write at the end
    expect(res.writes.join("")).toBe([..."abcdefgh"].map((c) => c.repeat(16 * 1024)).join(""));
    expect(res.ended).toBe(true);
    expect(logs).toEqual([{ level: "info", msg: "done", units: 8 }]);
    expect(state.closed).toBe(true);
    const tail = new FakeResponse();
    await send(tail, answer(3, 10).a);
    expect(tail.writes).toEqual(["a".repeat(10) + "b".repeat(10) + "c".repeat(10)]);
  });

  it("waits for the socket to drain before producing more", async () => {
    const res = new FakeResponse();
    res.accepting = false;
    const { a, state } = answer(8, 32 * 1024);
    const sending = send(res, a);
    for (let i = 0; i < 5; i++) await nextTurn();
    expect(state.produced).toBe(2); // one piece written, then waiting
    res.accepting = true;
    res.emit("drain");
    await sending;
    expect(state.produced).toBe(8);
    expect(res.ended).toBe(true);
  });

  it("stops producing when the client is gone (also while waiting for a drain), and closes the producer", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] }); // the stall timer cannot end the wait here
    const res = new FakeResponse();
    res.accepting = false;
    const { a, state } = answer(100, 64 * 1024);
    let settled = false;
    const sending = send(res, a).then(() => (settled = true));
    await nextTurn();
    res.destroy(); // "close" while waiting for "drain"
    for (let i = 0; i < 3; i++) await nextTurn();
    expect(settled).toBe(true);
    await sending;
    expect(state.produced).toBe(1);
    expect(res.writes).toHaveLength(1);
    expect(res.ended).toBe(false);
    expect(state.closed).toBe(true);
  });

  it("a failure after the status is logged with an id and its stack, and the connection is cut before the end", async () => {
    const res = new FakeResponse();
    const logs: Array<Record<string, unknown>> = [];
    const { a, state } = answer(10, 1, (i) => {
      if (i === 3) throw new Error("block 3 does not re-execute");
    });
    await send(res, a, (e) => logs.push(e));
    expect(res.destroyed).toBe(true);
    expect(res.ended).toBe(false);
    expect(logs).toHaveLength(1);
    expect(logs[0]).toMatchObject({ level: "error", msg: "streamed answer failed; connection cut", id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(String(logs[0]!["error"])).toMatch(/^Error: block 3 does not re-execute\n\s+at /);
    expect(state.closed).toBe(true);
    const odd = new FakeResponse();
    const thrown: Array<Record<string, unknown>> = [];
    await send(odd, new StreamedAnswer(function* () { throw "not an Error"; }), (e) => thrown.push(e)); // prettier-ignore
    expect(thrown[0]!["error"]).toBe("not an Error");
  });

  it("turns the event loop only after about 25 ms of work, not after every unit", async () => {
    const res = new FakeResponse();
    let ticks = 0;
    let ticking = true;
    const tick = () => {
      ticks++;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    await send(res, answer(2_000, 1).a);
    ticking = false;
    expect(ticks).toBeLessThan(200);
    // Long units: other work gets turns in between (the node keeps answering).
    const slow = new FakeResponse();
    let turns = 0;
    let keepTurning = true;
    const turn = () => {
      turns++;
      if (keepTurning) setImmediate(turn);
    };
    setImmediate(turn);
    await send(slow, answer(4, 1, () => {
      const until = performance.now() + 30;
      while (performance.now() < until);
    }).a);
    keepTurning = false;
    expect(turns).toBeGreaterThanOrEqual(3);
  });

  it(`a client that reads nothing for STALL_MS (${STALL_MS} ms) is cut off`, async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const res = new FakeResponse();
    res.accepting = false;
    const { a, state } = answer(4, 64 * 1024);
    const sending = send(res, a);
    await nextTurn();
    vi.advanceTimersByTime(STALL_MS - 1);
    expect(res.destroyed).toBe(false);
    vi.advanceTimersByTime(1);
    await sending;
    expect(res.destroyed).toBe(true);
    expect(state.produced).toBe(1);
    expect(res.listenerCount("drain") + res.listenerCount("close")).toBe(0);
  });
});
