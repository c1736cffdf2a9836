// Hash tables keyed by byte strings, without turning each key into a JS string first (that
// conversion was the largest single cost of a state access). Open addressing with linear
// probing over power-of-two typed arrays; every slot keeps the key's full 32-bit hash, so
// probes compare bytes only on a hash match and growing never rehashes a key.
//
// Nothing here is consensus-relevant: iteration order is never observed by callers that
// produce roots or receipts (they sort), and the hash is fixed (no seed), so runs are repeatable.

/** murmur3 (32-bit) over every byte, four bytes per round: keys are hashed on every access. */
export function hashBytes(bytes: Uint8Array): number {
  const n = bytes.length;
  let h = 0x9747b28c;
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    let k = bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
    k = Math.imul(k, 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    h ^= Math.imul(k, 0x1b873593);
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  let k = 0;
  for (let shift = 0; i < n; i++, shift += 8) k |= bytes[i]! << shift;
  k = Math.imul(k, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  h ^= Math.imul(k, 0x1b873593);
  h ^= n;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Native memcmp for state-key lengths (about 40 % faster than a loop at 54 bytes); a loop for short keys. */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  if (a.length >= 32) return Buffer.compare(a, b) === 0;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

const MIN_CAPACITY = 16;

/**
 * Slot bookkeeping shared by both tables: `hashes[i]` is the key's hash. Load stays at most 7/8
 * (the stored hashes make a long probe cheap: bytes are compared only on a hash match);
 * deletion shifts the following run back (no tombstones).
 */
abstract class OpenTable {
  protected hashes: Uint32Array;
  protected mask: number;
  protected count = 0;

  constructor(capacity: number) {
    let size = MIN_CAPACITY;
    while (size * 7 < capacity * 8) size *= 2;
    this.hashes = new Uint32Array(size);
    this.mask = size - 1;
  }

  /** True when one more entry would exceed the maximum load. */
  protected full(): boolean {
    return (this.count + 1) * 8 > (this.mask + 1) * 7;
  }

  get size(): number {
    return this.count;
  }

  protected abstract isUsed(slot: number): boolean;
  /** Moves slot `from` to the empty slot `to` (deletion shift). */
  protected abstract move(from: number, to: number): void;
  protected abstract clearSlot(slot: number): void;
  /** Reallocates the slot arrays at `capacity` and re-inserts every entry. */
  protected abstract rebuild(capacity: number): void;

  /** Empties `slot` and shifts back the entries after it that would no longer be found. */
  protected removeSlot(slot: number): void {
    const mask = this.mask;
    let hole = slot;
    let next = (slot + 1) & mask;
    while (this.isUsed(next)) {
      const home = this.hashes[next]! & mask;
      // Move `next` into the hole unless its home lies cyclically in (hole, next].
      const distanceNext = (next - home) & mask;
      const distanceHole = (hole - home) & mask;
      if (distanceHole < distanceNext) {
        this.move(next, hole);
        hole = next;
      }
      next = (next + 1) & mask;
    }
    this.clearSlot(hole);
    this.count--;
  }
}

/** Byte key → value. Keys are kept by reference: callers must not mutate a key they inserted. */
export class BytesMap<V> extends OpenTable {
  private keys: (Uint8Array | undefined)[];
  private values: (V | undefined)[];

  constructor(capacity = MIN_CAPACITY) {
    super(capacity);
    this.keys = new Array<Uint8Array | undefined>(this.mask + 1);
    this.values = new Array<V | undefined>(this.mask + 1);
  }

  private find(key: Uint8Array, hash: number): number {
    const mask = this.mask;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const k = this.keys[slot];
      if (k === undefined) return ~slot;
      if (this.hashes[slot] === hash && equalBytes(k, key)) return slot;
    }
  }

  get(key: Uint8Array): V | undefined {
    const slot = this.find(key, hashBytes(key));
    return slot < 0 ? undefined : this.values[slot];
  }

  has(key: Uint8Array): boolean {
    return this.find(key, hashBytes(key)) >= 0;
  }

  set(key: Uint8Array, value: V): void {
    const hash = hashBytes(key);
    let slot = this.find(key, hash);
    if (slot >= 0) {
      this.values[slot] = value;
      return;
    }
    if (this.full()) {
      this.rebuild((this.mask + 1) * 2);
      slot = this.find(key, hash);
    }
    slot = ~slot;
    this.keys[slot] = key;
    this.values[slot] = value;
    this.hashes[slot] = hash;
    this.count++;
  }

  delete(key: Uint8Array): boolean {
    const slot = this.find(key, hashBytes(key));
    if (slot < 0) return false;
    this.removeSlot(slot);
    return true;
  }

  /** Calls `fn` with each value in slot order (arbitrary but deterministic): no pair per entry. */
  forEachValue(fn: (value: V) => void): void {
    for (let slot = 0; slot <= this.mask; slot++) if (this.keys[slot] !== undefined) fn(this.values[slot]!);
  }

  /** Entries in slot order (arbitrary but deterministic). */
  *entries(): IterableIterator<[Uint8Array, V]> {
    for (let slot = 0; slot <= this.mask; slot++) {
      const k = this.keys[slot];
      if (k !== undefined) yield [k, this.values[slot]!];
    }
  }

  protected isUsed(slot: number): boolean {
    return this.keys[slot] !== undefined;
  }

  protected move(from: number, to: number): void {
    this.keys[to] = this.keys[from];
    this.values[to] = this.values[from];
    this.hashes[to] = this.hashes[from]!;
  }

  protected clearSlot(slot: number): void {
    this.keys[slot] = undefined;
    this.values[slot] = undefined;
  }

  protected rebuild(capacity: number): void {
    const { keys, values, hashes } = this;
    this.hashes = new Uint32Array(capacity);
    this.keys = new Array<Uint8Array | undefined>(capacity);
    this.values = new Array<V | undefined>(capacity);
    this.mask = capacity - 1;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i];
      if (k === undefined) continue;
      let slot = hashes[i]! & this.mask;
      while (this.keys[slot] !== undefined) slot = (slot + 1) & this.mask;
      this.keys[slot] = k;
      this.values[slot] = values[i];
      this.hashes[slot] = hashes[i]!;
    }
  }
}

