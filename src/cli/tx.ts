// `cbqs tx`: one raw CBOR transaction envelope (docs/transactions.md) from a transaction written
// as a scenario writes it — what a broker or SDK author posts to a node's POST /tx. Stream
// references and signed objects with a signer seed resolve as in a scenario, against the chain
// named by --chain-id and --chain-instance.
import type { Command } from "commander";
import { fromHex, toHex } from "../bytes.js";
import { txHash } from "../chain/envelope.js";
import { buildTransaction } from "../scenario/transaction.js";
import { withJsonArg } from "./codec.js";
import { EXIT_OK, exitCodes, report } from "./common.js";
import { decimalOption } from "./harness.js";

export function register(program: Command): void {
  program
    .command("tx")
    .description("build a raw transaction envelope for a node's POST /tx from one transaction written as in a scenario (docs/scenario-format.md §2)")
    .argument("<json>", 'the transaction, inline or @file.json: {"from": "0x…", and one of "cbqs", "gov", "transfer", "raw"}')
    .requiredOption("--chain-id <n>", "the chain's numeric id (a node's GET /genesis: chain_id)")
    .requiredOption("--chain-instance <hex>", "chain_instance_id, 32 bytes (a node's GET /genesis: chain_instance_id): signs quotes and receipts, derives stream ids")
    .requiredOption("--nonce <n>", "the sender's next nonce: its account nonce (every included transaction of the sender so far, accepted or rejected), plus its transactions still queued")
    .option("--json", "print {envelope, tx_hash} as JSON")
    .addHelpText("after", exitCodes("the envelope is printed (0x-hex, the body POST /tx takes)", "(not used)", "malformed JSON or transaction (its JSON path named), bad options"))
    .action((arg: string, opts: { chainId: string; chainInstance: string; nonce: string; json?: boolean }) => {
      const chainId = decimalOption("--chain-id", opts.chainId);
      const nonce = decimalOption("--nonce", opts.nonce);
      const chainInstanceId = fromHex(opts.chainInstance, 32, "--chain-instance");
      const envelope = withJsonArg(arg, (value) => buildTransaction(value, { chainId, chainInstanceId, nonce }));
      report(opts.json === true, toHex(envelope), { envelope: toHex(envelope), tx_hash: toHex(txHash(envelope)) });
      process.exitCode = EXIT_OK;
    });
}
