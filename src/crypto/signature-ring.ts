// Ed25519 checks handed to another thread through shared memory (the pipelined replay,
// docs/performance.md). The posting thread writes each check into a ring slot marked PENDING;
// whichever thread first swaps the mark from PENDING — the helper (`SignatureServer.serve`) or the
// poster itself when it needs the verdict (`SignatureRing.verdicts`) — verifies it. So the poster
// never waits for a helper that has not started: on two busy cores a woken thread may not run for
// a while, and verifying on the spot is then quicker than waiting. Every verdict is
// ed25519VerifyStrict's, whichever thread computed it.
import { ed25519VerifyStrict, ED25519_PUBLIC_KEY_LENGTH, ED25519_SIGNATURE_LENGTH } from "./ed25519.js";

/** Checks in flight at most. */
export const SIGNATURE_RING = 256;
/** Longest message a slot holds; a longer one is not posted (the caller verifies it itself). */
export const MAX_RING_MESSAGE = 256;
/** One slot: public key, signature, u32 message length, message. */
const SLOT_BYTES = ED25519_PUBLIC_KEY_LENGTH + ED25519_SIGNATURE_LENGTH + 4 + MAX_RING_MESSAGE;
const LENGTH_AT = ED25519_PUBLIC_KEY_LENGTH + ED25519_SIGNATURE_LENGTH;
const MESSAGE_AT = LENGTH_AT + 4;
/** Who holds a slot's check, in its claim word. */
const OWNER = { pending: 0, helper: 1, poster: 2 } as const;
/** A verdict word's low bits. */
const VALID = 1;
const INVALID = 2;
/** Claims and verdicts carry the check's number, so a lagging helper never takes a reused slot. */
const tag = (seq: number, low: number): number => ((seq & 0xfffffff) << 2) | low;
const STALL_MS = 120_000;

/** The memory both threads share: `posted` (one Int32), the slots, a claim word and a verdict word per slot. */
export interface SignatureRingShared {
  posted: SharedArrayBuffer;
  slots: SharedArrayBuffer;
  claims: SharedArrayBuffer;
  verdicts: SharedArrayBuffer;
}

export const allocateSignatureRing = (): SignatureRingShared => ({
  posted: new SharedArrayBuffer(4),
  slots: new SharedArrayBuffer(SIGNATURE_RING * SLOT_BYTES),
  claims: new SharedArrayBuffer(4 * SIGNATURE_RING),
  verdicts: new SharedArrayBuffer(4 * SIGNATURE_RING),
});

class RingView {
  protected readonly posted: Int32Array;
  protected readonly bytes: Uint8Array;
  protected readonly view: DataView;
  protected readonly claims: Int32Array;
  protected readonly verdictWords: Int32Array;

  constructor(shared: SignatureRingShared) {
    this.posted = new Int32Array(shared.posted);
    this.bytes = new Uint8Array(shared.slots);
    this.view = new DataView(shared.slots);
    this.claims = new Int32Array(shared.claims);
    this.verdictWords = new Int32Array(shared.verdicts);
  }

  /** Takes check `seq` for `owner`; false when another thread took it first (or its slot was reused). */
  protected claim(seq: number, owner: number): boolean {
    const slot = seq % SIGNATURE_RING;
    return Atomics.compareExchange(this.claims, slot, tag(seq, OWNER.pending), tag(seq, owner)) === tag(seq, OWNER.pending);
  }

  /** Verifies the check in its slot; an exception counts as invalid (a plain re-run then meets it itself). */
  protected verifySlot(seq: number): boolean {
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

/** The posting side. */
export class SignatureRing extends RingView {
  private count = 0;
  /** Checks whose verdicts were taken. */
  private taken = 0;
  /** Of those, the invalid ones. */
  private invalidCount = 0;

  /** `wake` tells the helper thread there is work (it decides whether a wake-up is due). */
  constructor(
    readonly shared: SignatureRingShared,
    private readonly wake: () => void,
  ) {
    super(shared);
  }

  /** Checks posted so far. */
  get size(): number {
    return this.count;
  }

  /** Invalid verdicts among those taken so far (by `verdicts`, or by `post` when the ring was full). */
  get invalid(): number {
    return this.invalidCount;
  }

  /** Posts a check; false (nothing posted) when its lengths do not fit a slot. */
  post(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
    if (publicKey.length !== ED25519_PUBLIC_KEY_LENGTH || signature.length !== ED25519_SIGNATURE_LENGTH || message.length > MAX_RING_MESSAGE) return false;
    // A slot is reused only once its verdict was taken: take the oldest when the ring is full.
    if (this.count - this.taken >= SIGNATURE_RING) this.verdicts(this.count - SIGNATURE_RING + 1);
    const slot = this.count % SIGNATURE_RING;
    const at = slot * SLOT_BYTES;
    this.bytes.set(publicKey, at);
    this.bytes.set(signature, at + ED25519_PUBLIC_KEY_LENGTH);
    this.view.setUint32(at + LENGTH_AT, message.length);
    this.bytes.set(message, at + MESSAGE_AT);
    Atomics.store(this.claims, slot, tag(this.count, OWNER.pending));
    this.count++;
    Atomics.store(this.posted, 0, this.count);
    this.wake();
    return true;
  }

  /**
   * Takes the verdicts of every check before number `upTo` (counted in `invalid`): verifies here
   * each check the helper has not started, waits for the others.
   */
  verdicts(upTo: number): void {
    // First the checks nobody has started, so that the helper's are likely done when we come to them.
    const helpers: number[] = [];
    for (let seq = this.taken; seq < upTo; seq++) {
      if (!this.claim(seq, OWNER.poster)) helpers.push(seq);
      else if (!this.verifySlot(seq)) this.invalidCount++;
    }
    for (const seq of helpers) if (!this.awaitVerdict(seq)) this.invalidCount++;
    this.taken = Math.max(this.taken, upTo);
  }

  private awaitVerdict(seq: number): boolean {
    const slot = seq % SIGNATURE_RING;
    // The helper is verifying it (tens of µs): looking again is cheaper than sleeping and being woken.
    for (let spins = 0; spins < 1 << 16; spins++) {
      const word = Atomics.load(this.verdictWords, slot);
      if (word >> 2 === (seq & 0xfffffff)) return (word & 3) === VALID;
    }
    for (;;) {
      const word = Atomics.load(this.verdictWords, slot);
      if (word >> 2 === (seq & 0xfffffff)) return (word & 3) === VALID;
      if (Atomics.wait(this.verdictWords, slot, word, STALL_MS) === "timed-out") throw new Error(`no signature verdict from the helper thread for ${STALL_MS / 1000} s`);
    }
  }
}

/** The helper side: verifies the checks the poster has not taken. */
export class SignatureServer extends RingView {
  private next = 0;

  /** True when checks were posted that this side has not looked at. */
  pending(): boolean {
    return Atomics.load(this.posted, 0) !== this.next;
  }

  /** Verifies every posted check nobody has taken yet. */
  serve(): void {
    const posted = Atomics.load(this.posted, 0);
    // Checks more than a ring behind were taken by the poster (it reused their slots).
    if (posted - this.next > SIGNATURE_RING) this.next = posted - SIGNATURE_RING;
    for (; this.next < posted; this.next++) {
      const seq = this.next;
      if (!this.claim(seq, OWNER.helper)) continue;
      const slot = seq % SIGNATURE_RING;
      Atomics.store(this.verdictWords, slot, tag(seq, this.verifySlot(seq) ? VALID : INVALID));
      Atomics.notify(this.verdictWords, slot);
    }
  }
}
