// `cbqs check sig`: CIP-39 §9.1 strict Ed25519 verification of one (key, message, signature).
import { fromHex } from "../bytes.js";
import { ED25519_PUBLIC_KEY_LENGTH, ED25519_SIGNATURE_LENGTH, verifyStrictDetailed } from "../crypto/ed25519.js";
import { EXIT_OK, EXIT_REJECT, exitCodes, option, report, requiredOption } from "./common.js";
import type { CommandSpec } from "./define.js";

export const commands: Readonly<Record<string, CommandSpec>> = {
  sig: {
    description: "verify an Ed25519 signature with ed25519-dalek 2.2 verify_strict semantics (CIP-39 §9.1)",
    options: () => [
      requiredOption("--pub <hex>", "public key, 0x-prefixed hex of 32 bytes"),
      requiredOption("--msg <hex>", "message, 0x-prefixed hex"),
      requiredOption("--sig <hex>", "signature R || S, 0x-prefixed hex of 64 bytes"),
      option("--json", "print the result as JSON"),
    ],
    exits: exitCodes("valid", "invalid (non-canonical encoding, small-order point, failed equation: the reason is printed)", "malformed hex, a key that is not 32 bytes or a signature that is not 64"),
    action: (opts: { pub: string; msg: string; sig: string; json?: boolean }) => {
      // The rule of every verifier: malformed input is exit 2, and 1 is only for a well-formed
      // signature that does not verify — a key or signature of the wrong length is not one.
      const publicKey = fromHex(opts.pub, ED25519_PUBLIC_KEY_LENGTH, "--pub");
      const message = fromHex(opts.msg, undefined, "--msg");
      const signature = fromHex(opts.sig, ED25519_SIGNATURE_LENGTH, "--sig");
      const result = verifyStrictDetailed(publicKey, message, signature);
      report(opts.json === true, result.valid ? "valid" : `invalid: ${result.reason}`, result);
      process.exitCode = result.valid ? EXIT_OK : EXIT_REJECT;
    },
  },
};
