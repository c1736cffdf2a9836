// QMDB "any" operations and their byte encodings, as commonware's codec writes them
// (storage/src/qmdb/any/operation/{mod,variable,fixed}.rs, qmdb/operation.rs,
// merkle/location.rs, codec/src/varint.rs at dc41a895f069). The encoded operation is the
// element hashed into the operation log's MMR leaf (CIP-4 §5.1), and it is also what the log
// stores: every field a database needs is read back from these bytes.
import { u64BE } from "../../src/bytes.js";
import { CodecError, decodeByteVec, decodeLength, encodeVarint } from "../kv/codec.js";

/** Bytes of the LEB128 varint of a u32. */
function varintLength(n: number): number {
  let length = 1;
  while (n >= 0x80) {
    n = Math.floor(n / 0x80);
    length++;
  }
  return length;
}

export const DELETE_CONTEXT = 0xd1;
export const UPDATE_CONTEXT = 0xd2;
export const COMMIT_CONTEXT = 0xd3;

/** One entry of the operation log. Commit metadata is always absent in this emulator. */
export type Operation =
  | { readonly kind: "update"; readonly key: Uint8Array; readonly value: Uint8Array }
  | { readonly kind: "delete"; readonly key: Uint8Array }
  | { readonly kind: "commit"; readonly floor: number };

/**
 * Both directions of one encoding. In every encoding byte 0 is the context byte and an Update's
 * or Delete's key follows at bytes 1..1+keyLength, so a database reads kinds and keys in place.
 */
export interface OperationCodec {
  readonly keyLength: number;
  encode(op: Operation): Uint8Array;
  decode(bytes: Uint8Array): Operation;
  /** The value of an encoded Update (a fresh copy). */
  updateValue(bytes: Uint8Array): Uint8Array;
}

/** A value type's own codec inside the variable encoding. */
export interface ValueCodec {
  encodedLength(value: Uint8Array): number;
  /** Writes the encoding of `value` at `offset` of `out`. */
  encodeInto(value: Uint8Array, out: Uint8Array, offset: number): void;
  /** Reads the value starting at `offset`, which must extend exactly to the end. */
  decode(bytes: Uint8Array, offset: number): Uint8Array;
}

function malformed(what: string): never {
  throw new CodecError(`malformed operation: ${what}`);
}

function checkKey(bytes: Uint8Array, keyLength: number): void {
  if (bytes.length < 1 + keyLength) malformed("truncated key");
}

/**
 * Variable encoding (`VariableEncoding`): context byte, then the fields back to back.
 * The value codec is the value type's own: raw bytes for a fixed-size digest, varint length +
 * bytes for `Vec<u8>`. Keys are fixed-size arrays, written raw.
 */
export function variableCodec(keyLength: number, value: ValueCodec): OperationCodec {
  const updateValue = (bytes: Uint8Array): Uint8Array => value.decode(bytes, 1 + keyLength);
  return {
    keyLength,
    encode(op) {
      switch (op.kind) {
        case "delete": {
          const out = new Uint8Array(1 + op.key.length);
          out[0] = DELETE_CONTEXT;
          out.set(op.key, 1);
          return out;
        }
        case "update": {
          // One allocation: this runs for every write of every block.
          const out = new Uint8Array(1 + op.key.length + value.encodedLength(op.value));
          out[0] = UPDATE_CONTEXT;
          out.set(op.key, 1);
          value.encodeInto(op.value, out, 1 + op.key.length);
          return out;
        }
        case "commit": {
          // Option::None (one 0 byte) then the floor Location as a varint.
          const floor = encodeVarint(op.floor);
          const out = new Uint8Array(2 + floor.length);
          out[0] = COMMIT_CONTEXT;
          out.set(floor, 2);
          return out;
        }
      }
    },
    decode(bytes) {
      switch (bytes[0]) {
        case DELETE_CONTEXT:
          if (bytes.length !== 1 + keyLength) malformed("delete length");
          return { kind: "delete", key: bytes.slice(1) };
        case UPDATE_CONTEXT:
          checkKey(bytes, keyLength);
          return { kind: "update", key: bytes.slice(1, 1 + keyLength), value: updateValue(bytes) };
        case COMMIT_CONTEXT: {
          if (bytes[1] !== 0) malformed("commit metadata");
          // A location fits far below 2^53; decodeLength covers every floor this emulator reaches.
          const [floor, end] = decodeLength(bytes, 2, "commit floor");
          if (end !== bytes.length) malformed("trailing bytes");
          return { kind: "commit", floor };
        }
        default:
          return malformed(`context byte ${bytes[0]}`);
      }
    },
    updateValue,
  };
}

