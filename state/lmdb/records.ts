// Byte encodings of what the persistent ChainDb stores besides the QMDB: block records, the
// genesis record, transaction locations and reverse-diff values. Fixed-width integers are
// big-endian, lengths and counts commonware-codec varints (state/kv/codec.ts), text UTF-8, flags one
// byte 0 or 1. Decoding is canonical (decode then encode gives the same bytes) and checks every
// length against the remaining bytes first; a record that does not decode means the store is
// damaged (DamagedRecordError, a StoreError), or, read from a snapshot file, that the file is.
import { concatBytes, u64BE } from "../../src/bytes.js";
import type { BlockRecord, GenesisRecord, ReceiptRecord, TxLocation } from "../chain-db/chain-db.js";
import { CodecError, decodeByteVec, decodeLength, encodeByteVec, encodeLength } from "../kv/codec.js";
import type { Event } from "../kv/event.js";
import { DamagedStoreError } from "./errors.js";

class Writer {
  private readonly parts: Uint8Array[] = [];
  bytes(b: Uint8Array): this {
    this.parts.push(b);
    return this;
  }
  u8(n: number): this {
    return this.bytes(Uint8Array.of(n));
  }
  u16(n: number): this {
    return this.bytes(Uint8Array.of(n >> 8, n & 0xff));
  }
  u64(n: bigint): this {
    return this.bytes(u64BE(n));
  }
  length(n: number): this {
    return this.bytes(encodeLength(n));
  }
  vec(what: string, b: Uint8Array): this {
    return this.bytes(encodeByteVec(what, b));
  }
  text(what: string, s: string): this {
    return this.vec(what, new TextEncoder().encode(s));
  }
  done(): Uint8Array {
    return concatBytes(...this.parts);
  }
}

// ignoreBOM: a leading U+FEFF is part of the text (stripping it would decode two records to one).
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

class Reader {
  private offset = 0;
  constructor(
    private readonly data: Uint8Array,
    private readonly what: string,
  ) {}
  fixed(n: number): Uint8Array {
    if (this.offset + n > this.data.length) throw new CodecError(`${this.what}: truncated`);
    const out = this.data.slice(this.offset, this.offset + n);
    this.offset += n;
    return out;
  }
  u8(): number {
    return this.fixed(1)[0]!;
  }
  u16(): number {
    const b = this.fixed(2);
    return (b[0]! << 8) | b[1]!;
  }
  u64(): bigint {
    const b = this.fixed(8);
    return Buffer.from(b.buffer, b.byteOffset, 8).readBigUInt64BE(0);
  }
  length(): number {
    const [n, next] = decodeLength(this.data, this.offset, this.what);
    this.offset = next;
    return n;
  }
  vec(): Uint8Array {
    const [b, next] = decodeByteVec(this.data, this.offset, this.what);
    this.offset = next;
    return b;
  }
  text(): string {
    return STRICT_UTF8.decode(this.vec());
  }
  /** A flag byte: 0 or 1, nothing else, so each record has one encoding. */
  flag(): boolean {
    const b = this.u8();
    if (b > 1) throw new CodecError(`${this.what}: flag byte ${b} is not 0 or 1`);
    return b === 1;
  }
  /** A count of items, each at least `minBytes` long: checked against the remaining bytes. */
  count(minBytes: number): number {
    const n = this.length();
    if (n * minBytes > this.data.length - this.offset) throw new CodecError(`${this.what}: count ${n} exceeds remaining input`);
    return n;
  }
  end(): void {
    if (this.offset !== this.data.length) throw new CodecError(`${this.what}: ${this.data.length - this.offset} trailing bytes`);
  }
}

/** A record that does not decode; `detail` says why, without naming where the record came from. */
export class DamagedRecordError extends DamagedStoreError {}

function decoding<T>(what: string, data: Uint8Array, read: (r: Reader) => T): T {
  try {
    const r = new Reader(data, what);
    const value = read(r);
    r.end();
    return value;
  } catch (err) {
    if (err instanceof CodecError || err instanceof TypeError) throw new DamagedRecordError((err as Error).message);
    throw err;
  }
}

