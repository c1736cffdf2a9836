// `cbqs-emulator/client`: the typed client of `cbqs node` (docs/guides/use-the-library.md "cbqs-emulator/client").
// The one public module of src/client/: what is not exported here is internal.
export { CLIENT_DEFAULTS, createClient, type Client, type ClientOptions, type WaitOptions } from "./client.js";
export {
  ClientError,
  ConnectionFailed,
  FeedBroken,
  Gone,
  InvalidArgument,
  MalformedAnswer,
  NodeError,
  NotFound,
  ProofInvalid,
  RateLimited,
  RequestAborted,
  RequestTimeout,
  VerificationError,
  WaitTimeout,
} from "./errors.js";
export { transferEnvelope, type Transfer } from "./envelopes.js";
export type * from "./types.js";
