// verify-broker benchmark (docs/guides/verify-a-broker.md "Output and exit codes"): the kit's Standard bundle with
// `--appends n` more appends (each a request, a response and a receipt: the heaviest artifacts
// per line), its JSON text read (decoding every line) and then verified against the kit chain —
// read once from its fixture, and once from a `cbqs node` serving that fixture on 127.0.0.1. The
// decode is the baseline: verification's cost is reported as a ratio to it, measured in one run.
//
//   npm run build && node dist/scripts/bench-verify-broker.js [--appends 5000] [--runs 3]
import { utf8 } from "../src/bytes.js";
import { bundleText, parseBundle } from "../src/broker-kit/bundle.js";
import { nodeSource } from "../src/broker-kit/chain-source.js";
import { kitBundle } from "../src/broker-kit/kit.js";
import { ZERO32 } from "../src/broker-kit/signer.js";
import { verifyBundle } from "../src/broker-kit/verify.js";
import { runNode } from "../src/node/run.js";
import { MemoryChainDb } from "../state/chain-db/memory.js";
import { kitChainOf, kitFixture } from "./gen-broker-kit.js";
import { checkScriptArgs } from "./script-args.js";

const USAGE = "usage: node dist/scripts/bench-verify-broker.js [--appends n] [--runs n]";

function option(argv: string[], name: string, fallback: number): number {
  const i = argv.indexOf(name);
  if (i < 0) return fallback;
  const n = Number(argv[i + 1]);
  if (!Number.isSafeInteger(n) || n < 1) {
    process.stderr.write(`${name} must be a positive integer\n${USAGE}\n`);
    process.exit(2);
  }
  return n;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function time<T>(f: () => Promise<T> | T): Promise<{ value: T; ms: number }> {
  const t = performance.now();
  const value = await f();
  return { value, ms: performance.now() - t };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  checkScriptArgs(argv, USAGE, ["--appends", "--runs"]);
  const appends = option(argv, "--appends", 5_000);
  const runs = option(argv, "--runs", 3);
  const fixture = kitFixture();
  const chain = await kitChainOf(fixture);
  const { streamId, artifacts } = await kitBundle(chain, "standard", {
    extra: {
      at: "end",
      run: async (k) => {
        const v8 = await k.view(8n);
        for (let i = 0; i < appends; i++) k.signer.append(k.sessions["s2"]!, v8, { lane: ZERO32, payload: utf8(`bench ${i}`), label: `bench/${i}` });
      },
    },
  });
  const text = Buffer.from(bundleText(streamId, artifacts, "json"));
  const db = new MemoryChainDb(fixture.blocks.length + 1);
  const node = await runNode(db, { kind: "fixture", fixture }, { host: "127.0.0.1", port: 0, blockTime: 0, rateLimit: 0, proofRateLimit: 0, proofLimits: { maxExclusionOps: 4096 }, log: () => {} });
  try {
    const fromNode = await nodeSource(node.url);
    const decode: number[] = [];
    const onFixture: number[] = [];
    const onNode: number[] = [];
    for (let r = 0; r < runs; r++) {
      const parsed = await time(() => parseBundle(text, "bench.jsonl"));
      decode.push(parsed.ms);
      // The two sources take turns as to which goes first, so garbage left by one run slows both alike.
      const first = r % 2 === 0;
      const b0 = first ? undefined : await time(() => verifyBundle(parsed.value, fromNode));
      const a = await time(() => verifyBundle(parsed.value, chain.source));
      const b = b0 ?? (await time(() => verifyBundle(parsed.value, fromNode)));
      if (a.value.failures.length + b.value.failures.length > 0) throw new Error("the bench bundle does not verify");
      onFixture.push(a.ms);
      onNode.push(b.ms);
    }
    const n = artifacts.length;
    const rate = (ms: number): string => `${Math.round((n / ms) * 1000).toLocaleString("en-US")} artifacts/s`;
    const line = (name: string, ms: number): string => `${name.padEnd(28)} ${ms.toFixed(0).padStart(7)} ms  ${rate(ms).padStart(22)}  ×${(ms / median(decode)).toFixed(2)} of the decode`;
    process.stdout.write(`${n.toLocaleString("en-US")} artifacts, ${(text.length / 1e6).toFixed(1)} MB of JSON lines; medians of ${runs} runs\n`);
    process.stdout.write(`${line("decode (parseBundle)", median(decode))}\n${line("verify, --fixture", median(onFixture))}\n${line("verify, --node (loopback)", median(onNode))}\n`);
  } finally {
    await node.close();
  }
}

await main();
