// Cryptographic primitive benchmark (docs/engineering/performance.md, "Cryptographic primitives"): each
// primitive's previous implementation against the current one, in one run, on the same inputs.
//   keccak256, sha256: @noble/hashes (previous) vs hash-wasm (src/crypto/hash.ts)
//   blake3:            blake3-wasm (previous; a dev dependency kept for this baseline) vs hash-wasm
//   hashParts:         hashing a freshly concatenated preimage vs hashParts on the parts
//   Ed25519 strict:    the pure-JS reference verifyStrictDetailed vs ed25519VerifyStrict (OpenSSL
//                      behind dalek's checks), valid and invalid signatures, and the fast path
//                      with the OpenSSL key imported on every call (i.e. without the key cache)
// Rates are calls per second of this process's CPU time (not wall time), so other processes on a
// shared machine do not count against either side. Old and new alternate in short slices
// (--rounds of each) and each keeps its median. Ratios are the last lines; --json for a machine.
//
//   npm run build && node dist/scripts/bench-crypto.js [--rounds 11] [--slice-ms 100] [--json]
import { createPublicKey, verify } from "node:crypto";
import { cpus, loadavg } from "node:os";
import { ed25519 } from "@noble/curves/ed25519.js";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { sha256 as nobleSha256 } from "@noble/hashes/sha2.js";
import { hash as blake3WasmHash } from "blake3-wasm";
import { concatBytes } from "../src/bytes.js";
import { BLAKE3, KECCAK256, blake3, hashParts, keccak256, sha256 } from "../src/crypto/hash.js";
import { ed25519VerifyStrict, verifyStrictDetailed } from "../src/crypto/ed25519.js";
import { strictRoute } from "../src/crypto/ed25519-native.js";
import { checkScriptArgs } from "./script-args.js";

interface Pair {
  name: string;
  old: string;
  current: string;
  runOld: () => void;
  runNew: () => void;
}

function bytes(n: number, salt: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i * 131 + salt * 17 + (i >> 3)) & 0xff;
  return out;
}

function hashPairs(): Pair[] {
  const pairs: Pair[] = [];
  for (const n of [64, 150]) {
    const d = bytes(n, n);
    pairs.push({ name: `keccak256 ${n} B`, old: "@noble/hashes", current: "hash-wasm", runOld: () => keccak_256(d), runNew: () => keccak256(d) });
  }
  for (const n of [65, 100, 4096]) {
    const d = bytes(n, n);
    pairs.push({ name: `blake3 ${n} B`, old: "blake3-wasm", current: "hash-wasm", runOld: () => blake3WasmHash(d), runNew: () => blake3(d) });
  }
  for (const n of [64, 4096]) {
    const d = bytes(n, n);
    pairs.push({ name: `sha256 ${n} B`, old: "@noble/hashes", current: "hash-wasm", runOld: () => nobleSha256(d), runNew: () => sha256(d) });
  }
  // Typical small preimages: a tag byte and two 32-byte children; an 8-byte position and two digests.
  const tag = Uint8Array.of(1);
  const pos = bytes(8, 1);
  const left = bytes(32, 2);
  const right = bytes(32, 3);
  pairs.push({
    name: "blake3 of 1+32+32 B parts",
    old: "concat + blake3",
    current: "hashParts",
    runOld: () => blake3(concatBytes(tag, left, right)),
    runNew: () => hashParts(BLAKE3, tag, left, right),
  });
  pairs.push({
    name: "keccak256 of 8+32+32 B parts",
    old: "concat + keccak256",
    current: "hashParts",
    runOld: () => keccak256(concatBytes(pos, left, right)),
    runNew: () => hashParts(KECCAK256, pos, left, right),
  });
  return pairs;
}

