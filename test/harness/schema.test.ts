import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { corpusFiles, readDoc } from "./helpers.js";

type Schema = { required: string[]; properties: Record<string, unknown>; $defs: Record<string, { required: string[]; properties: Record<string, unknown> }> };
const schema = JSON.parse(readFileSync("fixtures/schema/cbqs-fixture-v1.schema.json", "utf8")) as Schema;

describe("fixtures/schema/cbqs-fixture-v1.schema.json describes what fill writes", () => {
  it("top-level, block, receipt and event fields are exactly the written ones", () => {
    for (const file of corpusFiles()) {
      const doc = readDoc(file) as unknown as Record<string, unknown> & { blocks: Array<Record<string, unknown> & { receipts: Array<Record<string, unknown>> }> };
      expect(Object.keys(doc), file).toEqual(schema.required);
      for (const b of doc.blocks) {
        expect(Object.keys(b).filter((k) => k !== "post_state")).toEqual(schema.$defs["block"]!.required);
        expect(Object.keys(schema.$defs["block"]!.properties)).toEqual([...schema.$defs["block"]!.required, "post_state"]);
        for (const r of b.receipts) {
          expect(Object.keys(r)).toEqual(schema.$defs["receipt"]!.required);
          for (const e of r["events"] as Array<Record<string, unknown>>) expect(Object.keys(e)).toEqual(schema.$defs["event"]!.required);
        }
      }
    }
  });
});
