// The one strict JSON reader (src/json/parse.ts): same values as JSON.parse on every
// document it accepts, in any chunking; refusals with JSON paths where JSON.parse is lenient.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_DOCUMENT_BYTES, MAX_DUMP_ENTRIES, MAX_JSON_DEPTH, MAX_JSON_STRING_BYTES } from "../../src/bounds.js";
import { dumpEntry } from "../../state/kv/dump.js";
import { accountKey } from "../../state/kv/keys.js";
import { encodeStateValue } from "../../state/kv/value.js";
import { JsonError, JsonParser, parseJson, valuesFor, type Json } from "../../src/json/parse.js";

/** The repository's JSON documents: the corpus, the scenarios, the gas vectors. */
const documents = (): string[] => [
  ...readdirSync("fixtures/corpus").map((f) => join("fixtures/corpus", f)),
  ...readdirSync("fixtures/scenarios").map((f) => join("fixtures/scenarios", f)),
  "gas-vectors/cip-39-gas-vectors-v1.json",
];

/** Strings JSON.stringify writes as UTF-8 faithfully (no lone surrogates). */
const wellFormed = (s: string): boolean => Buffer.from(s, "utf8").toString("utf8") === s;

/** Values our formats use: no floats, no negatives, unique keys (fc.dictionary). */
const value: fc.Arbitrary<Json> = fc.letrec<{ v: Json }>((tie) => ({
  v: fc.oneof(
    { depthSize: "small" },
    fc.constant(null),
    fc.boolean(),
    fc.nat({ max: Number.MAX_SAFE_INTEGER }),
    fc.string({ unit: "binary" }).filter(wellFormed),
    fc.array(tie("v"), { maxLength: 5 }),
    fc.dictionary(fc.string({ unit: "binary" }).filter(wellFormed), tie("v"), { maxKeys: 5 }),
  ),
})).v;

function parseInChunks(bytes: Uint8Array, cuts: number[]): Json {
  const p = new JsonParser();
  let from = 0;
  for (const cut of [...cuts.map((c) => c % (bytes.length + 1))].sort((a, b) => a - b)) {
    p.feed(bytes.subarray(from, Math.max(from, cut)));
    from = Math.max(from, cut);
  }
  p.feed(bytes.subarray(from));
  return p.end();
}

const errorOf = (text: string | Uint8Array): JsonError => {
  try {
    parseJson(text);
  } catch (err) {
    if (err instanceof JsonError) return err;
    throw err;
  }
  throw new Error("expected a JsonError");
};

