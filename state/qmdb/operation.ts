// QMDB "any" operations and their byte encodings, as commonware's codec writes them
// (storage/src/qmdb/any/operation/{mod,variable,fixed}.rs, qmdb/operation.rs,
// merkle/location.rs, codec/src/varint.rs at dc41a895f069). The encoded operation is the
// element hashed into the operation log's MMR leaf (CIP-4 §5.1).
import { concatBytes, u64BE } from "../../src/bytes.js";
import { encodeByteVec, encodeVarint } from "../codec.js";

const DELETE_CONTEXT = 0xd1;
const UPDATE_CONTEXT = 0xd2;
const COMMIT_CONTEXT = 0xd3;

/** One entry of the operation log. Commit metadata is always absent in this emulator. */
export type Operation =
  | { readonly kind: "update"; readonly key: Uint8Array; readonly value: Uint8Array }
  | { readonly kind: "delete"; readonly key: Uint8Array }
  | { readonly kind: "commit"; readonly floor: number };

export interface OperationCodec {
  encode(op: Operation): Uint8Array;
}

/**
 * Variable encoding (`VariableEncoding`): context byte, then the fields back to back.
 * `encodeValue` is the value type's own codec: raw bytes for a fixed-size digest,
 * varint length + bytes for `Vec<u8>`. Keys are fixed-size arrays, written raw.
 */
export function variableCodec(encodeValue: (value: Uint8Array) => Uint8Array): OperationCodec {
  return {
    encode(op) {
      switch (op.kind) {
        case "delete":
          return concatBytes(Uint8Array.of(DELETE_CONTEXT), op.key);
        case "update": {
          // Written in place (one allocation): this runs for every operation of every block.
          const value = encodeValue(op.value);
          const out = new Uint8Array(1 + op.key.length + value.length);
          out[0] = UPDATE_CONTEXT;
          out.set(op.key, 1);
          out.set(value, 1 + op.key.length);
          return out;
        }
        case "commit":
          // Option::None (one 0 byte) then the floor Location as a varint.
          return concatBytes(Uint8Array.of(COMMIT_CONTEXT, 0), encodeVarint(op.floor));
      }
    },
  };
}

/**
 * Fixed encoding (`FixedEncoding`): every operation is zero-padded to the largest of
 * update (1+K+V), commit (1+1+V+8) and delete (1+K) sizes; the commit floor is a u64 BE.
 */
export function fixedCodec(keySize: number, valueSize: number): OperationCodec {
  const total = Math.max(1 + keySize + valueSize, 2 + valueSize + 8, 1 + keySize);
  const padded = (...parts: Uint8Array[]): Uint8Array => {
    const out = new Uint8Array(total);
    out.set(concatBytes(...parts));
    return out;
  };
  const checkLength = (bytes: Uint8Array, size: number, what: string): void => {
    if (bytes.length !== size) throw new RangeError(`${what} must be ${size} bytes, got ${bytes.length}`);
  };
  return {
    encode(op) {
      switch (op.kind) {
        case "delete":
          checkLength(op.key, keySize, "key");
          return padded(Uint8Array.of(DELETE_CONTEXT), op.key);
        case "update":
          checkLength(op.key, keySize, "key");
          checkLength(op.value, valueSize, "value");
          return padded(Uint8Array.of(UPDATE_CONTEXT), op.key, op.value);
        case "commit":
          // None metadata: a 0 flag byte plus V zero bytes, then the floor.
          return padded(Uint8Array.of(COMMIT_CONTEXT, 0), new Uint8Array(valueSize), u64BE(op.floor));
      }
    },
  };
}

/** Raw bytes: the codec of a fixed-size digest value. */
export const rawValue = (value: Uint8Array): Uint8Array => value;

/** `Vec<u8>`: varint length (as u32) then the bytes. */
export const byteVecValue = (value: Uint8Array): Uint8Array => encodeByteVec("value", value);
