// The engine's fast paths, chosen by whoever runs a chain (docs/engineering/performance.md "Fast paths";
// D-0169 "Fast paths: the spec path and the seams"). The spec path is what the
// handlers read like; each fast path gives the same answer on every input, which
// test/harness/fast-paths.test.ts requires of whole runs (roots, receipts, traces, gas).
import { ed25519VerifyStrict, verifyStrictDetailed } from "../crypto/ed25519.js";
import { BoundsMemo } from "./bounds-memo.js";
import type { SignatureVerifier } from "./meter.js";

/** Which fast paths a run takes (each named by its seam). */
export interface FastPathChoice {
  /** src/crypto/hash.ts: hash-wasm, or @noble/hashes (process-wide: selectHashing). */
  readonly hashWasm: boolean;
  /** src/crypto/ed25519-native.ts: OpenSSL for the inputs it decides, or dalek's checks in pure JS for all (§9.1). */
  readonly opensslEd25519: boolean;
  /** src/engine/bounds-memo.ts: the decoded governance bounds kept while their stored bytes repeat. */
  readonly boundsMemo: boolean;
  /**
   * src/harness/replay.ts replayPipelined: fixture replays merkleize on a worker thread
   * (state/commitment/worker-commitment.ts) while the next block executes with speculative
   * signature checks (src/harness/signatures.ts). One seam: the three only work together.
   */
  readonly pipelinedReplay: boolean;
}

export const ALL_FAST_PATHS: Readonly<FastPathChoice> = { hashWasm: true, opensslEd25519: true, boundsMemo: true, pipelinedReplay: true };
export const SPEC_ONLY: Readonly<FastPathChoice> = { hashWasm: false, opensslEd25519: false, boundsMemo: false, pipelinedReplay: false };

/** The part of a choice a chain itself takes (hashing is process-wide; pipelining is the replay's). */
export type EngineChoice = Pick<FastPathChoice, "opensslEd25519" | "boundsMemo">;

/** What one chain runs with: its instance state, created for it. */
export interface EnginePaths {
  /** §9.1 strict Ed25519 for every charged verification. */
  readonly verifySignature: SignatureVerifier;
  /** null: the bounds are decoded on every read (§18.1). */
  readonly boundsMemo: BoundsMemo | null;
}

/** §9.1, the reference alone: ed25519-dalek 2.2 `verify_strict` in pure JS. */
export const verifyStrictReference: SignatureVerifier = (publicKey, message, signature) => verifyStrictDetailed(publicKey, message, signature).valid;

/** A new chain's paths; `verifySignature` replaces the choice's verifier (a pipelined replay's speculative one). */
export function enginePaths(choice: EngineChoice, verifySignature?: SignatureVerifier): EnginePaths {
  return {
    verifySignature: verifySignature ?? (choice.opensslEd25519 ? ed25519VerifyStrict : verifyStrictReference),
    boundsMemo: choice.boundsMemo ? new BoundsMemo() : null,
  };
}