describe("strict JSON reader: what JSON.parse accepts of our value space, it reads the same", () => {
  it("equals JSON.parse on random documents, whitespace and escapes, cut into chunks anywhere", () => {
    fc.assert(
      fc.property(value, fc.boolean(), fc.array(fc.nat(), { maxLength: 6 }), (v, pretty, cuts) => {
        const text = JSON.stringify(v, null, pretty ? 2 : undefined);
        const bytes = Buffer.from(text, "utf8");
        expect(parseInChunks(bytes, cuts)).toEqual(JSON.parse(text));
      }),
      { numRuns: 400 },
    );
  });

  it("reads every document of the repository (fixtures, scenarios, gas vectors) as JSON.parse does", () => {
    for (const f of documents()) {
      const text = readFileSync(f, "utf8");
      expect(parseJson(text), f).toEqual(JSON.parse(text));
    }
  });

  it('"__proto__" is an own key holding data, never the prototype', () => {
    const v = parseJson('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(v)).toBe(Object.prototype);
    expect(Object.keys(v)).toEqual(["__proto__", "a"]);
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
    expect(() => parseJson('{"__proto__": 1, "__proto__": 2}')).toThrow(/\$\.__proto__: duplicate key/);
  });

  it("a BOM inside a string is kept (it is part of the value)", () => {
    expect(parseJson('{"k": "\ufeffx"}')).toEqual({ k: "\ufeffx" });
  });
});

describe("strict JSON reader: refusals, each naming the JSON path", () => {
  it("a duplicate key at any depth (JSON.parse silently keeps the last)", () => {
    const text = '{"blocks": [{}, {}, {}, {"receipts": [{"status": "ok", "status": "rejected"}]}]}';
    expect(JSON.parse(text)).toBeTruthy();
    const err = errorOf(text);
    expect(err.path).toBe("$.blocks[3].receipts[0].status");
    expect(err.message).toMatch(/^\$\.blocks\[3\]\.receipts\[0\]\.status: duplicate key/);
  });

  it("numbers other than unsigned safe integers: fraction, exponent, sign, beyond 2^53 - 1", () => {
    for (const n of ["1.0", "1e2", "1E+2", "-1", "-0", "9007199254740992"]) {
      expect(errorOf(`{"n": ${n}}`).reason, n).toMatch(/is not an unsigned integer up to 2\^53 - 1/);
    }
    expect(parseJson("[0, 9007199254740991]")).toEqual([0, 9007199254740991]);
    expect(errorOf("[01]").reason).toMatch(/not valid JSON/);
  });

  it("a 100,000-digit number is echoed cut, with its length", () => {
    const err = errorOf(`{"n": ${"9".repeat(100_000)}}`);
    expect(err.message.length).toBeLessThan(300);
    expect(err.message).toMatch(/\(100000 characters\)/);
  });

  it("a string longer than the string bound is refused while it is read, across chunks, naming its path", () => {
    const p = new JsonParser({ maxStringBytes: 1000 });
    p.feed(Buffer.from(`{"a": {"b": "${"x".repeat(600)}`));
    expect(() => p.feed(Buffer.from("x".repeat(600)))).toThrow(/\$\.a\.b: a string longer than the 1000-byte bound/);
    const q = new JsonParser({ maxStringBytes: 1000 });
    q.feed(Buffer.from(`{"a": "${"x".repeat(500)}`));
    q.feed(Buffer.from(`${"x".repeat(500)}"}`));
    expect(q.end()).toEqual({ a: "x".repeat(1000) });
    // The bound admits the largest string this project writes: an envelope in hex (about 2 MB).
    expect(MAX_JSON_STRING_BYTES).toBeGreaterThan(2 * 1_049_600 + 2);
  });

  it("the document bound admits a dump of MAX_DUMP_ENTRIES decoded account entries, as state dump writes them", () => {
    const address = new Uint8Array(20).fill(0xff);
    const entry = dumpEntry(accountKey(address), encodeStateValue({ kind: "Account", nonce: 2n ** 64n - 1n, balance: 2n ** 64n - 1n }));
    // The streaming writer indents an entry by 4 and separates entries with ",\n    ".
    const bytes = JSON.stringify(entry, null, 2).replace(/\n/g, "\n    ").length + 6;
    expect(bytes * MAX_DUMP_ENTRIES).toBeLessThanOrEqual(MAX_DOCUMENT_BYTES);
  });

  it("maxValues counts every value once — scalars, arrays, objects and each member's value — and refuses the one past it", () => {
    // The object, its two members' values (the array and null) and the array's two elements: 5 values.
    const text = '{"a":[1,"x"],"b":null}';
    expect(parseJson(text, { maxValues: 5 })).toEqual(JSON.parse(text));
    expect(() => parseJson(text, { maxValues: 4 })).toThrow(new JsonError("$", "more values than a document of its size may hold (at most 4)"));
  });

  it("valuesFor: one value per 16 bytes of an answer, at least 4,096; our own largest documents hold far fewer", () => {
    expect([valuesFor(0), valuesFor(65_536), valuesFor(65_537 * 16)]).toEqual([4096, 4096, 65_537]);
    // A text of empty arrays (3 bytes a value) is refused at a sixteenth of its size's values…
    const tiny = `[${"[],".repeat(100_000)}[]]`;
    expect(() => parseJson(tiny, { maxValues: valuesFor(tiny.length) })).toThrow(/more values than a document of its size may hold/);
    // …and every document of the repository passes at its own size's bound.
    for (const f of documents()) {
      const bytes = readFileSync(f);
      expect(() => parseJson(bytes, { maxValues: valuesFor(bytes.length) }), f).not.toThrow();
    }
  });

  it("nesting beyond the bound is refused iteratively: 100,000 open arrays are one error, not a stack overflow", () => {
    const err = errorOf("[".repeat(100_000));
    expect(err.reason).toMatch(new RegExp(`nesting deeper than ${MAX_JSON_DEPTH} levels`));
    expect(err.message.length).toBeLessThan(300);
    expect(() => parseJson("[".repeat(MAX_JSON_DEPTH) + "]".repeat(MAX_JSON_DEPTH))).not.toThrow();
  });

  it("a byte-order mark before the document, invalid UTF-8, a lone surrogate escape, a raw control character", () => {
    expect(errorOf("\ufeff{}").reason).toMatch(/byte-order mark/);
    expect(errorOf(Uint8Array.of(0x22, 0xc0, 0xaf, 0x22)).reason).toMatch(/invalid UTF-8/);
    expect(errorOf('"\\ud800"').reason).toMatch(/lone surrogate/);
    expect(errorOf('"\\udc00x"').reason).toMatch(/lone surrogate/);
    expect(parseJson('"\\ud83d\\ude00"')).toBe("😀");
    expect(errorOf('"a\tb"').reason).toMatch(/control character 0x09/);
  });

  it("syntax errors say where: trailing commas, missing colons, content after the document, an empty file", () => {
    expect(errorOf("[1,]").message).toMatch(/^\$\[1\]: not valid JSON: expected a value, found '\]'/);
    expect(errorOf('{"k" 1}').message).toMatch(/^\$\.k: not valid JSON: expected ':'/);
    expect(errorOf("{} {}").message).toMatch(/after the document's value/);
    expect(errorOf("").message).toMatch(/empty document/);
    expect(errorOf('{"a": [1, 2').message).toMatch(/^\$\.a: not valid JSON: unexpected end of input/);
  });
});

describe("strict JSON reader: streaming", () => {
  it("hands over the named array's elements one at a time and keeps none of them", () => {
    const seen: Array<[number, Json]> = [];
    const p = new JsonParser({
      streams: {
        "$.entries": (e, i, root) => {
          expect((root as Record<string, Json>)["format"]).toBe("f");
          seen.push([i, e]);
          return true;
        },
      },
    });
    p.feed(Buffer.from('{"format": "f", "entries": [{"k": 1}, {"k": 2}], "tail": [3]}'));
    expect(p.end()).toEqual({ format: "f", entries: [], tail: [3] });
    expect(seen).toEqual([
      [0, { k: 1 }],
      [1, { k: 2 }],
    ]);
  });

  it("an element the callback declines stays in the array", () => {
    const p = new JsonParser({ streams: { $: (e) => e === 1 } });
    p.feed(Buffer.from("[1, 2, 1, 3]"));
    expect(p.end()).toEqual([2, 3]);
  });
});
