// Speculative signature checks for the pipelined replay (docs/performance.md "Pipelined
// replay"): the engine's Ed25519 verifier answers "valid" at once and posts the check to a ring
// the commit worker serves between its jobs (src/crypto/signature-ring.ts), so the main thread
// keeps executing. Before the block commits, every answer of the block is confirmed
// (SignatureCheckedStore) — checks the worker has not started are verified then and there; if one
// was wrong, the commit is refused — nothing of the block reaches the state — and the harness
// executes the block again with the real verifier. So every committed block was executed with
// exactly the answers ed25519VerifyStrict gives, whatever the threads' timing.
import { ed25519VerifyStrict } from "../crypto/ed25519.js";
import { SignatureRing, type SignatureRingShared } from "../crypto/signature-ring.js";
import type { SignatureVerifier } from "../engine/meter.js";
import type { BlockBatch, CommitResult, StateStore } from "../../state/interface.js";
import { ForwardingStore } from "../../state/forwarding.js";

/** Thrown by SignatureCheckedStore.commitBlock: a speculative answer of this block was wrong. */
export class SpeculationFailed extends Error {
  override name = "SpeculationFailed";
}

export class SpeculativeSignatures {
  private readonly ring: SignatureRing;
  /** Invalid verdicts before this block's checks. */
  private invalidBefore = 0;

  /** `wake` tells the thread serving `shared` that a check is waiting. */
  constructor(shared: SignatureRingShared, wake: () => void) {
    this.ring = new SignatureRing(shared, wake);
  }

  /** The engine's verifier: "valid" now, checked before the block commits. */
  readonly verify: SignatureVerifier = (publicKey, message, signature) =>
    this.ring.post(publicKey, message, signature) || ed25519VerifyStrict(publicKey, message, signature);

  /** Starts a block's execution: its verdicts are judged from here on. */
  beginBlock(): void {
    this.ring.verdicts(this.ring.size);
    this.invalidBefore = this.ring.invalid;
  }

  /** Every check posted so far, done; true when one since beginBlock was invalid. */
  anyInvalid(): boolean {
    this.ring.verdicts(this.ring.size);
    return this.ring.invalid > this.invalidBefore;
  }
}

/** A store that refuses to commit a block whose speculative signature answers were not all right. */
export class SignatureCheckedStore extends ForwardingStore {
  constructor(
    inner: StateStore,
    private readonly signatures: SpeculativeSignatures,
  ) {
    super(inner);
  }

  override commitBlock(batch: BlockBatch): CommitResult {
    if (this.signatures.anyInvalid()) throw new SpeculationFailed("a signature answered valid ahead of its check is invalid");
    return super.commitBlock(batch);
  }
}
