// The transaction envelope: the exact bytes a block's tx_root commits to (CIP-4 §4.3
// "CBOR for transactions", §5.2 tx_root = BMT(keccak256(tx_i))). Specified in
// docs/reference/formats/transaction.md. One CBOR map with text keys in a FIXED order (decode rejects any
// other order, missing or extra keys), definite lengths, shortest-form integers:
//
//   version(1) chain_id from nonce kind  + kind fields:
//     "system":   opcode payload
//     "gov":      action + SetParam: name value | SetParams: values [[name, value]…]
//                 | Pause/ExtendPause: actor blocks | Unpause: actor
//     "transfer": to amount
//
// tx_hash = keccak256(envelope bytes).
import { MAX_ENVELOPE_BYTES, MAX_PARAM_NAME_BYTES, MAX_SET_PARAMS_ENTRIES, MAX_SYSTEM_PAYLOAD_BYTES } from "../bounds.js";
import { keccak256 } from "../crypto/hash.js";
import { CborError, CborReader, CborWriter } from "./cbor.js";
import type { GovAction, Transaction, TxBody } from "../engine/inputs.js";

export const ENVELOPE_VERSION = 1n;
// The envelope's bounds live with every other input bound (src/bounds.ts).
export { MAX_ENVELOPE_BYTES, MAX_PARAM_NAME_BYTES, MAX_SET_PARAMS_ENTRIES, MAX_SYSTEM_PAYLOAD_BYTES };

const U64_MAX = (1n << 64n) - 1n;

export interface TxEnvelope {
  chain_id: bigint;
  /** The sender's nonce for this transaction (docs/reference/formats/transaction.md). */
  nonce: bigint;
  tx: Transaction;
}

export class EnvelopeError extends Error {
  override name = "EnvelopeError";
  constructor(
    readonly kind: CborError["kind"] | "UnsupportedVersion" | "UnknownKind",
    readonly offset: number,
    reason: string,
  ) {
    super(`invalid transaction envelope: ${reason}`);
  }
}

export function encodeEnvelope(env: TxEnvelope): Uint8Array {
  const body = env.tx.body;
  const w = new CborWriter();
  w.map(5 + bodyFieldCount(body));
  w.text("version").uint(ENVELOPE_VERSION);
  w.text("chain_id").uint(env.chain_id);
  w.text("from").bytes(checkAddress(env.tx.from, "from"));
  w.text("nonce").uint(env.nonce);
  w.text("kind").text(body.kind);
  switch (body.kind) {
    case "system":
      if (!Number.isInteger(body.opcode) || body.opcode < 0 || body.opcode > 255) {
        throw new RangeError(`opcode ${body.opcode} is not a u8`);
      }
      if (body.payload.length > MAX_SYSTEM_PAYLOAD_BYTES) throw new RangeError("system payload too large");
      w.text("opcode").uint(body.opcode);
      w.text("payload").bytes(body.payload);
      break;
    case "gov":
      writeGov(w, body.action);
      break;
    case "transfer":
      w.text("to").bytes(checkAddress(body.to, "to"));
      w.text("amount").uint(body.amount);
      break;
  }
  return w.finish();
}

function bodyFieldCount(body: TxBody): number {
  switch (body.kind) {
    case "system":
    case "transfer":
      return 2;
    case "gov":
      return body.action.type === "Unpause" || body.action.type === "SetParams" ? 2 : 3;
  }
}

function writeGov(w: CborWriter, action: GovAction): void {
  w.text("action").text(action.type);
  switch (action.type) {
    case "SetParam":
      w.text("name").text(action.name);
      w.text("value").uint(action.value);
      break;
    case "SetParams":
      if (action.values.length > MAX_SET_PARAMS_ENTRIES) throw new RangeError("too many SetParams entries");
      w.text("values").array(action.values.length);
      for (const { name, value } of action.values) w.array(2).text(name).uint(value);
      break;
    case "Pause":
    case "ExtendPause":
      w.text("actor").bytes(checkAddress(action.actor, "actor"));
      w.text("blocks").uint(action.blocks);
      break;
    case "Unpause":
      w.text("actor").bytes(checkAddress(action.actor, "actor"));
      break;
  }
}

