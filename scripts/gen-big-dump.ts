// A large, valid cbqs-state-dump/v1 for measuring the readers and writers: N account
// entries with distinct deterministic addresses, written by the same streaming writer `state dump`
// uses (so the file is byte-identical to what the CLI would write for that state). Without
// --decoded it is an alloc file (key and value only), about 175 bytes per entry: 1,250,000
// entries ≈ 220 MB.
//
//   npm run build && node dist/scripts/gen-big-dump.js /tmp/big-dump.json [--entries 1250000] [--decoded]
import { toHex, u64BE } from "../src/bytes.js";
import { Output, Streamed, writeJsonDocument, writing } from "../src/json/write.js";
import { DUMP_FORMAT, dumpEntry } from "../state/kv/dump.js";
import { accountKey } from "../state/kv/keys.js";
import { encodeStateValue } from "../state/kv/value.js";
import { checkScriptArgs } from "./script-args.js";

function* entries(n: number, decoded: boolean): Iterable<unknown> {
  // Addresses 0x00…00‖u64(i) are ascending in i, so the dump is already in key order.
  for (let i = 0; i < n; i++) {
    const address = new Uint8Array(20);
    address.set(u64BE(i), 12);
    const key = accountKey(address);
    const value = encodeStateValue({ kind: "Account", nonce: BigInt(i % 1000), balance: BigInt(i) * 1_000_003n });
    yield decoded ? dumpEntry(key, value) : { key: toHex(key), value: toHex(value) };
  }
}

const USAGE = "usage: gen-big-dump <file> [--entries N] [--decoded]";

function main(argv: string[]): void {
  checkScriptArgs(argv, USAGE, ["--entries"], ["--decoded"], 1);
  const file = argv.find((a, i) => !a.startsWith("--") && argv[i - 1] !== "--entries");
  const at = argv.indexOf("--entries");
  const n = at >= 0 ? Number(argv[at + 1]) : 1_250_000;
  if (file === undefined || !Number.isSafeInteger(n) || n < 0) {
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
  writing(new Output(file), (out) => writeJsonDocument(out, { format: DUMP_FORMAT, entries: new Streamed(entries(n, argv.includes("--decoded"))) }));
  process.stderr.write(`gen-big-dump: ${n} entries written to ${file}\n`);
}

main(process.argv.slice(2));
