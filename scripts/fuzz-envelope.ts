// Envelope canonicality fuzzer (docs/reference/formats/transaction.md "One accepted byte string"): mutates valid
// envelopes of every kind (scripts/envelope-mutations.ts) and requires, for every mutant the
// strict decoder accepts, that encodeEnvelope(decodeEnvelope(bytes)) is byte-identical to it.
// Any other exception than EnvelopeError, or an accepted second form, is a failure (exit 1).
// Deterministic for a given --seed.
//
//   npm run build && node dist/scripts/fuzz-envelope.js [--count N] [--seed S]
import { performance } from "node:perf_hooks";
import { bytesEqual, toHex } from "../src/bytes.js";
import { decodeEnvelope, encodeEnvelope, EnvelopeError } from "../src/chain/envelope.js";
import { MUTATIONS, nthMutant, type Mutation } from "./envelope-mutations.js";
import { Rng } from "./rng.js";
import { exitOnHelp, usageExit } from "./script-args.js";

function parseArgs(argv: string[]): { count: number; seed: number } {
  exitOnHelp(argv, "usage: fuzz-envelope [--count N] [--seed S]");
  const opts = { count: 100_000, seed: 1 };
  for (let i = 0; i < argv.length; i += 2) {
    const value = argv[i + 1];
    if (argv[i] === "--count" && value && /^[0-9]+$/.test(value)) opts.count = Number(value);
    else if (argv[i] === "--seed" && value && /^[0-9]+$/.test(value)) opts.seed = Number(value);
    else {
      usageExit("fuzz-envelope", `${argv[i]} ${value ?? ""}: expected --count N or --seed S`.replace(" :", ":"), "usage: fuzz-envelope [--count N] [--seed S]");
    }
  }
  return opts;
}

/** Returns a failure description, or null; counts accepted mutants per mutation kind. */
function checkMutant(mutant: Uint8Array): { accepted: boolean; failure: string | null } {
  let decoded;
  try {
    decoded = decodeEnvelope(mutant);
  } catch (err) {
    if (err instanceof EnvelopeError) return { accepted: false, failure: null };
    return { accepted: false, failure: `unexpected ${(err as Error).name}: ${(err as Error).message}` };
  }
  const again = encodeEnvelope(decoded);
  return { accepted: true, failure: bytesEqual(again, mutant) ? null : `accepted a second form; re-encodes to ${toHex(again)}` };
}

function main(): void {
  const { count, seed } = parseArgs(process.argv.slice(2));
  const rng = new Rng(seed);
  const accepted = new Map<Mutation, number>(MUTATIONS.map((m) => [m, 0]));
  const tried = new Map<Mutation, number>(MUTATIONS.map((m) => [m, 0]));
  const started = performance.now();
  let failures = 0;
  let draws = 0;
  for (let changed = 0; changed < count; draws++) {
    const { valid, mutant, mutation } = nthMutant(rng, draws);
    if (bytesEqual(valid, mutant)) continue; // the mutation did not apply to this envelope
    changed++;
    tried.set(mutation, tried.get(mutation)! + 1);
    const r = checkMutant(mutant);
    if (r.accepted) accepted.set(mutation, accepted.get(mutation)! + 1);
    if (r.failure !== null) {
      failures++;
      if (failures <= 10) process.stdout.write(`FAIL #${draws} (${mutation}) ${toHex(mutant)}: ${r.failure}\n`);
    }
  }
  const seconds = (performance.now() - started) / 1000;
  for (const m of MUTATIONS) {
    process.stdout.write(`  ${m.padEnd(16)} ${String(tried.get(m)).padStart(7)} mutants, ${String(accepted.get(m)).padStart(6)} accepted\n`);
  }
  process.stdout.write(
    `fuzz-envelope: ${count} mutants (each differs from its valid original; ${draws} draws, seed ${seed}); ` +
      `every accepted one re-encodes byte-identically unless failures are listed: ${failures} failures, ${seconds.toFixed(1)} s\n`,
  );
  process.exitCode = failures === 0 ? 0 : 1;
}

main();