/**
 * Byte key → non-negative integer (< 2^32 − 1), storing no key at all: a slot holds the integer
 * and the key's hash, and `matches(n, key)` confirms a candidate against wherever the key really
 * lives (for the QMDB index: the key bytes of the operation at location n). 8 bytes per slot.
 */
export class KeyedIntTable extends OpenTable {
  /** value + 1; 0 = empty slot. */
  private slots: Uint32Array;

  constructor(
    private readonly matches: (value: number, key: Uint8Array) => boolean,
    capacity = MIN_CAPACITY,
  ) {
    super(capacity);
    this.slots = new Uint32Array(this.mask + 1);
  }

  private find(key: Uint8Array, hash: number): number {
    const mask = this.mask;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const stored = this.slots[slot]!;
      if (stored === 0) return ~slot;
      if (this.hashes[slot] === hash && this.matches(stored - 1, key)) return slot;
    }
  }

  get(key: Uint8Array): number | undefined {
    const slot = this.find(key, hashBytes(key));
    return slot < 0 ? undefined : this.slots[slot]! - 1;
  }

  set(key: Uint8Array, value: number): void {
    if (!Number.isInteger(value) || value < 0 || value >= 0xffff_ffff) throw new RangeError(`table value ${value} out of range`);
    const hash = hashBytes(key);
    let slot = this.find(key, hash);
    if (slot < 0) {
      if (this.full()) {
        this.rebuild((this.mask + 1) * 2);
        slot = this.find(key, hash);
      }
      slot = ~slot;
      this.hashes[slot] = hash;
      this.count++;
    }
    this.slots[slot] = value + 1;
  }

  delete(key: Uint8Array): boolean {
    const slot = this.find(key, hashBytes(key));
    if (slot < 0) return false;
    this.removeSlot(slot);
    return true;
  }

  /** Every stored integer, in slot order. */
  *values(): IterableIterator<number> {
    for (let slot = 0; slot <= this.mask; slot++) {
      const stored = this.slots[slot]!;
      if (stored !== 0) yield stored - 1;
    }
  }

  protected isUsed(slot: number): boolean {
    return this.slots[slot] !== 0;
  }

  protected move(from: number, to: number): void {
    this.slots[to] = this.slots[from]!;
    this.hashes[to] = this.hashes[from]!;
  }

  protected clearSlot(slot: number): void {
    this.slots[slot] = 0;
  }

  protected rebuild(capacity: number): void {
    const { slots, hashes } = this;
    this.slots = new Uint32Array(capacity);
    this.hashes = new Uint32Array(capacity);
    this.mask = capacity - 1;
    for (let i = 0; i < slots.length; i++) {
      if (slots[i] === 0) continue;
      let slot = hashes[i]! & this.mask;
      while (this.slots[slot] !== 0) slot = (slot + 1) & this.mask;
      this.slots[slot] = slots[i]!;
      this.hashes[slot] = hashes[i]!;
    }
  }
}
