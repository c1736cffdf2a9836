// Ed25519 checks handed to another thread through shared memory (the pipelined replay,
// docs/engineering/performance.md). The posting thread writes each check into the next ring slot; the helper
// thread (`SignatureServer`) verifies every check in order with ed25519VerifyStrict and writes its
// verdict next to it. The poster never verifies: it reads verdicts only when it must (a full ring,
// or a block that failed and needs to know why), and the helper remembers which checks were
// invalid so that it can refuse a state batch executed with a wrong answer
// (state/commitment/commit-worker.ts).
import { ed25519VerifyStrict, ED25519_PUBLIC_KEY_LENGTH, ED25519_SIGNATURE_LENGTH } from "./ed25519.js";

/** Checks in flight at most. */
export const SIGNATURE_RING = 256;
/** Longest message a slot holds; a longer one is not posted (the caller verifies it itself). */
export const MAX_RING_MESSAGE = 256;
/** One slot: public key, signature, u32 message length, message. */
const SLOT_BYTES = ED25519_PUBLIC_KEY_LENGTH + ED25519_SIGNATURE_LENGTH + 4 + MAX_RING_MESSAGE;
const LENGTH_AT = ED25519_PUBLIC_KEY_LENGTH + ED25519_SIGNATURE_LENGTH;
const MESSAGE_AT = LENGTH_AT + 4;
/** A verdict word: the check's number (so a reused slot is never read for the check before it), then VALID or INVALID. */
const VALID = 1;
const INVALID = 2;
const tag = (seq: number, verdict: number): number => ((seq & 0xfffffff) << 2) | verdict;
const STALL_MS = 120_000;

/** The memory both threads share: `posted` (one Int32), the slots, and a verdict word per slot. */
export interface SignatureRingShared {
  posted: SharedArrayBuffer;
  slots: SharedArrayBuffer;
  verdicts: SharedArrayBuffer;
}

export function allocateSignatureRing(): SignatureRingShared {
  const verdicts = new SharedArrayBuffer(4 * SIGNATURE_RING);
  // No verdict yet: -1 carries no check number (a zeroed word would read as check 0, invalid).
  new Int32Array(verdicts).fill(-1);
  return { posted: new SharedArrayBuffer(4), slots: new SharedArrayBuffer(SIGNATURE_RING * SLOT_BYTES), verdicts };
}

/** Numbers of the invalid checks seen, ascending: which of a range of checks were invalid. */
class InvalidChecks {
  private readonly seqs: number[] = [];

  add(seq: number): void {
    this.seqs.push(seq);
  }

  /** True when a check numbered in [from, to) was invalid; forgets those below `from` (ranges are asked in ascending order). */
  anyIn(from: number, to: number): boolean {
    while (this.seqs.length > 0 && this.seqs[0]! < from) this.seqs.shift();
    return this.seqs.length > 0 && this.seqs[0]! < to;
  }
}

/** The posting side. */
export class SignatureRing {
  private readonly posted: Int32Array;
  private readonly bytes: Uint8Array;
  private readonly view: DataView;
  private readonly verdictWords: Int32Array;
  private count = 0;
  /** Checks whose verdicts were read here. */
  private read = 0;
  private readonly invalid = new InvalidChecks();

  /** `wake` tells the helper thread there is work (it decides whether a wake-up is due). */
  constructor(
    shared: SignatureRingShared,
    private readonly wake: () => void,
  ) {
    this.posted = new Int32Array(shared.posted);
    this.bytes = new Uint8Array(shared.slots);
    this.view = new DataView(shared.slots);
    this.verdictWords = new Int32Array(shared.verdicts);
  }

  /** Checks posted so far; the next check's number. */
  get size(): number {
    return this.count;
  }

  /** Posts a check; false (nothing posted) when its lengths do not fit a slot. */
  post(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
    if (publicKey.length !== ED25519_PUBLIC_KEY_LENGTH || signature.length !== ED25519_SIGNATURE_LENGTH || message.length > MAX_RING_MESSAGE) return false;
    // A slot is reused only once the check it held has its verdict: take every verdict already
    // written (so a full ring is not waited on at each post), then wait for the oldest if need be.
    if (this.count - this.read >= SIGNATURE_RING) {
      while (this.read < this.count && this.verdictOf(this.read) !== undefined) this.take(this.verdictOf(this.read)!);
      this.readVerdicts(this.count - SIGNATURE_RING + 1);
    }
    const at = (this.count % SIGNATURE_RING) * SLOT_BYTES;
    this.bytes.set(publicKey, at);
    this.bytes.set(signature, at + ED25519_PUBLIC_KEY_LENGTH);
    this.view.setUint32(at + LENGTH_AT, message.length);
    this.bytes.set(message, at + MESSAGE_AT);
    this.count++;
    Atomics.store(this.posted, 0, this.count);
    this.wake();
    return true;
  }

