// The worker half of SpeculativeSignatures (src/harness/signatures.ts): verifies each posted
// check with ed25519VerifyStrict, in order, and writes its verdict (1 valid, 2 invalid).
import { workerData } from "node:worker_threads";
import { ed25519VerifyStrict, ED25519_PUBLIC_KEY_LENGTH, ED25519_SIGNATURE_LENGTH } from "../crypto/ed25519.js";
import { JOB_BYTES, S, SIGNATURE_RING, type SignatureShared } from "./signatures.js";

const shared = workerData as SignatureShared;
const header = new Int32Array(shared.header);
const jobs = new Uint8Array(shared.jobs);
const view = new DataView(shared.jobs);
const verdicts = new Int32Array(shared.verdicts);

let done = 0;
for (;;) {
  while (Atomics.load(header, S.posted) === done) {
    if (Atomics.load(header, S.closed) !== 0) process.exit(0);
    Atomics.wait(header, S.posted, done, 1000);
  }
  const at = (done % SIGNATURE_RING) * JOB_BYTES;
  const publicKey = jobs.slice(at, at + ED25519_PUBLIC_KEY_LENGTH);
  const signature = jobs.slice(at + ED25519_PUBLIC_KEY_LENGTH, at + ED25519_PUBLIC_KEY_LENGTH + ED25519_SIGNATURE_LENGTH);
  const length = view.getUint32(at + ED25519_PUBLIC_KEY_LENGTH + ED25519_SIGNATURE_LENGTH);
  const start = at + ED25519_PUBLIC_KEY_LENGTH + ED25519_SIGNATURE_LENGTH + 4;
  const message = jobs.slice(start, start + length);
  let valid = false;
  try {
    valid = ed25519VerifyStrict(publicKey, message, signature);
  } catch {
    // "invalid": the main thread then re-executes the block with the real verifier, which throws there as a plain replay would.
  }
  verdicts[done % SIGNATURE_RING] = valid ? 1 : 2;
  done++;
  Atomics.store(header, S.done, done);
  Atomics.notify(header, S.done);
}
