// Decoder fuzzer (CIP-39 §14/§18): for every codec type, feeds random byte strings and mutated
// valid encodings to the strict decoder. A failure is (a) any exception other than DecodeError,
// or (b) an input that decodes but does not re-encode to exactly the same bytes (non-canonical
// acceptance). Deterministic for a given --seed.
//
//   npx tsc -p tsconfig.json && node dist/scripts/fuzz-codec.js [--count N] [--seed S] [--type Name]
import { Rng } from "./rng.js";
import * as fc from "fast-check";
import { bytesEqual, toHex } from "../src/bytes.js";
import { CODEC_NAMES, DecodeError, codecByName, decode, encode, type Codec } from "../src/codec/index.js";
import { exitOnHelp, usageExit } from "./script-args.js";

interface Options {
  count: number;
  seed: number;
  types: string[];
}

function parseArgs(argv: string[]): Options {
  exitOnHelp(argv, `usage: fuzz-codec [--count N] [--seed S] [--type ${CODEC_NAMES.join("|")}]`);
  const opts: Options = { count: 100_000, seed: 1, types: [...CODEC_NAMES] };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag === "--count" && value && /^[0-9]+$/.test(value)) opts.count = Number(value);
    else if (flag === "--seed" && value && /^[0-9]+$/.test(value)) opts.seed = Number(value);
    else if (flag === "--type" && value && codecByName(value)) opts.types = [value];
    else {
      usageExit("fuzz-codec", `${flag} ${value ?? ""}: expected --count N, --seed S or --type <codec>`.replace(" :", ":"), `usage: fuzz-codec [--count N] [--seed S] [--type ${CODEC_NAMES[0]}|…]`);
    }
    i++;
  }
  return opts;
}


/** Interesting 4-byte values for length/count prefixes. */
const BOUNDARY_U32 = [0, 1, 2, 7, 8, 9, 79, 80, 2_048, 2_049, 16_384, 16_385, 65_536, 65_537, 0x7fffffff, 0xffffffff];

function mutate(rng: Rng, valid: Uint8Array): Uint8Array {
  const b = valid.slice();
  switch (rng.below(8)) {
    case 0: {
      // flip 1..4 random bytes
      const flips = 1 + rng.below(4);
      for (let i = 0; i < flips && b.length > 0; i++) b[rng.below(b.length)] = rng.below(256);
      return b;
    }
    case 1:
      return b.slice(0, rng.below(b.length + 1)); // truncate
    case 2:
      return Uint8Array.from([...b, ...rng.bytes(1 + rng.below(8))]); // extend
    case 3: {
      // delete a range
      const at = rng.below(b.length + 1);
      return Uint8Array.from([...b.slice(0, at), ...b.slice(at + 1 + rng.below(8))]);
    }
    case 4: {
      // overwrite 4 bytes with a boundary u32 (hits length and count prefixes)
      if (b.length < 4) return b;
      const at = rng.below(b.length - 3);
      const v = BOUNDARY_U32[rng.below(BOUNDARY_U32.length)]!;
      b.set([v >>> 24, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff], at);
      return b;
    }
    case 5: {
      // set one byte to a small tag value (0..4) or 0xff
      if (b.length > 0) b[rng.below(b.length)] = [0, 1, 2, 3, 4, 0xff][rng.below(6)]!;
      return b;
    }
    case 6:
      // a valid prefix followed by random bytes (reaches fields behind version bytes and tags)
      return Uint8Array.from([...b.slice(0, rng.below(b.length + 1)), ...rng.bytes(rng.below(64))]);
    default:
      return b; // the valid encoding itself
  }
}

interface Tally {
  accepted: number;
  rejected: Record<string, number>;
  failures: string[];
}

function runOne(codec: Codec<unknown>, input: Uint8Array, tally: Tally): void {
  let value: unknown;
  try {
    value = decode(codec, input);
  } catch (err) {
    if (err instanceof DecodeError) {
      tally.rejected[err.kind] = (tally.rejected[err.kind] ?? 0) + 1;
      return;
    }
    tally.failures.push(`${toHex(input).slice(0, 200)}: ${(err as Error)?.stack ?? String(err)}`);
    return;
  }
  tally.accepted++;
  try {
    const again = encode(codec, value);
    if (!bytesEqual(again, input)) tally.failures.push(`${toHex(input).slice(0, 200)}: decoded but re-encodes differently`);
  } catch (err) {
    tally.failures.push(`${toHex(input).slice(0, 200)}: decoded value does not re-encode: ${(err as Error).message}`);
  }
}

function main(): void {
  const opts = parseArgs(process.argv.slice(2));
  let failed = false;
  for (const [index, name] of opts.types.entries()) {
    const codec = codecByName(name)!;
    const rng = new Rng(opts.seed * 7919 + index);
    const pool = fc.sample(codec.arbitrary(fc), { seed: opts.seed + index, numRuns: 256 }).map((v) => encode(codec, v));
    const tally: Tally = { accepted: 0, rejected: {}, failures: [] };
    for (let i = 0; i < opts.count; i++) {
      const input =
        i % 3 === 0 ? rng.bytes(rng.below(512)) : mutate(rng, pool[rng.below(pool.length)]!);
      runOne(codec, input, tally);
    }
    const kinds = Object.entries(tally.rejected)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, n]) => `${k}=${n}`)
      .join(" ");
    process.stdout.write(`${name}: ${opts.count} inputs, accepted=${tally.accepted} ${kinds} failures=${tally.failures.length}\n`);
    for (const f of tally.failures.slice(0, 5)) process.stdout.write(`  FAIL ${f}\n`);
    if (tally.failures.length > 0) failed = true;
  }
  process.stdout.write(failed ? "fuzz-codec: FAILED\n" : "fuzz-codec: ok\n");
  process.exit(failed ? 1 : 0);
}

main();