/**
 * Fixed encoding (`FixedEncoding`): every operation is zero-padded to the largest of
 * update (1+K+V), commit (1+1+V+8) and delete (1+K) sizes; the commit floor is a u64 BE.
 */
export function fixedCodec(keySize: number, valueSize: number): OperationCodec {
  const total = Math.max(1 + keySize + valueSize, 2 + valueSize + 8, 1 + keySize);
  const checkLength = (bytes: Uint8Array, size: number, what: string): void => {
    if (bytes.length !== size) throw new RangeError(`${what} must be ${size} bytes, got ${bytes.length}`);
  };
  const updateValue = (bytes: Uint8Array): Uint8Array => bytes.slice(1 + keySize, 1 + keySize + valueSize);
  return {
    keyLength: keySize,
    encode(op) {
      const out = new Uint8Array(total);
      switch (op.kind) {
        case "delete":
          checkLength(op.key, keySize, "key");
          out[0] = DELETE_CONTEXT;
          out.set(op.key, 1);
          return out;
        case "update":
          checkLength(op.key, keySize, "key");
          checkLength(op.value, valueSize, "value");
          out[0] = UPDATE_CONTEXT;
          out.set(op.key, 1);
          out.set(op.value, 1 + keySize);
          return out;
        case "commit":
          // None metadata: a 0 flag byte plus V zero bytes, then the floor.
          out[0] = COMMIT_CONTEXT;
          out.set(u64BE(op.floor), 2 + valueSize);
          return out;
      }
    },
    decode(bytes) {
      if (bytes.length !== total) malformed("length");
      switch (bytes[0]) {
        case DELETE_CONTEXT:
          return { kind: "delete", key: bytes.slice(1, 1 + keySize) };
        case UPDATE_CONTEXT:
          return { kind: "update", key: bytes.slice(1, 1 + keySize), value: updateValue(bytes) };
        case COMMIT_CONTEXT: {
          let floor = 0;
          for (let i = 2 + valueSize; i < 10 + valueSize; i++) floor = floor * 256 + bytes[i]!;
          return { kind: "commit", floor };
        }
        default:
          return malformed(`context byte ${bytes[0]}`);
      }
    },
    updateValue,
  };
}

/** Raw bytes: the codec of a fixed-size digest value. */
export const rawValue: ValueCodec = {
  encodedLength: (value) => value.length,
  encodeInto: (value, out, offset) => out.set(value, offset),
  decode: (bytes, offset) => bytes.slice(offset),
};

/** `Vec<u8>`: varint length (as u32) then the bytes. */
export const byteVecValue: ValueCodec = {
  encodedLength(value) {
    if (value.length > 0xffff_ffff) throw new CodecError("value longer than u32::MAX bytes");
    return varintLength(value.length) + value.length;
  },
  encodeInto(value, out, offset) {
    let v = value.length;
    let at = offset;
    while (v >= 0x80) {
      out[at++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    out[at++] = v;
    out.set(value, at);
  },
  decode(bytes, offset) {
    const [value, end] = decodeByteVec(bytes, offset, "value");
    if (end !== bytes.length) malformed("trailing bytes");
    return value;
  },
};
