// `cbqs-emulator/client` (docs/api.md): a client for `cbqs node` that verifies what it is told.
export * from "../client/index.js";
