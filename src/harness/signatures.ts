// Speculative signature checks for the pipelined replay (docs/engineering/performance.md "Pipelined
// replay"): the engine's Ed25519 verifier answers "valid" at once and posts the check to a ring
// the commit worker serves (src/crypto/signature-ring.ts), so the main thread keeps executing
// and never verifies. Each block's state batch carries the range of checks it was executed with
// (SignatureCheckedStore); the worker applies the batch only when all of them were valid, and
// otherwise refuses it (state/commitment/worker-commitment.ts BatchRefused): the harness then undoes that
// block and every block after it and executes it again with the real verifier. So every block
// whose root is ever used was executed with exactly the answers ed25519VerifyStrict gives,
// whatever the threads' timing.
import { ed25519VerifyStrict } from "../crypto/ed25519.js";
import { SignatureRing, type SignatureRingShared } from "../crypto/signature-ring.js";
import type { SignatureVerifier } from "../engine/meter.js";
import type { BlockBatch, CommitResult, StateStore } from "../../state/kv/interface.js";
import { ForwardingStore } from "../../state/store/forwarding.js";
import type { WorkerCommitment } from "../../state/commitment/worker-commitment.js";

export class SpeculativeSignatures {
  private readonly ring: SignatureRing;
  /** The first check of the block being executed. */
  private blockFrom = 0;
  /** false while a block is executed again with the real verifier (its speculative answer was wrong). */
  speculating = true;

  /** `wake` tells the thread serving `shared` that a check is waiting. */
  constructor(shared: SignatureRingShared, wake: () => void) {
    this.ring = new SignatureRing(shared, wake);
  }

  /** The engine's verifier: "valid" now, checked by the worker before the block's state is applied; or, not speculating, the real answer. */
  readonly verify: SignatureVerifier = (publicKey, message, signature) =>
    (this.speculating && this.ring.post(publicKey, message, signature)) || ed25519VerifyStrict(publicKey, message, signature);

  /** Starts a block's execution: its checks are numbered from here on. */
  beginBlock(): void {
    this.blockFrom = this.ring.size;
  }

  /** The checks posted since beginBlock: [from, to). */
  get block(): { from: number; to: number } {
    return { from: this.blockFrom, to: this.ring.size };
  }

  /** Waits for the verdicts of the checks posted since beginBlock; true when one was invalid. */
  blockInvalid(): boolean {
    return this.ring.anyInvalid(this.blockFrom, this.ring.size);
  }
}

/** A store whose every block commit tells the commitment which signature checks the block was executed with. */
export class SignatureCheckedStore extends ForwardingStore {
  constructor(
    inner: StateStore,
    private readonly signatures: SpeculativeSignatures,
    private readonly commitment: WorkerCommitment,
  ) {
    super(inner);
  }

  override commitBlock(batch: BlockBatch): CommitResult {
    this.commitment.checks = this.signatures.block;
    return super.commitBlock(batch);
  }
}
