import { it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cbqs } from "./program.js";
import { toHex } from "../../src/bytes.js";
import { STATE_KEY_LENGTH } from "../../state/interface.js";
import { createStateCommitment } from "../../state/qmdb/index.js";
import { proveKey } from "../../state/proof.js";
import { inclusionProofToJson, proveReceipt, receiptRoot } from "../../state/roots.js";
it("probe", async () => {
  const dir = mkdtempSync(join(tmpdir(), "probe-"));
  const f = (n: string, t: string) => (writeFileSync(join(dir, n), t), join(dir, n));
  const SIG = "0x" + "ab".repeat(64);
  const PUB = "0xd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
  const sc = createStateCommitment();
  const k = new Uint8Array(STATE_KEY_LENGTH).fill(4);
  sc.commitBatch([[k, Uint8Array.of(1, 2, 3)]]);
  const proofFile = f("proof.json", JSON.stringify(proveKey(sc.db, k)));
  const root = toHex(sc.root());
  const list = [{ status: "ok", errorCode: 0, cycles: 1n, cells: 0n, events: [] }] as any;
  const broot = toHex(receiptRoot(list));
  const valid = f("valid.json", JSON.stringify(inclusionProofToJson(proveReceipt(list, 0))));
  const cases = [
    ["admit-endpoint", "--transport", "Tcp", "https://x.example/"],
    ["verify-sig", "--pub", "0xabc", "--msg", "0x", "--sig", SIG],
    ["verify-sig", "--pub", PUB.slice(2), "--msg", "0x", "--sig", SIG],
    ["gas-vectors", "verify", f("broken.json", "not json")],
    ["gas-vectors", "verify", join(dir, "missing.json")],
    ["verify-proof", f("bad.json", "{"), "--root", root],
    ["verify-proof", join(dir, "missing.json"), "--root", root],
    ["verify-proof", proofFile, "--root", "0x00"],
    ["verify-proof", proofFile, "--root", root, "--hasher", "md5"],
    ["verify-bmt-proof", join(dir, "missing.json"), "--root", broot],
    ["verify-bmt-proof", f("bad.json", "{"), "--root", broot],
    ["verify-bmt-proof", f("malformed.json", JSON.stringify({ leaf_index: 0 })), "--root", broot],
    ["verify-bmt-proof", valid, "--root", "0x12"],
  ];
  for (const c of cases) console.log(JSON.stringify(c.slice(0, 2)), JSON.stringify(await cbqs(...c)));
});
