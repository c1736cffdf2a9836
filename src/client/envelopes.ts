// The one transaction a client can build without the rest of the library: a native transfer, the
// envelope `send` takes (docs/reference/formats/transaction.md). Other transactions: `cbqs tx`, or the codec.
import { encodeEnvelope } from "../chain/envelope.js";
import { bytesArg, heightArg } from "./inputs.js";
import type { BytesLike, HeightLike } from "./types.js";

export interface Transfer {
  /** The node's chain_id (Genesis.chainId). */
  chainId: HeightLike;
  from: BytesLike;
  to: BytesLike;
  /** u64 wei. */
  amount: HeightLike;
  /** The sender's next nonce: its account nonce plus its transactions still queued. */
  nonce: HeightLike;
}

/** The raw CBOR envelope of a transfer (unsigned: the emulator's envelopes carry no signature). */
export function transferEnvelope(t: Transfer): Uint8Array {
  const where = "transferEnvelope";
  return encodeEnvelope({
    chain_id: heightArg(where, t.chainId, "chainId"),
    nonce: heightArg(where, t.nonce, "nonce"),
    tx: { from: bytesArg(where, t.from, "from", 20), body: { kind: "transfer", to: bytesArg(where, t.to, "to", 20), amount: heightArg(where, t.amount, "amount") } },
  });
}
