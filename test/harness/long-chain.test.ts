import { describe, expect, it } from "vitest";
import { generateLongChainScenario } from "../../scripts/gen-long-chain.js";
import { fillScenario } from "../../src/harness/fill.js";
import { fixtureJsonText, loadFixture } from "../../src/harness/fixture.js";
import { parseJson } from "../../src/json/parse.js";
import { replayFixture } from "../../src/harness/replay.js";
import { parseScenario } from "../../src/scenario/parse.js";

type Block = { height: string; txs: Array<Record<string, unknown>> };
const blocksOf = (s: Record<string, unknown>) => s["blocks"] as Block[];

describe("long chain generator (docs/reference/formats/fixture.md)", () => {
  it("full size: >= 10,000 blocks and >= 50,000 transactions, every CIP-39 §5 instruction, governance and transfers", () => {
    const blocks = blocksOf(generateLongChainScenario({ blocks: 10_000, minTxs: 50_000 }));
    expect(blocks.length).toBeGreaterThanOrEqual(10_000);
    expect(blocks.reduce((n, b) => n + b.txs.length, 0)).toBeGreaterThanOrEqual(50_000);
    const kinds = new Set<string>();
    for (const b of blocks) {
      for (const t of b.txs) {
        const kind = Object.keys(t).find((k) => k !== "from")!;
        kinds.add(kind === "cbqs" || kind === "gov" ? `${kind}.${Object.keys(t[kind] as object)[0]}` : kind);
      }
    }
    const instructions = ["RegisterProvider", "UpdateProvider", "SetProviderStatus", "CreateStream", "UpdateStream", "TopUpStream", "SettleStreamRent", "CloseStream"];
    for (const k of [...instructions, "ActivateKeyGeneration"]) {
      expect(kinds).toContain(`cbqs.${k}`);
    }
    for (const k of ["gov.SetParam", "gov.SetParams", "gov.Pause", "gov.Unpause", "transfer", "raw"]) expect(kinds).toContain(k);
  });

  it("is prefix-stable: the first N blocks do not depend on the total", () => {
    const short = blocksOf(generateLongChainScenario({ blocks: 40, minTxs: 0 }));
    const long = blocksOf(generateLongChainScenario({ blocks: 200, minTxs: 0 }));
    expect(long.slice(0, 40)).toEqual(short);
  });

  it("§6.1 its first 110 blocks fill and replay green, with pauses, suspensions and expiries in them", () => {
    const scenario = generateLongChainScenario({ blocks: 110, minTxs: 0 });
    const text = fixtureJsonText(fillScenario(parseScenario(scenario), "final"));
    const fixture = loadFixture(parseJson(text));
    expect(replayFixture(fixture).mismatch).toBeNull();
    const receipts = fixture.blocks.flatMap((b) => b.receipts);
    const topics = new Set(receipts.flatMap((r) => r.events.map((e) => e.topic)));
    expect(topics).toContain("cbqs.stream.suspended");
    expect(topics).toContain("cbqs.stream.data_expired");
    expect(topics).toContain("cbqs.stream.key_generation_activated");
    expect(receipts.some((r) => r.error?.name === "RegistryPaused")).toBe(true);
    expect(receipts.filter((r) => r.status === "ok").length).toBeGreaterThan(receipts.length / 2);
  });
});
