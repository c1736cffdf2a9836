// Records every module a process loads, for scripts/bench-startup.ts and the start-up test
// (test/cli/startup.test.ts): `node --import ./dist/scripts/record-loads.js dist/src/cli.js …`
// with CBQS_RECORD_LOADS=<file> appends each loaded module's URL to <file>, one a line.
//
// ESM has no require.cache to inspect afterwards, so this is a module loader hook (node:module
// register). Node runs hooks on a separate thread: this same file, imported there, is the hooks
// module; imported on the main thread (by --import) it registers itself. A CommonJS file
// require()d by another CommonJS file does not pass through the hook; every package named in
// docs/engineering/performance.md "Start-up" is reached by an import, so it is recorded.
import { appendFileSync } from "node:fs";
import { register } from "node:module";
import { isMainThread } from "node:worker_threads";

interface LoadResult {
  format?: string | null;
  source?: unknown;
}
type NextLoad = (url: string, context: unknown) => Promise<LoadResult>;

export async function load(url: string, context: unknown, nextLoad: NextLoad): Promise<LoadResult> {
  const result = await nextLoad(url, context);
  const file = process.env["CBQS_RECORD_LOADS"];
  if (file !== undefined && file !== "") appendFileSync(file, `${url}\n`);
  return result;
}

if (isMainThread) register(import.meta.url);
