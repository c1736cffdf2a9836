// The codec's error types. DecodeError is the ONLY exception a decoder throws for any
// input bytes (fuzzed by scripts/fuzz-codec.ts); EncodeError and JsonValueError report
// an in-memory value or a JSON document that has no canonical encoding.

/** §17 `UnsupportedVersion`. */
export const UNSUPPORTED_VERSION_CODE = 3937;
/** Project code for every other canonical-decode failure (docs/reference/codec.md, D-0032). */
export const INVALID_ENCODING_CODE = 4000;

export type DecodeErrorKind =
  | "UnsupportedVersion" // a version byte other than 1 (code 3937)
  | "Truncated" // input ended inside a value
  | "TrailingBytes" // bytes left after the top-level value
  | "BoundExceeded" // a length or count above its bound (checked before allocation)
  | "InvalidTag" // unknown enum/option/bool/algorithm tag
  | "InvalidValue"; // a structurally impossible value (nonzero provider_epoch, bad URI, …)

export class DecodeError extends Error {
  override name = "DecodeError";
  /** 3937 for UnsupportedVersion, 4000 otherwise. */
  readonly code: number;

  constructor(
    readonly kind: DecodeErrorKind,
    /** Byte offset where the offending value starts. */
    readonly offset: number,
    /** Field path of the offending value, e.g. "args.endpoints[2].uri" ("" = the whole value). */
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${kind} at offset ${offset} (${path === "" ? "<root>" : path}): ${reason}`);
    this.code = kind === "UnsupportedVersion" ? UNSUPPORTED_VERSION_CODE : INVALID_ENCODING_CODE;
  }
}

/** An in-memory value that cannot be canonically encoded (out of range, wrong length, …). */
export class EncodeError extends Error {
  override name = "EncodeError";
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`cannot encode ${path === "" ? "<root>" : path}: ${reason}`);
  }
}

/** A JSON document that does not describe a value of the requested type. */
export class JsonValueError extends Error {
  override name = "JsonValueError";
  constructor(
    /** JSON path, e.g. "$.args.endpoints[0].uri". */
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${path}: ${reason}`);
  }
}
