// `cbqs verify-proof <proof.json> --root <hex>`: standalone check of a CIP-4 state proof
// (Appendix C single-key or §8.2 batch) against a state root. Exit 0 valid, 1 invalid,
// 2 unreadable input (missing file, not JSON, bad --root).
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { fromHex } from "../bytes.js";
import { BLAKE3, SHA256 } from "../crypto/hash.js";
import { stateDbConfig } from "../../state/qmdb/index.js";
import { verifyStateProof } from "../../state/proof.js";
import { EXIT_OK, EXIT_REJECT, UsageError, report } from "./common.js";

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
      let text: string;
      try {
        text = readFileSync(file, "utf8");
      } catch (err) {
        throw new UsageError(`cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`);
      }
      let proof: unknown;
      try {
        proof = JSON.parse(text);
      } catch {
        throw new UsageError(`${file} is not valid JSON`);
      }
      const result = verifyStateProof(proof, root, stateDbConfig(hasher));
      report(opts.json === true, result.valid ? "valid" : `invalid: ${result.reason}`, result);
      process.exitCode = result.valid ? EXIT_OK : EXIT_REJECT;
    });
}
