// The documentation's shell examples call `cbqs` as the README installs it (on the PATH). The tests
// that run them put a `cbqs` of the compiled CLI in a fresh directory and hand bash a PATH that
// starts there; a `cbqs` inside a command the CLI itself spawns (`--t8n-server 'cbqs t8n --server'`)
// finds it the same way.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface CbqsOnPath {
  /** The directory holding `cbqs`; scratch files may go there too. */
  dir: string;
  /** The environment for a child process: PATH with `dir` first. */
  env: NodeJS.ProcessEnv;
  remove: () => void;
}

export function cbqsOnPath(cli: string): CbqsOnPath {
  const dir = mkdtempSync(join(tmpdir(), "cbqs-bin-"));
  writeFileSync(join(dir, "cbqs"), `#!/bin/sh\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(cli)} "$@"\n`);
  chmodSync(join(dir, "cbqs"), 0o755);
  return { dir, env: { ...process.env, PATH: `${dir}:${process.env["PATH"] ?? ""}` }, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
