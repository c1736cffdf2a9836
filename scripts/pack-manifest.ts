// The package.json that `npm pack` (and so a release) ships has no `scripts`. Every script of the
// repository builds from sources or runs tests the package does not contain, and npm warns each
// consumer about a `prepare` script ("install scripts not yet covered by allowScripts"), yet
// `prepare` must stay in the repository so that `npm ci` builds dist/ (README "Install").
//
// npm puts package.json into the tarball as it is on disk after `prepack`, so package.json runs
//
//   prepack:  node dist/scripts/pack-manifest.js strip     refuses a dist/ older than its sources
//             (packing no longer builds: `npm ci` or `npm run build` does), keeps package.json as
//             package.json.orig and writes it without `scripts`
//   postpack: node dist/scripts/pack-manifest.js restore   puts package.json.orig back, byte for byte
import { copyFileSync, existsSync, readdirSync, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { checkScriptArgs } from "./script-args.js";

export const BACKUP = "package.json.orig";

/** The source folders whose .ts files compile into dist/ (tsconfig.json and tsconfig.explorer.json). */
const SOURCE_FOLDERS = ["src", "state", "instructions"];

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [join(dir, e.name)] : [],
  );
}

/** The first source (relative to `root`) whose dist/ build is missing or older than it, or null. */
export function staleSource(root: string): string | null {
  for (const folder of SOURCE_FOLDERS) {
    if (!existsSync(join(root, folder))) continue;
    for (const source of sources(join(root, folder))) {
      const relative = source.slice(root.length + 1);
      const built = join(root, "dist", relative.replace(/\.ts$/, ".js"));
      if (!existsSync(built) || statSync(built).mtimeMs < statSync(source).mtimeMs) return relative;
    }
  }
  return null;
}

/** prepack: package.json without `scripts`, the original kept as package.json.orig. Throws (changing nothing) when it cannot. */
export function strip(root: string): void {
  if (existsSync(join(root, BACKUP))) {
    throw new Error(`${BACKUP} is left from a pack that did not finish: check it is the repository's package.json, then move it back to package.json`);
  }
  const stale = staleSource(root);
  if (stale !== null) throw new Error(`dist/ is older than ${stale}: run npm run build, then pack`);
  const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as Record<string, unknown>;
  delete manifest["scripts"];
  copyFileSync(join(root, "package.json"), join(root, BACKUP));
  // Written aside and renamed over package.json: a reader never sees half a file.
  writeFileSync(join(root, "package.json.tmp"), JSON.stringify(manifest, null, 2) + "\n");
  renameSync(join(root, "package.json.tmp"), join(root, "package.json"));
}

/** postpack: package.json as it was before strip(). */
export function restore(root: string): void {
  renameSync(join(root, BACKUP), join(root, "package.json"));
}

const USAGE = `usage: pack-manifest strip|restore
  npm's prepack and postpack steps, run in the package folder: strip writes package.json without
  its scripts (kept as ${BACKUP}), restore puts ${BACKUP} back
`;

if (process.argv[1] !== undefined && import.meta.filename === process.argv[1]) {
  const argv = process.argv.slice(2);
  checkScriptArgs(argv, USAGE, [], [], 1);
  const step = argv[0];
  if (step !== "strip" && step !== "restore") {
    process.stderr.write(`give strip or restore\n${USAGE}`);
    process.exit(2);
  }
  try {
    if (step === "strip") strip(process.cwd());
    else restore(process.cwd());
  } catch (err) {
    process.stderr.write(`pack-manifest: ${(err as Error).message}\n`);
    process.exitCode = 1;
  }
}
