// Target commands the fuzz tests drive: our compiled t8n, and the same with a planted divergence.
import { writeFileSync } from "node:fs";
import { join } from "node:path";

export const OURS = "node dist/src/cli.js t8n";

/** Our t8n with every state_root zeroed (its helper script written into `dir`): a divergence on every run. */
export function zeroRootCommand(dir: string): string {
  const script = join(dir, "zero-root.cjs");
  writeFileSync(script, `const fs = require("fs"); const f = process.argv[2]; const r = JSON.parse(fs.readFileSync(f, "utf8")); r.state_root = "0x" + "00".repeat(32); fs.writeFileSync(f, JSON.stringify(r));`);
  return `f() { ${OURS} "$@" && node ${script} "$8"; }; f`;
}
