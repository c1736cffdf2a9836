// `cbqs-emulator/client` (docs/guides/use-the-library.md): a client for `cbqs node` that verifies what it is told.
export * from "../client/index.js";
