// `cbqs verify-proof <proof.json> --root <hex>`: standalone check of a CIP-4 state proof
// (Appendix C single-key or §8.2 batch) against a state root. Exit 0 valid, 1 invalid,
// 2 unusable input (missing file, not JSON, not a proof document, bad --root).
// `cbqs prove-state`: the reference proof of one key — against a chain's own root (a fixture's
// block, replayed; a store's head) or against a state dump committed as one batch — to check a
// node's verifier against (and to give `verify-proof` an input).
import { writeFileSync } from "node:fs";
import type { Command } from "commander";
import { fromHex, toHex } from "../bytes.js";
import { BLAKE3, SHA256 } from "../crypto/hash.js";
import { DumpError, loadDump } from "../../state/dump.js";
import { createStateCommitment, stateDbConfig } from "../../state/qmdb/index.js";
import { proveKey, verifyStateProof } from "../../state/proof.js";
import { MemoryStateStore } from "../../state/store.js";
import { STATE_KEY_LENGTH } from "../../state/interface.js";
import { EXIT_OK, EXIT_REJECT, readTextFile, UsageError, report } from "./common.js";
import { FIXTURE_FORMAT, FixtureError, loadFixture, type Fixture } from "../harness/fixture.js";
import { proveAtHeight } from "../harness/prove-at-height.js";
import { ReplayInputError } from "../harness/replay.js";
import { mismatchLines } from "./harness.js";
import { readDocument } from "./state.js";
import { openExistingStore } from "./store.js";

const HASHERS = { blake3: BLAKE3, sha256: SHA256 } as const;

export function register(program: Command): void {
  program
    .command("verify-proof")
    .description("verify a CIP-4 state proof (Appendix C, or a §8.2 batch proof) against a state root")
    .argument("<proof.json>", "proof file")
    .requiredOption("--root <hex>", "state root, 0x-prefixed 32-byte hex")
    .option("--hasher <name>", "hash function of the database: blake3 (Cowboy state) or sha256", "blake3")
    .option("--json", "print the result as JSON")
    .action((file: string, opts: { root: string; hasher: string; json?: boolean }) => {
      const hasher = HASHERS[opts.hasher as keyof typeof HASHERS];
      if (hasher === undefined) throw new UsageError(`unknown --hasher ${opts.hasher} (blake3 or sha256)`);
      const root = fromHex(opts.root, 32, "--root");
      const proof = readJsonFile(file);
      // A document without "proof_version" is not a proof at all (unusable input, exit 2, as in
      // verify-bmt-proof); one that has it and fails any check is an invalid proof (exit 1).
      if (typeof proof !== "object" || proof === null || Array.isArray(proof) || !Object.hasOwn(proof, "proof_version")) {
        throw new UsageError(`${file}: not a state proof (a JSON object with "proof_version")`);
      }
      const result = verifyStateProof(proof, root, stateDbConfig(hasher));
      report(opts.json === true, result.valid ? "valid" : `invalid: ${result.reason}`, result);
      process.exitCode = result.valid ? EXIT_OK : EXIT_REJECT;
    });

  program
    .command("prove-state")
    .description(
      "write the CIP-4 Appendix C proof of one key and print the root it verifies against: of a chain's block " +
        "(<fixture> --height h: replayed, every root checked; --db: the store's head), or of a state dump committed as one batch",
    )
    .argument("[file]", "a cbqs-fixture/v1 (.json or .json.gz, with --height) or a cbqs-state-dump/v1 file")
    .requiredOption("--key <hex>", "state key, 0x-prefixed 54-byte hex (absent key: an exclusion proof)")
    .option("--height <h>", "with a fixture: prove at its last block at or below this height, against that block's state_root")
    .option("--db <dir>", "prove against the head of this store (no file)")
    .option("-o, --output <file>", "proof file (default: stdout, and the root goes to stderr)")
    .action((file: string | undefined, opts: { key: string; height?: string; db?: string; output?: string }) => {
      const key = fromHex(opts.key, STATE_KEY_LENGTH, "--key");
      if ((file === undefined) === (opts.db === undefined)) throw new UsageError("give either a file or --db <dir>");
      let result: { root: Uint8Array; proof: unknown };
      if (opts.db !== undefined) {
        if (opts.height !== undefined) throw new UsageError("--height needs a fixture; --db proves at the store's head");
        const db = openExistingStore(opts.db);
        try {
          result = { root: db.head()!.state_root, proof: db.proveKey(key) };
        } finally {
          db.close();
        }
      } else {
        const doc = readDocument(file!);
        if ((doc as { format?: unknown }).format === FIXTURE_FORMAT) {
          if (opts.height === undefined) throw new UsageError(`${file}: a fixture needs --height (the block whose state_root to prove against)`);
          if (!/^[0-9]{1,20}$/.test(opts.height)) throw new UsageError(`--height must be a block height (got ${opts.height})`);
          let fixture: Fixture;
          try {
            fixture = loadFixture(doc);
          } catch (err) {
            if (err instanceof FixtureError) throw new UsageError(`${file}: ${err.message}`);
            throw err;
          }
          let proved: ReturnType<typeof proveAtHeight>;
          try {
            proved = proveAtHeight(fixture, BigInt(opts.height), key);
          } catch (err) {
            if (err instanceof ReplayInputError) throw new UsageError(`${file}: ${err.message}`);
            throw err;
          }
          if ("mismatch" in proved) {
            process.stderr.write(mismatchLines(file!, proved.mismatch).join("\n") + "\n");
            process.exitCode = EXIT_REJECT;
            return;
          }
          result = proved;
        } else {
          if (opts.height !== undefined) throw new UsageError(`${file}: --height needs a fixture; a state dump has one state`);
          result = proveStateKey(doc, key, file!);
        }
      }
      const text = JSON.stringify(result.proof, null, 2) + "\n";
      if (opts.output === undefined) {
        process.stdout.write(text);
        process.stderr.write(`state_root ${toHex(result.root)}\n`);
      } else {
        try {
          writeFileSync(opts.output, text);
        } catch (err) {
          throw new UsageError(`cannot write ${opts.output}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
        }
        process.stdout.write(toHex(result.root) + "\n");
      }
      process.exitCode = EXIT_OK;
    });
}

/**
 * The dump's entries committed as ONE batch into a fresh Cowboy state database (QMDB "current",
 * Blake3): the same convention as t8n's pre-state (docs/fixtures.md §4), so the root equals a
 * chain's state_root only where the chain reached that state in one batch too (genesis).
 */
export function proveStateKey(dump: unknown, key: Uint8Array, file: string): { root: Uint8Array; proof: ReturnType<typeof proveKey> } {
  let entries: Array<[Uint8Array, Uint8Array]>;
  try {
    entries = loadDump(dump);
  } catch (err) {
    if (err instanceof DumpError) throw new UsageError(`${file}: ${err.message}`);
    throw err;
  }
  const commitment = createStateCommitment();
  const store = MemoryStateStore.fromEntries(entries, 0n, commitment);
  return { root: store.root(), proof: proveKey(commitment.db, key) };
}

function readJsonFile(file: string): unknown {
  const text = readTextFile(file);
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`${file} is not valid JSON`);
  }
}
