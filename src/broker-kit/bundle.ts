// The bundle `cbqs verify-broker` reads (docs/reference/formats/broker-bundle.md): JSON lines, one
// `cbqs-broker-bundle/v1` header naming the stream, then one artifact a line in the order the
// broker issued them, each either in the codec's JSON mapping or as the hex of its canonical
// (§14) bytes — the two forms `cbqs decode` and `cbqs encode` convert between. Reading is
// bounded (file, line and artifact count) and strict: a line that does not decode is unusable
// input naming the line, never skipped.
import { MAX_BUFFERED_DOCUMENT_BYTES } from "../bounds.js";
import { fromHex, HexError, toHex } from "../bytes.js";
import { decode, encode, fromJson, toJson, type Codec } from "../codec/core.js";
import { DecodeError, EncodeError, JsonValueError } from "../codec/errors.js";
import { codecs } from "../codec/registry.js";
import type * as T from "../codec/types.js";
import type * as W from "../codec/wire-types.js";
import { JsonError, JsonParser, type JsonObject } from "../json/parse.js";
import { InputError, readFileBytes } from "../json/read.js";

export const BUNDLE_FORMAT = "cbqs-broker-bundle/v1";
/** One line: a RecordDeliveryV1 at the 5,242,880-byte frame bound is 10.5 MB of hex. */
export const MAX_BUNDLE_LINE_BYTES = 16 * 1024 * 1024;
export const MAX_BUNDLE_ARTIFACTS = 100_000;
/** The whole file (unpacked when gzip), held in memory. */
export const MAX_BUNDLE_BYTES = MAX_BUFFERED_DOCUMENT_BYTES;

export interface BundleLimits {
  lineBytes: number;
  artifacts: number;
}
export const BUNDLE_LIMITS: BundleLimits = { lineBytes: MAX_BUNDLE_LINE_BYTES, artifacts: MAX_BUNDLE_ARTIFACTS };

/** What each artifact type of a bundle holds (the codec's types). */
export interface ArtifactValues {
  StreamGrantV1: T.StreamGrantV1;
  SessionChallengeV1: W.SessionChallengeV1;
  SessionProofV1: T.SessionProofV1;
  SessionOpenedV1: W.SessionOpenedV1;
  AuthenticatedRequestV1: W.AuthenticatedRequestV1;
  CbqsResponseV1: W.CbqsResponseV1;
  RecordDeliveryV1: W.RecordDeliveryV1;
  AppendReceiptV1: T.AppendReceiptV1;
  DeliveryStateUpdateV1: W.DeliveryStateUpdateV1;
  GroupStateUpdateV1: W.GroupStateUpdateV1;
  BrokerEpochTransitionV1: T.BrokerEpochTransitionV1;
  CheckpointReceiptV1: T.CheckpointReceiptV1;
  StandardRetentionAnchorV1: T.StandardRetentionAnchorV1;
  GroupRetentionAnchorV1: T.GroupRetentionAnchorV1;
  FastRetentionAnchorV1: T.FastRetentionAnchorV1;
  CbqsSnapshotManifestV1: W.CbqsSnapshotManifestV1;
}
export type ArtifactType = keyof ArtifactValues;

/** The types a bundle may hold, in the order docs/guides/verify-a-broker.md lists them. */
export const ARTIFACT_TYPES: readonly ArtifactType[] = [
  "StreamGrantV1",
  "SessionChallengeV1",
  "SessionProofV1",
  "SessionOpenedV1",
  "AuthenticatedRequestV1",
  "CbqsResponseV1",
  "RecordDeliveryV1",
  "AppendReceiptV1",
  "DeliveryStateUpdateV1",
  "GroupStateUpdateV1",
  "BrokerEpochTransitionV1",
  "CheckpointReceiptV1",
  "StandardRetentionAnchorV1",
  "GroupRetentionAnchorV1",
  "FastRetentionAnchorV1",
  "CbqsSnapshotManifestV1",
];

/** One artifact and the line it came from (1-based; the header is line 1). */
export type Artifact = { [K in ArtifactType]: { line: number; type: K; value: ArtifactValues[K] } }[ArtifactType];
/** An artifact before it has a line: what the reference signer produces. */
export type ArtifactOf = { [K in ArtifactType]: { type: K; value: ArtifactValues[K] } }[ArtifactType];

export interface Bundle {
  streamId: Uint8Array;
  artifacts: Artifact[];
}

const codecOf = (type: ArtifactType): Codec<unknown> => codecs[type] as Codec<unknown>;
const isArtifactType = (name: unknown): name is ArtifactType => typeof name === "string" && (ARTIFACT_TYPES as readonly string[]).includes(name);

/** A problem on one line: `cbqs: error: <file>: line <n>: <path>: <reason>`. */
function lineError(file: string, line: number, path: string, reason: string): InputError {
  return new InputError(file, `line ${line}${path === "" ? "" : `: ${path}`}`, reason);
}

function parseLine(file: string, line: number, bytes: Uint8Array): JsonObject {
  // No bound of its own: parseBundle has held the line to limits.lineBytes, and it is fed whole.
  const parser = new JsonParser();
  let json;
  try {
    parser.feed(bytes);
    json = parser.end();
  } catch (err) {
    if (err instanceof JsonError) throw lineError(file, line, err.path, err.reason);
    throw err;
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) throw lineError(file, line, "$", "expected a JSON object");
  return json;
}