function checkAddress(a: Uint8Array, what: string): Uint8Array {
  if (a.length !== 20) throw new RangeError(`${what} must be a 20-byte address`);
  return a;
}

/** Strict decode: exactly the bytes `encodeEnvelope` produces, nothing else. */
export function decodeEnvelope(bytes: Uint8Array): TxEnvelope {
  if (bytes.length > MAX_ENVELOPE_BYTES) {
    throw new EnvelopeError("BoundExceeded", 0, `${bytes.length} bytes exceed ${MAX_ENVELOPE_BYTES}`);
  }
  try {
    return readEnvelope(new CborReader(bytes));
  } catch (err) {
    if (err instanceof CborError) throw new EnvelopeError(err.kind, err.offset, err.message);
    throw err;
  }
}

function readEnvelope(r: CborReader): TxEnvelope {
  const fields = r.map("envelope", 16);
  r.key("version");
  const versionAt = r.pos;
  const version = r.uint("version");
  if (version !== ENVELOPE_VERSION) {
    throw new EnvelopeError("UnsupportedVersion", versionAt, `unsupported envelope version ${version}`);
  }
  r.key("chain_id");
  const chain_id = r.uint("chain_id", U64_MAX);
  r.key("from");
  const from = r.bytes("from", 20, 20);
  r.key("nonce");
  const nonce = r.uint("nonce", U64_MAX);
  r.key("kind");
  const kindAt = r.pos;
  const kind = r.text("kind", 16);
  let body: TxBody;
  switch (kind) {
    case "system": {
      r.key("opcode");
      const opcode = Number(r.uint("opcode", 255n));
      r.key("payload");
      body = { kind, opcode, payload: r.bytes("payload", MAX_SYSTEM_PAYLOAD_BYTES) };
      break;
    }
    case "gov":
      body = { kind, action: readGov(r) };
      break;
    case "transfer": {
      r.key("to");
      const to = r.bytes("to", 20, 20);
      r.key("amount");
      body = { kind, to, amount: r.uint("amount", U64_MAX) };
      break;
    }
    default:
      throw new EnvelopeError("UnknownKind", kindAt, `unknown transaction kind "${kind}"`);
  }
  if (fields !== 5 + bodyFieldCount(body)) {
    throw new EnvelopeError("NonCanonical", 0, `map has ${fields} entries, the ${kind} envelope has ${5 + bodyFieldCount(body)}`);
  }
  r.end();
  return { chain_id, nonce, tx: { from, body } };
}

function readGov(r: CborReader): GovAction {
  r.key("action");
  const at = r.pos;
  const type = r.text("action", 16);
  switch (type) {
    case "SetParam": {
      r.key("name");
      const name = r.text("name", MAX_PARAM_NAME_BYTES);
      r.key("value");
      return { type, name, value: r.uint("value") };
    }
    case "SetParams": {
      r.key("values");
      const n = r.array("values", MAX_SET_PARAMS_ENTRIES);
      const values: { name: string; value: bigint }[] = [];
      for (let i = 0; i < n; i++) {
        const pairAt = r.pos;
        if (r.array("SetParams entry", 2) !== 2) throw new EnvelopeError("NonCanonical", pairAt, "SetParams entry must be [name, value]");
        const name = r.text("name", MAX_PARAM_NAME_BYTES);
        values.push({ name, value: r.uint("value") });
      }
      return { type, values };
    }
    case "Pause":
    case "ExtendPause": {
      r.key("actor");
      const actor = r.bytes("actor", 20, 20);
      r.key("blocks");
      return { type, actor, blocks: r.uint("blocks") };
    }
    case "Unpause":
      r.key("actor");
      return { type, actor: r.bytes("actor", 20, 20) };
    default:
      throw new EnvelopeError("UnknownKind", at, `unknown governance action "${type}"`);
  }
}

/** CIP-4 §5.2 leaf: keccak256 of the envelope bytes. */
export function txHash(envelopeBytes: Uint8Array): Uint8Array {
  return keccak256(envelopeBytes);
}
