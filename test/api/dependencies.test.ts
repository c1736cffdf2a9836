// Every package the library needs at run time — package-lock.json's `packages` that are not
// dev-only, the optional platform binaries included — admits each Node line the project supports
// (README "Install"): one whose `engines.node` excludes a line makes every `npm ci` and every
// consumer's `npm install` on that line warn (EBADENGINE).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import semver from "semver";
import { describe, expect, it } from "vitest";
import { ROOT } from "./examples.js";

const SUPPORTED = ["20.19.0", "22.0.0", "24.0.0"];

interface LockEntry {
  version?: string;
  dev?: boolean;
  engines?: { node?: string };
}

/** One line per runtime package and supported Node version its `engines.node` refuses. */
function refusals(packages: Record<string, LockEntry>): string[] {
  return Object.entries(packages).flatMap(([path, entry]) => {
    const range = entry.engines?.node;
    if (path === "" || entry.dev === true || range === undefined) return [];
    return SUPPORTED.filter((v) => !semver.satisfies(v, range)).map((v) => `${path}@${entry.version} (node ${range}) refuses ${v}`);
  });
}

describe("runtime dependencies (package-lock.json)", () => {
  const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as { packages: Record<string, LockEntry> };

  it("every runtime dependency's engines.node admits Node 20.19, 22 and 24", () => {
    const runtime = Object.keys(lock.packages).filter((p) => p !== "" && lock.packages[p]!.dev !== true);
    expect(runtime).toContain("node_modules/eventsource-parser");
    expect(runtime.filter((p) => lock.packages[p]!.engines?.node !== undefined).length).toBeGreaterThan(5);
    expect(refusals(lock.packages)).toEqual([]);
  });

  it("a runtime package that refuses a supported line is reported; a dev-only one is not", () => {
    const packages = {
      "": { version: "0.1.0", engines: { node: ">=99" } },
      "node_modules/late": { version: "4.1.3", engines: { node: ">=22.12" } },
      "node_modules/either": { version: "1.0.0", engines: { node: "^16 || ^18 || >=20" } },
      "node_modules/tool": { version: "1.0.0", dev: true, engines: { node: ">=22.12" } },
    };
    expect(refusals(packages)).toEqual(["node_modules/late@4.1.3 (node >=22.12) refuses 20.19.0", "node_modules/late@4.1.3 (node >=22.12) refuses 22.0.0"]);
  });
});
