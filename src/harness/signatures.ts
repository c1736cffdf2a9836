// Speculative signature checks for the pipelined replay (docs/performance.md "Pipelined
// replay"): the engine's Ed25519 verifier answers "valid" at once and hands the check to a worker
// thread (src/harness/signature-worker.ts), so the main thread keeps executing. Before the block
// commits, every answer of the block is confirmed (SignatureCheckedStore); if one was wrong, the
// commit is refused — nothing of the block reaches the state — and the harness executes the block
// again with the real verifier. So every committed block was executed with exactly the answers
// ed25519VerifyStrict gives, whatever the threads' timing.
import { existsSync } from "node:fs";
import { Worker } from "node:worker_threads";
import { ed25519VerifyStrict, ED25519_PUBLIC_KEY_LENGTH, ED25519_SIGNATURE_LENGTH } from "../crypto/ed25519.js";
import type { SignatureVerifier } from "../engine/meter.js";
import type { BlockBatch, CommitResult, StateStore } from "../../state/interface.js";
import { ForwardingStore } from "../../state/forwarding.js";

/** Checks in flight at most. */
export const SIGNATURE_RING = 256;
/** Longest message sent to the worker; a longer one is verified on the spot. */
export const MAX_MESSAGE = 256;
/** One job: public key, signature, u32 message length, message. */
export const JOB_BYTES = ED25519_PUBLIC_KEY_LENGTH + ED25519_SIGNATURE_LENGTH + 4 + MAX_MESSAGE;
/** Header ints: jobs posted, jobs done, closed flag. Verdicts: 1 valid, 2 invalid. */
export const S = { posted: 0, done: 1, closed: 2 } as const;
const STALL_MS = 120_000;

export interface SignatureShared {
  header: SharedArrayBuffer;
  jobs: SharedArrayBuffer;
  verdicts: SharedArrayBuffer;
}

/** Thrown by SignatureCheckedStore.commitBlock: a speculative answer of this block was wrong. */
export class SpeculationFailed extends Error {
  override name = "SpeculationFailed";
}

export class SpeculativeSignatures {
  private readonly worker: Worker;
  private readonly header: Int32Array;
  private readonly jobs: Uint8Array;
  private readonly jobView: DataView;
  private readonly verdicts: Int32Array;
  private posted = 0;
  /** Jobs whose verdicts were looked at. */
  private harvested = 0;
  /** A verdict since beginBlock was "invalid". */
  private blockFailed = false;
  private closed = false;

  constructor() {
    const script = new URL("./signature-worker.js", import.meta.url);
    if (!existsSync(script)) throw new Error(`no compiled signature worker at ${script.pathname} (run npm run build)`);
    const shared: SignatureShared = {
      header: new SharedArrayBuffer(16),
      jobs: new SharedArrayBuffer(SIGNATURE_RING * JOB_BYTES),
      verdicts: new SharedArrayBuffer(4 * SIGNATURE_RING),
    };
    this.header = new Int32Array(shared.header);
    this.jobs = new Uint8Array(shared.jobs);
    this.jobView = new DataView(shared.jobs);
    this.verdicts = new Int32Array(shared.verdicts);
    this.worker = new Worker(script, { workerData: shared });
    this.worker.unref();
  }

  /** The engine's verifier: "valid" now, checked before the block commits. */
  readonly verify: SignatureVerifier = (publicKey, message, signature) => {
    if (publicKey.length !== ED25519_PUBLIC_KEY_LENGTH || signature.length !== ED25519_SIGNATURE_LENGTH || message.length > MAX_MESSAGE) {
      return ed25519VerifyStrict(publicKey, message, signature);
    }
    if (this.posted - this.harvested >= SIGNATURE_RING) this.harvest(this.posted - SIGNATURE_RING + 1);
    const at = (this.posted % SIGNATURE_RING) * JOB_BYTES;
    this.jobs.set(publicKey, at);
    this.jobs.set(signature, at + ED25519_PUBLIC_KEY_LENGTH);
    this.jobView.setUint32(at + ED25519_PUBLIC_KEY_LENGTH + ED25519_SIGNATURE_LENGTH, message.length);
    this.jobs.set(message, at + ED25519_PUBLIC_KEY_LENGTH + ED25519_SIGNATURE_LENGTH + 4);
    this.posted++;
    Atomics.store(this.header, S.posted, this.posted);
    Atomics.notify(this.header, S.posted);
    return true;
  };

  /** Starts a block's execution: its verdicts are judged from here on. */
  beginBlock(): void {
    this.harvest(this.posted);
    this.blockFailed = false;
  }

  /** Waits for every check posted so far; true when one since beginBlock was invalid. */
  anyInvalid(): boolean {
    this.harvest(this.posted);
    return this.blockFailed;
  }

  /** Waits until the first `count` checks are done and looks at their verdicts. */
  private harvest(count: number): void {
    if (this.closed) throw new Error("the signature checker is closed");
    while (this.harvested < count) {
      const done = Atomics.load(this.header, S.done);
      if (done <= this.harvested) {
        if (Atomics.wait(this.header, S.done, done, STALL_MS) === "timed-out") throw new Error(`no verdict from the signature worker for ${STALL_MS / 1000} s`);
        continue;
      }
      for (; this.harvested < done && this.harvested < count; this.harvested++) {
        if (this.verdicts[this.harvested % SIGNATURE_RING] !== 1) this.blockFailed = true;
      }
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    Atomics.store(this.header, S.closed, 1);
    Atomics.notify(this.header, S.posted);
    void this.worker.terminate();
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
