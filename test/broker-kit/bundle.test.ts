// the bundle format (docs/reference/formats/broker-bundle.md): a header line, then one artifact a
// line in the codec's JSON mapping or as hex of its canonical bytes — both decode to the same
// values — read within bounds, and every unusable line refused naming the line.
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { toHex } from "../../src/bytes.js";
import { ARTIFACT_TYPES, BUNDLE_FORMAT, BUNDLE_LIMITS, MAX_BUNDLE_ARTIFACTS, MAX_BUNDLE_LINE_BYTES, artifactLine, bundleHeader, bundleText, parseBundle, readBundle } from "../../src/broker-kit/bundle.js";
import { kitBundle } from "../../src/broker-kit/kit.js";
import { encode, toJson } from "../../src/codec/core.js";
import { codecs } from "../../src/codec/registry.js";
import { InputError } from "../../src/json/read.js";
import { kitChain, tempFiles } from "./kit.js";

const STREAM = new Uint8Array(32).fill(0x51);
const header = bundleHeader(STREAM);
const parse = (text: string, limits = BUNDLE_LIMITS) => parseBundle(Buffer.from(text), "b.jsonl", limits);
const refusal = (text: string | Uint8Array, limits = BUNDLE_LIMITS): string => {
  try {
    parseBundle(typeof text === "string" ? Buffer.from(text) : text, "b.jsonl", limits);
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    return (err as Error).message;
  }
  throw new Error("the bundle was accepted");
};

async function standard() {
  const { chain } = await kitChain();
  return kitBundle(chain, "standard");
}

