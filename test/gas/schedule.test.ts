import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { utf8 } from "../../src/bytes.js";
import { COSTS, Meter } from "../../src/engine/meter.js";
import { verifyStrictReference } from "../../src/engine/fast-paths.js";
import { scheduleMarkdown } from "../../src/gas/schedule.js";
import { encodeEvent } from "../../state/kv/event.js";
import { cbqs, ix, OWNER, PROVIDER, TestChain } from "../engine/harness.js";

describe("gas-vectors/SCHEDULE.md (CIP-39 §18.1)", () => {
  it("§18.1 the committed schedule is exactly the text generated from the cost module", () => {
    expect(readFileSync("gas-vectors/SCHEDULE.md", "utf8")).toBe(scheduleMarkdown());
  });

  it("§18.1 the constants table follows the code: a different schedule renders differently", () => {
    const text = scheduleMarkdown({ ...COSTS, ed25519VerifyCycles: 4_321n });
    expect(text).toContain("| `ed25519VerifyCycles` | 4,321 | cycles |");
    expect(scheduleMarkdown()).toContain("| `ed25519VerifyCycles` | 3,000 | cycles |");
    expect(scheduleMarkdown()).toContain("| `readCycles` | 10 | cycles |");
    expect(scheduleMarkdown()).toContain("| `writeCycles` | 50 | cycles |");
  });
});

/** The text of decision record `id` (docs/decisions/NNNN-slug.md). */
function decision(id: string): string {
  const file = readdirSync("docs/decisions").find((name) => name.startsWith(`${id.slice(2)}-`));
  expect(file, id).toBeDefined();
  return readFileSync(`docs/decisions/${file}`, "utf8");
}

/** The metered-size formula as the text writes it: `E (emitter) + A + topic bytes + B + payload bytes`. */
function formulaIn(text: string, where: string): (topic: number, payload: number) => number {
  const m = /(\d+) \(emitter\) \+ (\d+) \+ topic bytes \+ (\d+) \+ payload bytes/.exec(text.replace(/\s+/g, " "));
  expect(m, `${where} states the metered event size`).not.toBeNull();
  const [emitter, topicLength, payloadLength] = [Number(m![1]), Number(m![2]), Number(m![3])];
  return (topic, payload) => emitter + topicLength + topic + payloadLength + payload;
}

describe("§18.1 cells per event: the documented size is the one the meter charges", () => {
  it("§18.1 D-0068, D-0048, gas-vectors/SCHEDULE.md and the meter agree: cbqs.stream.created is charged 20 + 4 + 19 + 4 + 32 = 79 cells, not its 73-byte canonical encoding", () => {
    const t = new TestChain();
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    const created = t.ok(cbqs(OWNER, ix.createStream())).events.find((e) => e.topic === "cbqs.stream.created")!;
    expect(created.payload).toHaveLength(32);
    expect(encodeEvent(created)).toHaveLength(73);

    const meter = new Meter("CreateStream", 0, verifyStrictReference);
    meter.emitted(created);
    expect(meter.cells(true)).toBe(79n);

    const topic = utf8(created.topic).length;
    const documents: Array<[string, string]> = [
      ['D-0068 "Cost constants and our gas-vector artifact"', decision("D-0068")],
      ['D-0048 "Metered event size"', decision("D-0048")],
      ["gas-vectors/SCHEDULE.md", readFileSync("gas-vectors/SCHEDULE.md", "utf8")],
    ];
    for (const [where, text] of documents) {
      expect(BigInt(formulaIn(text, where)(topic, created.payload.length)) * COSTS.cellsPerEventByte, where).toBe(meter.cells(true));
      // No second, contradicting rule: cells are never said to follow the event's encoding.
      expect(text.replace(/\s+/g, " "), where).not.toMatch(/per byte of each (emitted )?event's canonical encoding/);
    }
    expect(readFileSync("src/engine/meter.ts", "utf8").replace(/\s+/g, " ")).not.toMatch(/per byte of each (emitted )?event's canonical encoding/);
  });
});
