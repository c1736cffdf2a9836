// Throughput of the state store over the default QMDB commitment (Blake3): blocks of random-looking
// account and storage writes with reads and per-transaction checkpoints, then the commit.
// Tooling only (timings are never asserted). Usage after `npm run build`:
//   node dist/scripts/bench-state.js [blocks=50] [txsPerBlock=200] [accounts=5000]
// The comparison with an Ethereum MPT (@ethereumjs/mpt) is not included: that package is not a
// dependency of this project.
import { performance } from "node:perf_hooks";
import { u64BE } from "../src/bytes.js";
import { keccak256 } from "../src/crypto/hash.js";
import { accountKey, actorStorageKey } from "../state/keys.js";
import { MemoryStateStore } from "../state/store.js";
import { encodeStateValue } from "../state/value.js";

const [blocks, txsPerBlock, accounts] = [process.argv[2], process.argv[3], process.argv[4]].map((a, i) =>
  Number(a ?? [50, 200, 5000][i]),
) as [number, number, number];

const REGISTRY = new Uint8Array(20);
REGISTRY[19] = 0x17;
const address = (i: number) => keccak256(u64BE(i)).slice(12);

const store = new MemoryStateStore();
let reads = 0;
let writes = 0;
let batchMs = 0;
let commitMs = 0;
for (let height = 1; height <= blocks; height++) {
  const t0 = performance.now();
  const batch = store.beginBlock(BigInt(height));
  for (let t = 0; t < txsPerBlock; t++) {
    const n = height * txsPerBlock + t;
    const from = accountKey(address(n % accounts));
    const to = accountKey(address((n * 7919) % accounts));
    const cp = batch.checkpoint();
    batch.get(from);
    batch.get(to);
    batch.put(from, encodeStateValue({ kind: "Account", nonce: BigInt(height), balance: BigInt(n) }));
    batch.put(to, encodeStateValue({ kind: "Account", nonce: 0n, balance: BigInt(n) }));
    batch.put(actorStorageKey(REGISTRY, u64BE(n)), encodeStateValue({ kind: "StorageSlot", bytes: new Uint8Array(200) }));
    // Every tenth transaction is rejected and rolled back.
    if (t % 10 === 9) batch.rollback(cp);
    else batch.release(cp);
  }
  reads += batch.counts.reads;
  writes += batch.counts.writes;
  const t1 = performance.now();
  store.commitBlock(batch);
  const t2 = performance.now();
  batchMs += t1 - t0;
  commitMs += t2 - t1;
}

const ops = reads + writes;
console.log(`blocks=${blocks} txs/block=${txsPerBlock} accounts=${accounts}`);
console.log(`batch: ${ops} metered ops in ${batchMs.toFixed(1)} ms (${Math.round((ops / batchMs) * 1000)} ops/s)`);
console.log(`commit (QMDB, Blake3): ${commitMs.toFixed(1)} ms total, ${(commitMs / blocks).toFixed(2)} ms/block`);
console.log("MPT comparison: skipped (@ethereumjs/mpt is not installed)");
