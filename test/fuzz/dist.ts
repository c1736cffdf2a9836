// The fuzz tests run the compiled emulator (a `cbqs t8n` child per block, mutant copies of
// dist/). A dist/ older than its sources would test yesterday's engine, so they refuse to run
// on one — `npm ci` builds it, `npm run build` refreshes it.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") && !e.name.endsWith(".d.ts") ? [join(dir, e.name)] : [],
  );
}

export function requireFreshDist(): void {
  for (const source of ["src", "state", "instructions"].flatMap(sources)) {
    const built = join("dist", source.replace(/\.ts$/, ".js"));
    if (!existsSync(built) || statSync(built).mtimeMs < statSync(source).mtimeMs) {
      throw new Error(`dist/ is older than ${source}: run npm run build (these tests run the compiled cbqs)`);
    }
  }
}
