// The cheap checks of a store's data.mdb made before LMDB maps it. LMDB trusts its file: a
// garbage file can crash the process in native code (SIGSEGV), a file shorter than its meta page
// says faults on the first read past its end (SIGBUS). Neither is an exception JS can catch, so
// what can be checked without mapping the file is checked here first: both meta pages and the
// file's length against the newer one's last page.
//
// Layout (liblmdb mdb.c, 64-bit build; all little-endian): every page starts with a 24-byte
// header (MDB_page_header: u64 pgno, u64 txnid, u16 pad, u16 flags, u32 lower/upper); pages 0
// and 1 are meta pages (flag P_META = 0x08) whose body is MDB_meta:
//   +0 u32 mm_magic 0xBEEFC0DE   +4 u32 mm_version (low 16 bits 2)   +8 u64 mm_address
//   +16 u64 mm_mapsize   +24 MDB_db[2] (48 bytes each; the free DB's first u32 md_pad is the
//   page size)   +120 u64 mm_last_pg   +128 u64 mm_txnid
// A DB's root page number is its MDB_db's last u64 (+40), ~0 for an empty one. LMDB opens at the
// meta with the larger txnid. lmdb-js's overlappingSync also keeps a "flushed" copy of the meta
// fields in the second half of page 0; it records an earlier transaction, so its last page is
// never above the newer meta's and the length check covers it.
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { DamagedStoreError } from "./errors.js";

const PAGE_HEADER = 24;
const META_BYTES = 144;
const MAGIC = 0xbeefc0de;
const DATA_VERSION = 2;
const P_META = 0x08;
const P_INVALID = (1n << 64n) - 1n;

interface Meta {
  pageSize: number;
  lastPage: bigint;
  txnid: bigint;
  roots: bigint[];
}

function readMeta(page: Buffer, which: number, pageSize: number | undefined): Meta {
  const at = `meta page ${which}`;
  if ((page.readUInt16LE(18) & P_META) === 0) throw new DamagedStoreError(`${at} is not marked as a meta page`);
  const m = PAGE_HEADER;
  if (page.readUInt32LE(m) !== MAGIC) throw new DamagedStoreError(`${at} has no LMDB magic number`);
  const version = page.readUInt32LE(m + 4) & 0xffff;
  if (version !== DATA_VERSION) throw new DamagedStoreError(`${at} has LMDB data version ${version}, not ${DATA_VERSION}`);
  const size = page.readUInt32LE(m + 24);
  if (size < 512 || size > 0x10000 || (size & (size - 1)) !== 0) throw new DamagedStoreError(`${at} gives page size ${size}`);
  if (pageSize !== undefined && size !== pageSize) throw new DamagedStoreError(`the meta pages disagree on the page size (${pageSize}, ${size})`);
  return {
    pageSize: size,
    lastPage: page.readBigUInt64LE(m + 120),
    txnid: page.readBigUInt64LE(m + 128),
    roots: [page.readBigUInt64LE(m + 24 + 40), page.readBigUInt64LE(m + 24 + 48 + 40)],
  };
}

/** Throws DamagedStoreError unless `path` (a data.mdb) passes the checks above. */
export function checkDataFile(path: string): void {
  const fd = openSync(path, "r");
  try {
    const length = fstatSync(fd).size;
    // A crash between creating data.mdb and LMDB's first meta write leaves it empty: that is an
    // empty store, which LMDB initialises on opening (D-0119 "A 0-byte data.mdb").
    if (length === 0) return;
    const read = (offset: number): Buffer => {
      const out = Buffer.alloc(PAGE_HEADER + META_BYTES);
      const got = readSync(fd, out, 0, out.length, offset);
      if (got < out.length) throw new DamagedStoreError(`data.mdb is truncated (${length} bytes, too short for its meta pages)`);
      return out;
    };
    const first = readMeta(read(0), 0, undefined);
    const second = readMeta(read(first.pageSize), 1, first.pageSize);
    const newer = second.txnid > first.txnid ? second : first;
    const pages = BigInt(Math.floor(length / newer.pageSize));
    if (newer.lastPage < 1n || newer.lastPage >= pages) {
      throw new DamagedStoreError(`data.mdb is truncated: ${length} bytes, but its meta page says it uses ${newer.lastPage + 1n} pages of ${newer.pageSize} bytes`);
    }
    for (const root of newer.roots) {
      if (root !== P_INVALID && (root < 2n || root > newer.lastPage)) throw new DamagedStoreError(`the meta page names root page ${root}, outside pages 2..${newer.lastPage}`);
    }
  } finally {
    closeSync(fd);
  }
}
