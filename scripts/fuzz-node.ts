// Fuzz a real `cbqs node` process on loopback with seeded malformed requests (scripts/fuzz-node-cases.ts):
// it must never answer 500, never hang, never crash, keep answering well-formed requests, log no
// internal error, and still shut down cleanly (exit 0) on SIGTERM. Bounded in count and time.
//
//   npm run build && node dist/scripts/fuzz-node.js [--cases 12000] [--seed 1] [--concurrency 16] [--max-seconds 300]
import { Agent } from "node:http";
import { fileURLToPath } from "node:url";
import { fuzzCase, sendCase, type FuzzCase, type Outcome } from "./fuzz-node-cases.js";
import { intArg, startNode } from "./node-process.js";
import { Rng } from "./rng.js";
import { checkScriptArgs } from "./script-args.js";

checkScriptArgs(process.argv.slice(2), "usage: fuzz-node [--cases N] [--seed S] [--concurrency N] [--max-seconds N]", ["--cases", "--seed", "--concurrency", "--max-seconds"]);
const CASES = intArg("cases", 12_000);
const SEED = intArg("seed", 1);
const CONCURRENCY = intArg("concurrency", 16);
const MAX_SECONDS = intArg("max-seconds", 300);
/** The repository's corpus (dist/scripts/ is two levels below it), whatever the working directory. */
const FIXTURE = fileURLToPath(new URL("../../fixtures/corpus/encrypted-pair-lifecycle.json", import.meta.url));

/** A case as one readable line: its body as text, not as a JSON byte array. */
function describe(c: FuzzCase): string {
  const body = c.kind === "raw" ? c.bytes : c.body;
  return JSON.stringify({ ...c, ...(c.kind === "raw" ? { bytes: undefined } : { body: undefined }), text: body?.toString("latin1").slice(0, 200) }).slice(0, 400);
}

async function main(): Promise<void> {
  const { child, url: base, stderr: childStderr } = await startNode(["--fixture", FIXTURE], "pipe");
  let exited: number | null = child.exitCode;
  child.on("exit", (code) => (exited = code ?? -1));
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const rng = new Rng(SEED);
  const outcomes = new Map<Outcome, number>();
  /** The /proof/multi key class (every prefix byte, wrong lengths) on its own: it once answered 500. */
  const multiKeys = new Map<Outcome, number>();
  const failures: string[] = [];
  const deadline = Date.now() + MAX_SECONDS * 1000;
  const started = Date.now();
  let sent = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (sent < CASES && Date.now() < deadline && exited === null) {
        const c = fuzzCase(rng);
        sent++;
        const o = await sendCase(base, c, agent);
        outcomes.set(o, (outcomes.get(o) ?? 0) + 1);
        if (c.kind === "http" && c.class === "multi-keys") multiKeys.set(o, (multiKeys.get(o) ?? 0) + 1);
        if ((o === 500 || o === "timeout") && failures.length < 10) failures.push(`${String(o)}: ${describe(c)}`);
      }
    }),
  );
  agent.destroy();
  const seconds = (Date.now() - started) / 1000;
  const alive = exited === null;
  const check = alive ? await fetch(new URL("/cbqs/finalized-view", base)).then((r) => r.status).catch(() => 0) : 0;
  child.kill("SIGTERM");
  const code = await new Promise<number>((resolve) => (exited !== null ? resolve(exited) : child.on("exit", (c) => resolve(c ?? -1))));
  const internal = childStderr().split("\n").filter((l) => l.includes('"level":"error"'));
  const table = (m: Map<Outcome, number>) => [...m].sort((a, b) => String(a[0]).localeCompare(String(b[0]))).map(([o, k]) => `${o}: ${k}`).join(", ");
  console.log(`fuzz-node: ${sent} requests in ${seconds.toFixed(1)} s (seed ${SEED}, concurrency ${CONCURRENCY}); outcomes ${table(outcomes)}`);
  console.log(`fuzz-node: of which /proof/multi keys of every prefix and length: ${[...multiKeys.values()].reduce((a, b) => a + b, 0)}; outcomes ${table(multiKeys)}`);
  console.log(`fuzz-node: alive to the end: ${alive}; well-formed request afterwards: HTTP ${check}; exit on SIGTERM: ${code}; internal errors logged: ${internal.length}`);
  const ok = sent >= Math.min(CASES, 10_000) && failures.length === 0 && alive && check === 200 && code === 0 && internal.length === 0;
  for (const f of failures) console.log(`  ${f}`);
  for (const l of internal.slice(0, 5)) console.log(`  ${l.slice(0, 400)}`);
  console.log(ok ? "fuzz-node: clean" : "fuzz-node: FAILED");
  process.exitCode = ok ? 0 : 1;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