/** `o` has exactly the members of one of `shapes` (each listed sorted). */
function exactKeys(file: string, line: number, o: JsonObject, shapes: readonly string[][]): void {
  const keys = Object.keys(o).sort();
  if (!shapes.some((a) => a.length === keys.length && a.every((k, i) => k === keys[i]))) {
    const wanted = shapes.map((a) => a.map((k) => `"${k}"`).join(" and ")).join(", or ");
    throw lineError(file, line, "$", `expected the members ${wanted} (got ${keys.map((k) => `"${k.slice(0, 40)}"`).join(", ") || "none"})`);
  }
}

function parseHeader(file: string, bytes: Uint8Array): Uint8Array {
  const o = parseLine(file, 1, bytes);
  exactKeys(file, 1, o, [["format", "stream_id"]]);
  if (o["format"] !== BUNDLE_FORMAT) throw lineError(file, 1, "$.format", `expected "${BUNDLE_FORMAT}" (the first line is the bundle's header)`);
  const id = o["stream_id"];
  try {
    return fromHex(id as string, 32, "stream_id");
  } catch (err) {
    if (err instanceof HexError) throw lineError(file, 1, "$.stream_id", err.message);
    throw err;
  }
}

function parseArtifact(file: string, line: number, bytes: Uint8Array): Artifact {
  const o = parseLine(file, line, bytes);
  exactKeys(file, line, o, [["type", "value"], ["hex", "type"]]);
  const type = o["type"];
  if (!isArtifactType(type)) {
    throw lineError(file, line, "$.type", `${typeof type === "string" ? `"${type.slice(0, 80)}"` : "a non-string"} is not an artifact type of a bundle (${ARTIFACT_TYPES.join(", ")})`);
  }
  const codec = codecOf(type);
  try {
    let value: unknown;
    if ("hex" in o) {
      const hex = o["hex"];
      if (typeof hex !== "string") throw lineError(file, line, "$.hex", "expected a 0x-prefixed hex string");
      value = decode(codec, fromHex(hex, undefined, "hex"));
    } else {
      value = fromJson(codec, o["value"]);
      encode(codec, value); // the value must have a canonical encoding, as a decoded one does
    }
    return { line, type, value } as Artifact;
  } catch (err) {
    if (err instanceof HexError) throw lineError(file, line, "$.hex", err.message);
    if (err instanceof JsonValueError) throw lineError(file, line, `$.value${err.path.slice(1)}`, err.reason);
    if (err instanceof DecodeError) throw lineError(file, line, "$.hex", `the ${type} does not decode: ${err.message}`);
    if (err instanceof EncodeError) throw lineError(file, line, "$.value", `the ${type} has no canonical encoding: ${err.message}`);
    throw err;
  }
}

/** A bundle from its bytes (the whole file); `file` names it in errors. */
export function parseBundle(bytes: Uint8Array, file: string, limits: BundleLimits = BUNDLE_LIMITS): Bundle {
  let start = 0;
  let line = 0;
  let streamId: Uint8Array | undefined;
  const artifacts: Artifact[] = [];
  while (start < bytes.length) {
    line++;
    let end = bytes.indexOf(0x0a, start);
    if (end < 0) end = bytes.length;
    if (end - start > limits.lineBytes) throw lineError(file, line, "", `more than the ${limits.lineBytes}-byte bound of a line`);
    const text = bytes.subarray(start, end);
    start = end + 1;
    if (text.length === 0 || (text.length === 1 && text[0] === 0x0d)) throw lineError(file, line, "", "an empty line (every line is the header or one artifact)");
    if (streamId === undefined) {
      streamId = parseHeader(file, text);
      continue;
    }
    if (artifacts.length === limits.artifacts) throw lineError(file, line, "", `more than the bound of ${limits.artifacts} artifacts in one bundle`);
    artifacts.push(parseArtifact(file, line, text));
  }
  if (streamId === undefined) throw new InputError(file, "", `empty: a bundle starts with its {"format": "${BUNDLE_FORMAT}", "stream_id": …} header line`);
  // A broker's export step that wrote nothing must not pass a CI job: nothing verified is no verdict.
  if (artifacts.length === 0) throw new InputError(file, "", "no artifacts: a bundle holds its header and at least one artifact, so there is nothing to verify");
  return { streamId, artifacts };
}

/** The bundle in `file` (`-` for the standard input; gzip unpacked). */
export function readBundle(file: string): Bundle {
  return parseBundle(readFileBytes(file, MAX_BUNDLE_BYTES), file);
}

/** The header line of a bundle of `streamId`. */
export function bundleHeader(streamId: Uint8Array): string {
  return JSON.stringify({ format: BUNDLE_FORMAT, stream_id: toHex(streamId) });
}

/** One artifact line: the JSON mapping, or the hex of the canonical bytes. */
export function artifactLine(artifact: ArtifactOf, form: "json" | "hex"): string {
  const codec = codecOf(artifact.type);
  return form === "json"
    ? JSON.stringify({ type: artifact.type, value: toJson(codec, artifact.value) })
    : JSON.stringify({ type: artifact.type, hex: toHex(encode(codec, artifact.value)) });
}

/** A bundle's text: the header, then one line per artifact, each ending in a newline. */
export function bundleText(streamId: Uint8Array, artifacts: readonly ArtifactOf[], form: "json" | "hex" = "json"): string {
  return [bundleHeader(streamId), ...artifacts.map((a) => artifactLine(a, form))].map((l) => l + "\n").join("");
}