describe("bundle format", () => {
  it("the JSON and the hex form of a bundle decode to the same artifacts, byte for byte, each on its own line", async () => {
    const { streamId, artifacts } = await standard();
    const json = parseBundle(Buffer.from(bundleText(streamId, artifacts, "json")), "j");
    const hex = parseBundle(Buffer.from(bundleText(streamId, artifacts, "hex")), "h");
    expect(toHex(json.streamId)).toBe(toHex(streamId));
    expect(json.artifacts.map((a) => a.line)).toEqual(artifacts.map((_, i) => i + 2));
    expect(hex.artifacts.map((a) => [a.type, toHex(encode(codecs[a.type] as never, a.value as never))])).toEqual(json.artifacts.map((a) => [a.type, toHex(encode(codecs[a.type] as never, a.value as never))]));
    expect([...new Set(json.artifacts.map((a) => a.type))].sort()).toEqual(
      ["AuthenticatedRequestV1", "CbqsResponseV1", "CbqsSnapshotManifestV1", "GroupRetentionAnchorV1", "RecordDeliveryV1", "SessionChallengeV1", "SessionOpenedV1", "SessionProofV1", "StandardRetentionAnchorV1", "StreamGrantV1"],
    );
  });

  it("one bundle may mix the two forms, and a bundle file may be gzipped", async () => {
    const { streamId, artifacts } = await standard();
    const lines = bundleText(streamId, artifacts, "json").split("\n");
    const hexLines = bundleText(streamId, artifacts, "hex").split("\n");
    const mixed = lines.map((l, i) => (i % 2 === 0 ? l : hexLines[i]!)).join("\n");
    const files = tempFiles();
    const gz = files.write("b.jsonl.gz", gzipSync(mixed));
    const a = readBundle(gz);
    const b = parse(lines.join("\n"));
    expect(a.artifacts.map((x) => toHex(encode(codecs[x.type] as never, x.value as never)))).toEqual(b.artifacts.map((x) => toHex(encode(codecs[x.type] as never, x.value as never))));
  });

  it("the header: first, exactly {format, stream_id}; an empty file, a header alone or a file of another format is refused", () => {
    expect(refusal(`${header}\n`)).toBe("b.jsonl: no artifacts: a bundle holds its header and at least one artifact, so there is nothing to verify");
    expect(refusal(header)).toBe("b.jsonl: no artifacts: a bundle holds its header and at least one artifact, so there is nothing to verify");
    expect(refusal("")).toMatch(/^b\.jsonl: empty: a bundle starts with its \{"format": "cbqs-broker-bundle\/v1"/);
    expect(refusal(`{"format": "cbqs-fixture/v1", "stream_id": "${toHex(STREAM)}"}\n`)).toBe(`b.jsonl: line 1: $.format: expected "${BUNDLE_FORMAT}" (the first line is the bundle's header)`);
    expect(refusal(`{"format": "${BUNDLE_FORMAT}"}\n`)).toMatch(/^b\.jsonl: line 1: \$: expected the members "format" and "stream_id" \(got "format"\)$/);
    expect(refusal(`{"format": "${BUNDLE_FORMAT}", "stream_id": "0x51"}\n`)).toBe("b.jsonl: line 1: $.stream_id: stream_id: expected 32 bytes, got 1");
  });

  it("an artifact line: a known type with a value or a hex, not both, decoding strictly; each refusal names the line and the path", () => {
    const at = (line: string): string => refusal(`${header}\n${line}\n`);
    expect(at("not json")).toMatch(/^b\.jsonl: line 2: \$: not valid JSON/);
    expect(at("[1]")).toBe("b.jsonl: line 2: $: expected a JSON object");
    expect(at('{"type": "StreamGrantV1"}')).toMatch(/^b\.jsonl: line 2: \$: expected the members "type" and "value", or "hex" and "type" \(got "type"\)$/);
    expect(at('{"type": "StreamGrantV1", "value": {}, "hex": "0x"}')).toMatch(/expected the members/);
    expect(at('{"type": "CbqsInstructionV1", "hex": "0x01"}')).toMatch(/^b\.jsonl: line 2: \$\.type: "CbqsInstructionV1" is not an artifact type of a bundle \(StreamGrantV1, SessionChallengeV1, /);
    expect(at('{"type": "CheckpointReceiptV1", "hex": "0x01"}')).toMatch(/^b\.jsonl: line 2: \$\.hex: the CheckpointReceiptV1 does not decode: Truncated at offset 1/);
    expect(at('{"type": "CheckpointReceiptV1", "hex": "0xzz"}')).toBe("b.jsonl: line 2: $.hex: hex: expected 0x-prefixed hex with an even number of digits");
    expect(at('{"type": "CheckpointReceiptV1", "value": {"context": 1}}')).toMatch(/^b\.jsonl: line 2: \$\.value\.context: /);
    expect(refusal(`${header}\n\n`)).toBe("b.jsonl: line 2: an empty line (every line is the header or one artifact)");
    expect(ARTIFACT_TYPES).toHaveLength(16);
  });

  it("a structural rule of the codec is the decoder's: an artifact breaking one is unusable input, not a finding", async () => {
    const { streamId, artifacts } = await standard();
    const lines = bundleText(streamId, artifacts, "json").split("\n");
    const i = lines.findIndex((l) => l.startsWith('{"type":"AuthenticatedRequestV1"'));
    lines[i] = lines[i]!.replace(/"body_hash":"0x[0-9a-f]{2}/, '"body_hash":"0x00');
    expect(refusal(lines.join("\n"))).toMatch(new RegExp(`^b\\.jsonl: line ${i + 1}: \\$\\.value.*body_hash`));
  });

  it("bounds: a line of more than 16 MiB is refused, naming the line, before it is parsed", () => {
    expect([MAX_BUNDLE_LINE_BYTES, MAX_BUNDLE_ARTIFACTS]).toEqual([16 * 1024 * 1024, 100_000]);
    const long = Buffer.alloc(MAX_BUNDLE_LINE_BYTES + 1, 0x20);
    expect(refusal(Buffer.concat([Buffer.from(header + "\n"), long]))).toBe(`b.jsonl: line 2: more than the ${MAX_BUNDLE_LINE_BYTES}-byte bound of a line`);
    // A line of exactly the bound is read (and, here, refused for what it holds, not its length).
    expect(refusal(Buffer.concat([Buffer.from(header + "\n"), long.subarray(1)]))).toMatch(/^b\.jsonl: line 2: \$: not valid JSON/);
  });

  it("the artifact bound (100,000) counts artifacts, not the header: the (bound + 1)-th artifact is refused on its own line", async () => {
    const { streamId, artifacts } = await standard();
    const text = bundleText(streamId, artifacts.slice(0, 3), "hex");
    expect(parse(text, { ...BUNDLE_LIMITS, artifacts: 3 }).artifacts).toHaveLength(3);
    expect(refusal(text, { ...BUNDLE_LIMITS, artifacts: 2 })).toBe("b.jsonl: line 4: more than the bound of 2 artifacts in one bundle");
  });

  it("the header's members are exactly format and stream_id: another member of the same count, an extra one or none is refused listing what was there, each name cut at 40 characters", () => {
    const id = toHex(STREAM);
    expect(refusal(`{"format": "${BUNDLE_FORMAT}", "streamid": "${id}"}\n`)).toBe('b.jsonl: line 1: $: expected the members "format" and "stream_id" (got "format", "streamid")');
    expect(refusal(`{"format": "${BUNDLE_FORMAT}", "stream_id": "${id}", "${"k".repeat(50)}": 1}\n`)).toBe(
      `b.jsonl: line 1: $: expected the members "format" and "stream_id" (got "format", "${"k".repeat(40)}", "stream_id")`,
    );
    expect(refusal("{}\n")).toBe('b.jsonl: line 1: $: expected the members "format" and "stream_id" (got none)');
    expect(refusal(`{"format": "${BUNDLE_FORMAT}", "stream_id": 5}\n`)).toBe("b.jsonl: line 1: $.stream_id: stream_id: expected 0x-prefixed hex with an even number of digits");
  });

  it("a line that is JSON but not an object — null, a number, a string — is refused as such", () => {
    for (const line of ["null", "1", '"s"']) expect(refusal(`${line}\n`), line).toBe("b.jsonl: line 1: $: expected a JSON object");
    expect(refusal(`${header}\n1\n`)).toBe("b.jsonl: line 2: $: expected a JSON object");
  });

  it("a JSON syntax error is named at its path inside the line", () => {
    expect(refusal(`${header}\n{"type": "StreamGrantV1", "type": "x"}\n`)).toBe("b.jsonl: line 2: $.type: duplicate key (a key may appear only once in an object) at byte 31");
    expect(refusal(`${header}\n{"type": [1,}\n`)).toBe("b.jsonl: line 2: $.type[1]: not valid JSON: expected a value, found '}' at byte 12");
  });

  it("an artifact's type: a non-string, or a long unknown name cut at 80 characters, is refused listing the 16 types", () => {
    const list = ARTIFACT_TYPES.join(", ");
    expect(refusal(`${header}\n{"type": 5, "hex": "0x"}\n`)).toBe(`b.jsonl: line 2: $.type: a non-string is not an artifact type of a bundle (${list})`);
    expect(refusal(`${header}\n{"type": "${"T".repeat(100)}", "hex": "0x"}\n`)).toBe(`b.jsonl: line 2: $.type: "${"T".repeat(80)}" is not an artifact type of a bundle (${list})`);
  });

  it("a hex form whose hex is not a string, and a JSON form whose value is not an object, are refused at $.hex and $.value", () => {
    expect(refusal(`${header}\n{"type": "CheckpointReceiptV1", "hex": 5}\n`)).toBe("b.jsonl: line 2: $.hex: expected a 0x-prefixed hex string");
    expect(refusal(`${header}\n{"type": "CheckpointReceiptV1", "value": 5}\n`)).toMatch(/^b\.jsonl: line 2: \$\.value: \S/);
  });

  it("line ends: CRLF lines are read; a line of a lone CR, or an empty first line, is an empty line; a one-byte line is read", async () => {
    const { streamId, artifacts } = await standard();
    const crlf = bundleText(streamId, artifacts.slice(0, 2), "hex").replaceAll("\n", "\r\n");
    expect(parse(crlf).artifacts.map((a) => [a.line, a.type])).toEqual([[2, artifacts[0]!.type], [3, artifacts[1]!.type]]);
    // A line may start with a CR too: JSON whitespace.
    expect(parse(`\r${crlf}`).artifacts).toHaveLength(2);
    expect(refusal(`${header}\r\n\r\n`)).toBe("b.jsonl: line 2: an empty line (every line is the header or one artifact)");
    expect(refusal(`\n${header}\n`)).toBe("b.jsonl: line 1: an empty line (every line is the header or one artifact)");
    expect(refusal(`${header}\n7`)).toBe("b.jsonl: line 2: $: expected a JSON object");
  });

  it("an artifact line in each form: the JSON mapping under value, or the hex of the canonical bytes under hex; a bundle's text is JSON lines by default", async () => {
    const { streamId, artifacts } = await standard();
    const a = artifacts[0]!;
    const codec = codecs[a.type] as never;
    expect(artifactLine(a, "hex")).toBe(JSON.stringify({ type: a.type, hex: toHex(encode(codec, a.value as never)) }));
    expect(JSON.parse(artifactLine(a, "json"))).toEqual({ type: a.type, value: JSON.parse(JSON.stringify(toJson(codec, a.value as never))) });
    expect(bundleText(streamId, [a])).toBe(`${bundleHeader(streamId)}\n${artifactLine(a, "json")}\n`);
    expect(bundleText(streamId, [a], "hex")).toBe(`${bundleHeader(streamId)}\n${artifactLine(a, "hex")}\n`);
    expect(bundleHeader(streamId)).toBe(`{"format":"${BUNDLE_FORMAT}","stream_id":"${toHex(streamId)}"}`);
  });
});
