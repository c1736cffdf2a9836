// The JSON Schema generator sees every registered type: each codec's JSON of any value is valid
// against the schema that codec describes (`jsonSchemaOf`), and a malformed document is not.
import { describe, expect, it } from "vitest";
import * as fc from "fast-check";
import { jsonSchemaOf } from "../../src/codec/core.js";
import { CODEC_NAMES, codecByName, codecs, toJson } from "../../src/codec/index.js";
import { validate } from "../scenario/json-schema.js";
import * as X from "./wire-samples.js";

describe("JSON Schema of every registered type", () => {
  it.each(CODEC_NAMES)("%s: the codec's JSON is valid against its schema", (name) => {
    const codec = codecByName(name)!;
    const { schema, defs } = jsonSchemaOf(codec);
    for (const v of fc.sample(codec.arbitrary(fc), { numRuns: 25, seed: 7 })) {
      expect(validate({ $defs: defs as never }, toJson(codec, v), schema as never)).toBeNull();
    }
  });

  it("a misspelled field or a wrong frame variant is refused by the schema", () => {
    const { schema, defs } = jsonSchemaOf(codecs.CbqsServerFrameV1 as never);
    const good = toJson(codecs.CbqsServerFrameV1, { type: "Error", body: X.errorFrame }) as { Error: Record<string, unknown> };
    expect(validate({ $defs: defs as never }, good, schema as never)).toBeNull();
    expect(validate({ $defs: defs as never }, { Error: { ...good.Error, mesage: "x" } }, schema as never)).not.toBeNull();
    expect(validate({ $defs: defs as never }, { Failure: good.Error }, schema as never)).not.toBeNull();
  });
});
