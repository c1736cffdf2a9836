// A small corpus with one fixture of each outcome a report shows, for the report tests.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** A corpus of five: ok, a receipt_root mismatch, a state_root mismatch with a differing key, and two unusable (one echoing <script>). */
export function mixedCorpus(at: string): string[] {
  mkdirSync(at, { recursive: true });
  const read = () => JSON.parse(readFileSync("fixtures/corpus/create-quote.json", "utf8")) as { blocks: Array<Record<string, any>> };
  writeFileSync(join(at, "a-ok.json"), readFileSync("fixtures/corpus/transfers.json"));
  const receipt = read();
  receipt.blocks[1]!["receipt_root"] = "0x" + "ab".repeat(32);
  writeFileSync(join(at, "b-receipt.json"), JSON.stringify(receipt));
  const state = read();
  state.blocks[1]!["state_root"] = "0x" + "cd".repeat(32);
  const entry = state.blocks[1]!["post_state"].entries[0] as { value: string };
  entry.value = entry.value.slice(0, -2) + (entry.value.endsWith("00") ? "01" : "00");
  writeFileSync(join(at, "c-state.json"), JSON.stringify(state));
  writeFileSync(join(at, "d-<script>.json"), '{"format":"<script>alert(1)</script>"}');
  writeFileSync(join(at, "e-truncated.json"), "{");
  return readdirSync(at).sort();
}