function writeEvent(w: Writer, e: Event): void {
  w.bytes(e.emitter).text("topic", e.topic).vec("payload", e.payload);
}

function readEvent(r: Reader): Event {
  return { emitter: r.fixed(20), topic: r.text(), payload: r.vec() };
}

function writeReceipt(w: Writer, rc: ReceiptRecord): void {
  w.bytes(rc.tx_hash).u8(rc.status === "ok" ? 1 : 0);
  if (rc.error === null) w.u8(0);
  else w.u8(1).u16(rc.error.code).text("error name", rc.error.name);
  w.length(rc.events.length);
  for (const e of rc.events) writeEvent(w, e);
  w.u64(rc.cycles).u64(rc.cells);
}

function readReceipt(r: Reader): ReceiptRecord {
  const tx_hash = r.fixed(32);
  const status = r.flag() ? "ok" : "rejected";
  const error = r.flag() ? { code: r.u16(), name: r.text() } : null;
  const events: Event[] = [];
  for (let n = r.count(22); n > 0; n--) events.push(readEvent(r));
  return { tx_hash, status, error, events, cycles: r.u64(), cells: r.u64() };
}

function writeBlock(w: Writer, b: BlockRecord): void {
  w.u64(b.height).u64(b.timestamp).bytes(b.block_hash).bytes(b.parent_hash).bytes(b.state_root);
  w.bytes(b.tx_root).bytes(b.receipt_root).bytes(b.logs_root).u64(b.effective_rent_height);
  w.length(b.transactions.length);
  for (const tx of b.transactions) w.vec("transaction", tx);
  for (const rc of b.receipts) writeReceipt(w, rc);
}

function readBlock(r: Reader): BlockRecord {
  const height = r.u64();
  const timestamp = r.u64();
  const block_hash = r.fixed(32);
  const parent_hash = r.fixed(32);
  const state_root = r.fixed(32);
  const tx_root = r.fixed(32);
  const receipt_root = r.fixed(32);
  const logs_root = r.fixed(32);
  const effective_rent_height = r.u64();
  const transactions: Uint8Array[] = [];
  const count = r.count(1);
  for (let i = 0; i < count; i++) transactions.push(r.vec());
  const receipts: ReceiptRecord[] = [];
  for (let i = 0; i < count; i++) receipts.push(readReceipt(r));
  return { height, timestamp, block_hash, parent_hash, state_root, tx_root, receipt_root, logs_root, effective_rent_height, transactions, receipts };
}

export function encodeBlock(b: BlockRecord): Uint8Array {
  if (b.receipts.length !== b.transactions.length) throw new RangeError(`block ${b.height}: ${b.receipts.length} receipts for ${b.transactions.length} transactions`);
  const w = new Writer();
  writeBlock(w, b);
  return w.done();
}

export const decodeBlock = (data: Uint8Array): BlockRecord => decoding("block record", data, readBlock);

export function encodeGenesis(g: GenesisRecord): Uint8Array {
  const w = new Writer().vec("genesis source", g.source).bytes(g.chain_instance_id);
  writeBlock(w, g.block);
  return w.done();
}

export const decodeGenesis = (data: Uint8Array): GenesisRecord =>
  decoding("genesis record", data, (r) => ({ source: r.vec(), chain_instance_id: r.fixed(32), block: readBlock(r) }));

export const encodeTxLocation = (l: TxLocation): Uint8Array => new Writer().u64(l.height).length(l.index).done();

export const decodeTxLocation = (data: Uint8Array): TxLocation => decoding("transaction location", data, (r) => ({ height: r.u64(), index: r.length() }));

/** A value before a block: 0 = the key was absent, 1 ‖ bytes = its value. */
export const encodeBefore = (value: Uint8Array | undefined): Uint8Array => (value === undefined ? Uint8Array.of(0) : concatBytes(Uint8Array.of(1), value));

export function decodeBefore(data: Uint8Array): Uint8Array | undefined {
  if (data.length === 0 || data[0]! > 1 || (data[0] === 0 && data.length !== 1)) throw new DamagedStoreError("bad reverse-diff value");
  return data[0] === 0 ? undefined : data.slice(1);
}