  /** Waits for the verdicts of the checks numbered in [from, to) (to ≤ size); true when one was invalid. */
  anyInvalid(from: number, to: number): boolean {
    this.readVerdicts(to);
    return this.invalid.anyIn(from, to);
  }

  private readVerdicts(upTo: number): void {
    while (this.read < upTo) this.take(this.verdictOf(this.read) ?? this.awaitVerdict(this.read));
  }

  /** Records the verdict of check number `read` and moves on. */
  private take(valid: boolean): void {
    if (!valid) this.invalid.add(this.read);
    this.read++;
  }

  /** The helper's verdict on check `seq`, if it is written. */
  private verdictOf(seq: number): boolean | undefined {
    const word = Atomics.load(this.verdictWords, seq % SIGNATURE_RING);
    return word >> 2 === (seq & 0xfffffff) ? (word & 3) === VALID : undefined;
  }

  private awaitVerdict(seq: number): boolean {
    const slot = seq % SIGNATURE_RING;
    this.wake();
    // The helper verifies in tens of µs: looking again is cheaper than sleeping and being woken.
    for (let spins = 0; spins < 1 << 16; spins++) {
      const verdict = this.verdictOf(seq);
      if (verdict !== undefined) return verdict;
    }
    for (;;) {
      const word = Atomics.load(this.verdictWords, slot);
      if (word >> 2 === (seq & 0xfffffff)) return (word & 3) === VALID;
      if (Atomics.wait(this.verdictWords, slot, word, STALL_MS) === "timed-out") throw new Error(`no signature verdict from the helper thread for ${STALL_MS / 1000} s`);
    }
  }
}

/** The helper side: verifies every posted check, in order, and remembers the invalid ones. */
export class SignatureServer {
  private readonly posted: Int32Array;
  private readonly bytes: Uint8Array;
  private readonly view: DataView;
  private readonly verdictWords: Int32Array;
  private next = 0;
  private readonly invalid = new InvalidChecks();

  constructor(shared: SignatureRingShared) {
    this.posted = new Int32Array(shared.posted);
    this.bytes = new Uint8Array(shared.slots);
    this.view = new DataView(shared.slots);
    this.verdictWords = new Int32Array(shared.verdicts);
  }

  /** True when checks were posted that are not verified yet. */
  pending(): boolean {
    return Atomics.load(this.posted, 0) !== this.next;
  }

  /** Verifies every check posted so far. */
  serve(): void {
    const posted = Atomics.load(this.posted, 0);
    for (; this.next < posted; this.next++) {
      const seq = this.next;
      const valid = this.verify(seq);
      if (!valid) this.invalid.add(seq);
      const slot = seq % SIGNATURE_RING;
      Atomics.store(this.verdictWords, slot, tag(seq, valid ? VALID : INVALID));
      Atomics.notify(this.verdictWords, slot);
    }
  }

  /** Verifies what is posted, then: true when a check numbered in [from, to) was invalid (to ≤ posted; ranges asked in ascending order). */
  anyInvalid(from: number, to: number): boolean {
    this.serve();
    return this.invalid.anyIn(from, to);
  }

  /** ed25519VerifyStrict of the check in its slot; an exception counts as invalid (the block is then executed again with the real verifier, which meets it itself). */
  private verify(seq: number): boolean {
    const at = (seq % SIGNATURE_RING) * SLOT_BYTES;
    const length = this.view.getUint32(at + LENGTH_AT);
    try {
      return ed25519VerifyStrict(
        this.bytes.slice(at, at + ED25519_PUBLIC_KEY_LENGTH),
        this.bytes.slice(at + MESSAGE_AT, at + MESSAGE_AT + length),
        this.bytes.slice(at + ED25519_PUBLIC_KEY_LENGTH, at + LENGTH_AT),
      );
    } catch {
      return false;
    }
  }
}
