// Mutants of the compiled emulator for proving `cbqs fuzz` (docs/reference/fuzzer.md "Mutants"): each one
// is a COPY of dist/ in a temporary directory with one plausible consensus bug patched into one
// function's JavaScript text. The real engine has no mutant switch of any kind. Used by
// scripts/fuzz-mutants.ts (the tables in the docs) and test/fuzz/mutants.test.ts, both of which
// run the mutant as an external node would be run: its own t8n server.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { T8nInputs } from "../src/target/target.js";
import { ServerTarget } from "../src/target/server-target.js";
import { CommandTarget } from "../src/target/command-target.js";
import { parseTargetOutput, type T8nTarget } from "../src/target/target.js";

export interface Mutant {
  name: string;
  /** The bug in words, with the CIP-39 section it breaks. */
  bug: string;
  /** File under dist/ and the exact text replaced (it must occur exactly once). */
  file: string;
  from: string;
  to: string;
}

/** Lines of compiled JavaScript (tsc's four-space indentation), for patches that move whole statements. */
const lines = (...text: string[]): string => text.join("\n");

// CreateStream's two admission checks in dist/instructions/create-stream.js, for the mutant that swaps them.
const NONCE_CHECK = [
  "    if (readStream(ctx, registry, streamId) !== null)",
  '        reject("OwnerNonceUsed", `owner nonce ${args.owner_nonce} was already used`);',
];
const KEY_STREAM_CHECK = [
  "    const keyStreamId = args.encrypted ? meteredKeyStreamId(ctx.meter, streamId) : null;",
  "    if (keyStreamId !== null && readStream(ctx, registry, keyStreamId) !== null) {",
  '        reject("RegistryStateInvalid", "a key stream exists for a main stream that does not");',
  "    }",
];
const OWNER_LIMIT_CHECK = [
  "    // cbqs.max_streams_per_owner (admission bound, live).",
  "    const ownerCount = readOwnerCount(ctx, owner);",
  '    if (ownerCount >= bounds.get("cbqs.max_streams_per_owner")) {',
  '        reject("OwnerStreamLimit", `owner already has ${ownerCount} live streams (cbqs.max_streams_per_owner)`);',
  "    }",
];

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
  {
    name: "unpause-erases-coverage",
    bug: "Denial of service: Unpause drops the interval without folding its elapsed blocks into completed_pause_blocks",
    file: "src/engine/pause.js",
    from: lines(`        reject("InvalidGovernanceAction", "actor has no pause interval to end");`, `    return { completed_pause_blocks: coverage(record, height), active: null };`),
    to: lines(`        reject("InvalidGovernanceAction", "actor has no pause interval to end");`, `    return { completed_pause_blocks: record.completed_pause_blocks, active: null };`),
  },
  {
    name: "partial-payment-takes-residual",
    bug: "§6.1 rounding: a partial payment takes the whole escrow, not paid_blocks × r (the sub-block residual is paid to the provider instead of staying in escrow)",
    file: "instructions/settle.js",
    from: `const paid = paidBlocks * r;`,
    to: `const paid = record.escrow_balance;`,
  },
  {
    name: "runway-end-suspends",
    bug: "§6.1 boundary: escrow exactly equal to the rent due takes the underfunded branch (escrow_balance > due), so a stream suspends at its runway's last block and a top-up to exactly the due amount does not reactivate",
    file: "instructions/settle.js",
    from: `if (r === 0n || record.escrow_balance >= due)`,
    to: `if (r === 0n || record.escrow_balance > due)`,
  },
  {
    name: "grace-expiry-one-block-late",
    bug: "§6.1 boundary: grace expires at H > suspension_grace_deadline_block instead of H >=",
    file: "instructions/settle.js",
    from: `H >= record.suspension_grace_deadline_block`,
    to: `H > record.suspension_grace_deadline_block`,
  },
  {
    name: "grace-pinned-at-settling-height",
    bug: "§6.1 suspension: suspended_at_block and the grace deadline pinned from the settling height H, not the historical paid-through height",
    file: "instructions/settle.js",
    from: `{ suspended_at_block: lastSettled, suspension_grace_deadline_block: addU64(lastSettled, graceBlocks, "grace deadline") }`,
    to: `{ suspended_at_block: H, suspension_grace_deadline_block: addU64(H, graceBlocks, "grace deadline") }`,
  },
  {
    name: "grace-repinned-by-partial-payment",
    bug: "§6.1 without the status == Active guard: a partial payment on a Suspended stream re-pins both fields, walking the grace window forward",
    file: "instructions/settle.js",
    from: `const pinned = record.status === "Active"`,
    to: `const pinned = record.status === "Active" || record.status === "Suspended"`,
  },
  {
    name: "top-up-settles-once",
    bug: "§6.1 TopUpStream: no pre-deposit settlement (credit, then settle once), so a stream in arrears is revived past its deadline and its window is paid in one split",
    file: "instructions/top-up-stream.js",
    from: `const first = settle(main, H, grace);`,
    to: `const first = { paid: 0n, record: main };`,
  },
  {
    name: "create-limit-before-nonce",
    bug: "§5 CreateStream order of checks: OwnerStreamLimit is checked before OwnerNonceUsed",
    file: "instructions/create-stream.js",
    from: lines(...NONCE_CHECK, ...KEY_STREAM_CHECK, ...OWNER_LIMIT_CHECK),
    to: lines(...OWNER_LIMIT_CHECK, ...NONCE_CHECK, ...KEY_STREAM_CHECK),
  },
  {
    name: "owner-stream-limit-off-by-one",
    bug: "cbqs.max_streams_per_owner: an owner may hold one live stream more than the limit (count > max instead of >=)",
    file: "instructions/create-stream.js",
    from: `if (ownerCount >= bounds.get("cbqs.max_streams_per_owner"))`,
    to: `if (ownerCount > bounds.get("cbqs.max_streams_per_owner"))`,
  },
  {
    name: "update-suspended-before-unauthorized",
    bug: "§5 UpdateStream order of checks: a non-owner's update of a Suspended stream fails StreamSuspended instead of Unauthorized",
    file: "instructions/update-stream.js",
    from: `if (!bytesEqual(ctx.sender, main.owner))`,
    to: `if (main.status === "Suspended") reject("StreamSuspended", "UpdateStream requires a materialized Active stream");\n    if (!bytesEqual(ctx.sender, main.owner))`,
  },
  {
    name: "key-generation-skip-accepted",
    bug: "§9.3: ActivateKeyGeneration accepts any later encryption_generation (current + 2 …), not exactly current + 1",
    file: "instructions/activate-key-generation.js",
    from: `const next = addU64(main.encryption_generation, 1n, "encryption_generation");`,
    to: `const next = receipt.encryption_generation > main.encryption_generation ? receipt.encryption_generation : addU64(main.encryption_generation, 1n, "encryption_generation");`,
  },
  {
    name: "provider-cap-at-reservation-rejected",
    bug: "§4.3 UpdateProvider: a cap exactly at its current reservation is rejected (cap <= reserved instead of <)",
    file: "instructions/update-provider.js",
    from: `if (cap < current)`,
    to: `if (cap <= current)`,
  },
  {
    name: "expiry-refund-to-sender",
    bug: "§6.1 custody: materializing DataExpired refunds the residual escrow to the transaction's sender, not the stream's owner",
    file: "instructions/terminal.js",
    from: `ctx.accounts.credit(record.owner, record.escrow_balance, "escrow refund")`,
    to: `ctx.accounts.credit(ctx.sender, record.escrow_balance, "escrow refund")`,
  },
  {
    name: "close-refunds-pre-settlement-escrow",
    bug: "§5 CloseStream custody: the record as loaded is closed, not the settled one, so the refund is the pre-settlement escrow (custody pays the accrued rent to the provider and again to the owner)",
    file: "instructions/close-stream.js",
    from: `terminate(ctx, registry, settled.record, "Closed")`,
    to: `terminate(ctx, registry, main, "Closed")`,
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

/** The mutant's own `cbqs t8n` (a copy made by buildMutant or copyDist); `--server` makes it a cbqs-t8n-server/v1 server. */
export const mutantT8n = (dir: string): string => `node ${join(dir, "dist", "src", "cli.js")} t8n`;

/** How long the mutant's t8n may take for one request (a block, a session). */
const REQUEST_TIMEOUT_MS = 60_000;

/** The mutant as an external node is run: its t8n server, one process, a session per chain. Close it after use. */
export const mutantServer = (dir: string): ServerTarget => new ServerTarget(`${mutantT8n(dir)} --server`, REQUEST_TIMEOUT_MS);

/** The mutant's t8n as a child process per block (the per-call convention). */
export const mutantCommand = (dir: string): CommandTarget => new CommandTarget(mutantT8n(dir), REQUEST_TIMEOUT_MS);

/**
 * The mutant's own t8n, loaded in this process (no child per block): the same transition and
 * dump code the mutant's `cbqs t8n` runs (scripts/fuzz-mutants.ts --in-process).
 */
export async function moduleTarget(dir: string): Promise<T8nTarget> {
  const load = (path: string) => import(pathToFileURL(join(dir, "dist", path)).href) as Promise<Record<string, any>>;
  const t8n = await load("src/harness/t8n.js");
  const dump = await load("state/kv/dump.js");
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
