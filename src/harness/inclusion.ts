// CIP-4 §5.4 inclusion proofs of one block of a fixture: a transaction under the block's
// tx_root (from its envelope bytes) or a receipt under its receipt_root (from its expected
// receipts). The proof is checked against the root the fixture states, so a proof is only
// produced for a block whose stated root its own contents give.
import { bytesEqual, toHex } from "../bytes.js";
import { committedReceipt } from "../chain/receipts.js";
import { proveReceipt, proveTx, type InclusionProof} from "../../state/roots/roots.js";
import { noBlockAt, type Fixture } from "./fixture.js";

export type InclusionKind = "tx" | "receipt";

export class InclusionError extends Error {
  override name = "InclusionError";
  constructor(
    message: string,
    /** true: the fixture contradicts itself (a mismatch, exit 1); false: unusable request (exit 2). */
    readonly mismatch: boolean,
  ) {
    super(message);
  }
}

export function proveInclusion(fixture: Fixture, kind: InclusionKind, height: bigint, index: bigint): InclusionProof {
  const block = fixture.blocks.find((b) => b.height === height);
  if (block === undefined) throw new InclusionError(noBlockAt(fixture, height), false);
  const count = block.transactions.length;
  if (index >= BigInt(count)) throw new InclusionError(`block ${height} has ${count} ${count === 1 ? "transaction" : "transactions"}; --index ${index} is out of range`, false);
  const i = Number(index);
  const proof = kind === "tx" ? proveTx(block.transactions, i) : proveReceipt(block.receipts.map(committedReceipt), i);
  const stated = kind === "tx" ? block.tx_root : block.receipt_root;
  if (!bytesEqual(proof.root, stated)) {
    throw new InclusionError(`block ${height}: the fixture's ${kind}_root ${toHex(stated)} is not the root of its own ${kind === "tx" ? "transactions" : "receipts"} ${toHex(proof.root)}`, true);
  }
  return proof;
}
