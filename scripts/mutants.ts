// Mutants of the compiled emulator for proving `cbqs fuzz` (docs/fuzzing.md "Mutants"): each one
// is a COPY of dist/ in a temporary directory with one plausible consensus bug patched into one
// function's JavaScript text. The real engine has no mutant switch of any kind. Used by
// scripts/fuzz-mutants.ts (the table in the docs) and test/fuzz/mutants.test.ts.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { T8nInputs } from "../src/fuzz/build.js";
import { parseTargetOutput, type T8nTarget } from "../src/fuzz/target.js";

export interface Mutant {
  name: string;
  /** The bug in words, with the CIP-39 section it breaks. */
  bug: string;
  /** File under dist/ and the exact text replaced (it must occur exactly once). */
  file: string;
  from: string;
  to: string;
}

export const MUTANTS: readonly Mutant[] = [
  {
    name: "settled-blocks-off-by-one",
    bug: "§6.1 partial payment: last_settled_block advances one block more than the escrow paid for",
    file: "instructions/settle.js",
    from: `addU64(record.last_settled_block, paidBlocks, "last_settled_block")`,
    to: `addU64(record.last_settled_block, paidBlocks + 1n, "last_settled_block")`,
  },
  {
    name: "provider-share-rounded-up",
    bug: "§6.1 rent split: provider_share = ceil(paid × provider_bps / 10000) instead of floor",
    file: "instructions/settle.js",
    from: `mulU128(paid, bounds.get("cbqs.rent.provider_bps"), "provider share") / 10000n`,
    to: `(mulU128(paid, bounds.get("cbqs.rent.provider_bps"), "provider share") + 9999n) / 10000n`,
  },
  {
    name: "key-stream-mirror-forgotten",
    bug: "§4.1: SettleStreamRent writes the main record but not its linked key stream",
    file: "instructions/settle-stream-rent.js",
    from: `for (const r of pairRecords(settled.record))`,
    to: `for (const r of [settled.record])`,
  },
  {
    name: "quote-accepted-one-block-late",
    bug: "§4.4: a quote is still accepted at valid_until_block + 1",
    file: "instructions/pricing.js",
    from: `if (quote.valid_until_block < ctx.height)`,
    to: `if (quote.valid_until_block + 1n < ctx.height)`,
  },
  {
    name: "pause-breaker-end-inclusive",
    bug: "Denial of service: the breaker still covers 0x17 at expires_at_block (the interval [paused_at, expires_at) read as closed)",
    file: "src/engine/pause.js",
    from: `height >= a.paused_at_block && height < a.expires_at_block`,
    to: `height >= a.paused_at_block && height <= a.expires_at_block`,
  },
  {
    name: "pause-coverage-end-exclusive",
    bug: "Denial of service: coverage(H) caps an expired interval at expires_at_block − 1 (its last block left uncounted)",
    file: "src/engine/pause.js",
    from: `height < record.active.expires_at_block ? height : record.active.expires_at_block;`,
    to: `height < record.active.expires_at_block ? height : record.active.expires_at_block - 1n;`,
  },
];

/** Copies `<root>/dist` to a new temporary directory with package.json and a node_modules link, so `node <dir>/dist/src/cli.js t8n` runs. */
export function copyDist(root: string, label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `cbqs-${label}-`));
  // Without source maps: they point at sources the copy does not have. The comments naming them
  // go too, or every import of the copy makes vite log a missing-map stack trace.
  cpSync(join(root, "dist"), join(dir, "dist"), { recursive: true, filter: (from) => !from.endsWith(".map") });
  stripSourceMapComments(join(dir, "dist"));
  cpSync(join(root, "package.json"), join(dir, "package.json"));
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir");
  return dir;
}

function stripSourceMapComments(dir: string): void {
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".js")) continue;
    const file = join(entry.parentPath, entry.name);
    const text = readFileSync(file, "utf8");
    const stripped = text.replace(/\n\/\/# sourceMappingURL=\S+\s*$/, "\n");
    if (stripped !== text) writeFileSync(file, stripped);
  }
}

/** A copy of dist/ with the mutant patched in; returns its directory. */
export function buildMutant(root: string, mutant: Mutant): string {
  const dir = copyDist(root, `mutant-${mutant.name}`);
  const file = join(dir, "dist", mutant.file);
  const text = readFileSync(file, "utf8");
  const count = text.split(mutant.from).length - 1;
  if (count !== 1) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`mutant ${mutant.name}: "${mutant.from}" occurs ${count} times in dist/${mutant.file} (expected once): update its pattern`);
  }
  writeFileSync(file, text.replace(mutant.from, mutant.to));
  return dir;
}

export const removeMutant = (dir: string): void => rmSync(dir, { recursive: true, force: true });

/**
 * The mutant's own t8n, loaded in this process (no child per block): the same transition and
 * dump code the mutant's `cbqs t8n` runs, for fast tests. The command path is what the script uses.
 */
export async function moduleTarget(dir: string): Promise<T8nTarget> {
  const load = (path: string) => import(pathToFileURL(join(dir, "dist", path)).href) as Promise<Record<string, any>>;
  const t8n = await load("src/harness/t8n.js");
  const dump = await load("state/dump.js");
  const records = await load("src/harness/records.js");
  return {
    async run(inputs: T8nInputs) {
      const r = t8n.transition(inputs.alloc, inputs.txs, inputs.env);
      const post = dump.dumpState(r.store, { height: inputs.env.height, decodeSlot: records.registryRecords });
      return parseTargetOutput(JSON.stringify(r.result), JSON.stringify(post), "");
    },
    close() {},
  };
}
