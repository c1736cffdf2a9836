// The cbqs-scenario/v1 JSON Schema: generated from the codec
// declarations, so it cannot drift; every scenario of the repository and every worked example of
// docs/reference/formats/scenario.md is valid against it, and every example runs.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonSchemaOf, toJson } from "../../src/codec/core.js";
import * as S from "../../src/codec/schema.js";
import { parseScenario } from "../../src/scenario/parse.js";
import { runScenario } from "../../src/scenario/run.js";
import { scenarioSchema, scenarioSchemaText } from "../../src/scenario/schema.js";
import { generateLongChainScenario } from "../../scripts/gen-long-chain.js";
import { validate } from "./json-schema.js";

const SCHEMA_FILE = "fixtures/schema/cbqs-scenario-v1.schema.json";
const schema = scenarioSchema() as { $defs: Record<string, never> };
const DOC = readFileSync("docs/reference/formats/scenario.md", "utf8");
const examples = [...DOC.matchAll(/<!-- example: (\S+) -->\n```json\n([\s\S]*?)\n```/g)].map((m) => [m[1]!, JSON.parse(m[2]!)] as const);

describe("cbqs-scenario/v1 JSON Schema", () => {
  it("the committed schema file is exactly what the codec declarations generate (node dist/scripts/gen-scenario-schema.js)", () => {
    expect(readFileSync(SCHEMA_FILE, "utf8")).toBe(scenarioSchemaText());
  });

  it("every scenario of fixtures/scenarios and the long chain's prefix is valid", () => {
    const files = readdirSync("fixtures/scenarios").filter((f) => f.endsWith(".json"));
    for (const f of files) expect(validate(schema, JSON.parse(readFileSync(join("fixtures/scenarios", f), "utf8"))), f).toBeNull();
    expect(validate(schema, generateLongChainScenario({ blocks: 120, minTxs: 0 }))).toBeNull();
  });

  it("the codec's own JSON of any instruction is valid against the schema the codec describes (property)", () => {
    const { schema: root, defs } = jsonSchemaOf(S.CbqsInstructionV1 as never);
    fc.assert(
      fc.property(S.CbqsInstructionV1.arbitrary(fc), (v) => {
        expect(validate({ $defs: defs as never }, toJson(S.CbqsInstructionV1, v), root as never)).toBeNull();
      }),
      { numRuns: 300 },
    );
  });

  it("refuses what the runner refuses structurally: a misspelled argument, a missing one, two transaction kinds", () => {
    const base = examples.find(([k]) => k === "CreateStream")![1];
    const tamper = (f: (d: any) => void) => {
      const d = JSON.parse(JSON.stringify(base));
      f(d);
      return validate(schema, d);
    };
    expect(tamper((d) => (d.blocks[1].txs[0].cbqs.CreateStream.config.retention_msx = "1"))).toMatch(/^\$\.blocks\[1\]\.txs\[0\]/);
    expect(tamper((d) => delete d.blocks[1].txs[0].cbqs.CreateStream.provider)).not.toBeNull();
    expect(tamper((d) => (d.blocks[1].txs[0].transfer = { to: d.blocks[1].txs[0].from, amount: "1" }))).not.toBeNull();
    expect(tamper((d) => (d.blocks[0].height = 1.5))).not.toBeNull();
  });
});

describe("docs/reference/formats/scenario.md", () => {
  it("has one worked example per instruction, and one per other transaction kind", () => {
    const names = examples.map(([k]) => k);
    for (const n of ["RegisterProvider", "UpdateProvider", "SetProviderStatus", "CreateStream", "UpdateStream", "TopUpStream", "SettleStreamRent", "CloseStream", "ActivateKeyGeneration", "gov", "transfer", "raw"]) {
      expect(names).toContain(n);
    }
  });

  it.each(examples.map(([k, doc]) => [k, doc]))("the %s example is valid against the schema and runs with every expectation holding", (_k, doc) => {
    expect(validate(schema, doc)).toBeNull();
    const r = runScenario(parseScenario(doc));
    expect(r.failure).toBeNull();
    expect(r.document.blocks.length).toBeGreaterThan(0);
  });

  it("its table of instruction arguments lists exactly each …ArgsV1 struct's fields", () => {
    const rows = [...DOC.matchAll(/^\| `(\w+)` \| (\d) \| `(\w+ArgsV1)` \| (.*) \|$/gm)];
    expect(rows).toHaveLength(9);
    for (const [, , , args, fields] of rows) {
      const codec = (S as unknown as Record<string, { fields: ReadonlyArray<readonly [string, { optional?: boolean }]> }>)[args!]!;
      expect(fields, args).toBe(codec.fields.map(([k, c]) => `\`${k}\`${c.optional ? "?" : ""}`).join(", "));
    }
  });
});