function ed25519Pairs(): Pair[] {
  const seed = bytes(32, 9);
  const pub = ed25519.getPublicKey(seed);
  const msg = bytes(150, 4); // about one signed CBQS instruction
  const sig = ed25519.sign(msg, seed);
  const bad = sig.slice();
  bad[40]! ^= 0x01; // S still < L: both paths compute the whole equation and reject
  const check = (ok: boolean, want: boolean): void => {
    if (ok !== want) throw new Error("bench-crypto: Ed25519 verdict changed during the benchmark");
  };
  return [
    {
      name: "Ed25519 strict, valid",
      old: "JS reference",
      current: "OpenSSL fast path",
      runOld: () => check(verifyStrictDetailed(pub, msg, sig).valid, true),
      runNew: () => check(ed25519VerifyStrict(pub, msg, sig), true),
    },
    {
      name: "Ed25519 strict, invalid (equation)",
      old: "JS reference",
      current: "OpenSSL fast path",
      runOld: () => check(verifyStrictDetailed(pub, msg, bad).valid, false),
      runNew: () => check(ed25519VerifyStrict(pub, msg, bad), false),
    },
    {
      name: "Ed25519 fast path: key import per call vs cached",
      old: "import per call",
      current: "key cache",
      runOld: () => {
        if (strictRoute(pub, sig).kind !== "openssl") throw new Error("unexpected route");
        const key = createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: Buffer.from(pub).toString("base64url") }, format: "jwk" });
        check(verify(null, msg, key, sig), true);
      },
      runNew: () => check(ed25519VerifyStrict(pub, msg, sig), true),
    },
  ];
}

/** Calls of `f` per second of this process's CPU time, over one slice of `sliceMs` (wall clock).
 *  CPU time leaves out the time other processes hold the core. */
function rate(f: () => void, sliceMs: number): number {
  let n = 0;
  const start = performance.now();
  const cpu = process.cpuUsage();
  do {
    for (let i = 0; i < 16; i++) f();
    n += 16;
  } while (performance.now() - start < sliceMs);
  const used = process.cpuUsage(cpu);
  return (n * 1e6) / (used.user + used.system);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const USAGE = "usage: bench-crypto [--rounds N] [--slice-ms MS] [--json]";

function main(argv: string[]): void {
  checkScriptArgs(argv, USAGE, ["--rounds", "--slice-ms"], ["--json"]);
  const arg = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const rounds = Number(arg("--rounds") ?? "11");
  const sliceMs = Number(arg("--slice-ms") ?? "100");
  const json = argv.includes("--json");
  if (!Number.isInteger(rounds) || rounds < 1 || !(sliceMs > 0)) {
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
  const load = loadavg()[0]!;
  const results = [...hashPairs(), ...ed25519Pairs()].map((p) => {
    rate(p.runOld, 50); // warm-up
    rate(p.runNew, 50);
    const olds: number[] = [];
    const news: number[] = [];
    for (let r = 0; r < rounds; r++) {
      olds.push(rate(p.runOld, sliceMs));
      news.push(rate(p.runNew, sliceMs));
    }
    const [oldRate, newRate] = [median(olds), median(news)];
    if (!json) process.stderr.write(`bench-crypto: ${p.name} done\n`);
    return { name: p.name, old: p.old, current: p.current, oldPerSecond: Math.round(oldRate), newPerSecond: Math.round(newRate), ratio: Number((newRate / oldRate).toFixed(2)) };
  });
  const machine = `${cpus()[0]?.model ?? "?"} x${cpus().length}, node ${process.version}, load average ${load.toFixed(2)} at start, ${loadavg()[0]!.toFixed(2)} at end`;
  if (json) {
    process.stdout.write(JSON.stringify({ machine, rounds, sliceMs, results }, null, 2) + "\n");
    return;
  }
  const w = Math.max(...results.map((r) => r.name.length));
  const lines = [
    machine,
    `${"primitive".padEnd(w)}  ${"previous".padEnd(18)} ${"calls/cpu-s".padStart(11)}  ${"current".padEnd(18)} ${"calls/cpu-s".padStart(11)}`,
    ...results.map((r) => `${r.name.padEnd(w)}  ${r.old.padEnd(18)} ${String(r.oldPerSecond).padStart(11)}  ${r.current.padEnd(18)} ${String(r.newPerSecond).padStart(11)}`),
    `ratios (current / previous, CPU time, median of ${rounds} alternating ${sliceMs} ms slices each):`,
    ...results.map((r) => `  ${r.ratio.toFixed(2).padStart(6)}x  ${r.name}`),
  ];
  process.stdout.write(lines.join("\n") + "\n");
}

main(process.argv.slice(2));
