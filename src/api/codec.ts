// `cbqs-emulator/codec` (docs/guides/use-the-library.md): the canonical CIP-39 §14 codec — every consensus type,
// `encode`/`decode`, the JSON mapping, signing bytes, digests and derivations.
export * from "../codec/index.js";
// Types the signatures above name.
export type { FastCheck, Arbitrary, JsonSchema, SchemaDefs, StructCodec, Reader, Writer } from "../codec/core.js";
