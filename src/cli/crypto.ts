// `cbqs verify-sig`: CIP-39 §9.1 strict Ed25519 verification of one (key, message, signature).
import type { Command } from "commander";
import { fromHex } from "../bytes.js";
import { verifyStrictDetailed } from "../crypto/ed25519.js";
import { EXIT_OK, EXIT_REJECT, exitCodes, report } from "./common.js";

export function register(program: Command): void {
  program
    .command("verify-sig")
    .description("verify an Ed25519 signature with ed25519-dalek 2.2 verify_strict semantics (CIP-39 §9.1)")
    .requiredOption("--pub <hex>", "public key, 0x-prefixed hex (32 bytes to be valid)")
    .requiredOption("--msg <hex>", "message, 0x-prefixed hex")
    .requiredOption("--sig <hex>", "signature R || S, 0x-prefixed hex (64 bytes to be valid)")
    .option("--json", "print the result as JSON")
    .addHelpText("after", exitCodes("valid", "invalid (wrong length, non-canonical encoding, small-order point, failed equation: the reason is printed)", "malformed hex"))
    .action((opts: { pub: string; msg: string; sig: string; json?: boolean }) => {
      // Malformed hex is unusable input (exit 2); a wrong byte length is a verification reject.
      const publicKey = fromHex(opts.pub, undefined, "--pub");
      const message = fromHex(opts.msg, undefined, "--msg");
      const signature = fromHex(opts.sig, undefined, "--sig");
      const result = verifyStrictDetailed(publicKey, message, signature);
      const human = result.valid ? "valid" : `invalid: ${result.reason}`;
      report(opts.json === true, human, result);
      process.exitCode = result.valid ? EXIT_OK : EXIT_REJECT;
    });
}
