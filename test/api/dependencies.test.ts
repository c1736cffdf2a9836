// Every package in package-lock.json admits every Node version the project's `engines.node`
// admits (README "Set-up"): a runtime package — the optional platform binaries included — whose
// `engines.node` excludes one makes a consumer's `npm install` on it warn (EBADENGINE), and a
// package of the test toolchain does the same to `npm ci` in the repository on it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import semver from "semver";
import { describe, expect, it } from "vitest";
import { ROOT } from "./examples.js";

interface LockEntry {
  version?: string;
  dev?: boolean;
  engines?: { node?: string };
}

/** One line per package (of `kind`) whose `engines.node` does not admit every version of `supported`. */
function refusals(packages: Record<string, LockEntry>, supported: string, kind: "runtime" | "dev"): string[] {
  return Object.entries(packages).flatMap(([path, entry]) => {
    const range = entry.engines?.node;
    if (path === "" || (entry.dev === true) !== (kind === "dev") || range === undefined) return [];
    return semver.subset(supported, range) ? [] : [`${path}@${entry.version} (node ${range}) refuses part of ${supported}`];
  });
}

describe("Node versions (package.json engines, package-lock.json)", () => {
  const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { engines: { node: string } };
  const lock = JSON.parse(readFileSync(join(ROOT, "package-lock.json"), "utf8")) as { packages: Record<string, LockEntry> };
  const supported = manifest.engines.node;

  it("the project supports Node 20 from 20.19, 22 from 22.13 and 24 on, and no other line", () => {
    expect(lock.packages[""]!.engines?.node).toBe(supported);
    for (const v of ["20.19.0", "20.20.2", "22.13.0", "22.23.5", "24.0.0", "24.22.3"]) expect(semver.satisfies(v, supported), v).toBe(true);
    for (const v of ["18.20.8", "20.18.3", "21.7.3", "22.12.0", "23.11.1"]) expect(semver.satisfies(v, supported), v).toBe(false);
  });

  it("every runtime dependency's engines.node admits every supported version", () => {
    const runtime = Object.keys(lock.packages).filter((p) => p !== "" && lock.packages[p]!.dev !== true);
    expect(runtime).toContain("node_modules/eventsource-parser");
    expect(runtime.filter((p) => lock.packages[p]!.engines?.node !== undefined).length).toBeGreaterThan(5);
    expect(refusals(lock.packages, supported, "runtime")).toEqual([]);
  });

  it("every package of the test toolchain admits every supported version (npm ci && npm test installs without a warning)", () => {
    expect(lock.packages["node_modules/vitest"]?.engines?.node).toBeDefined();
    expect(refusals(lock.packages, supported, "dev")).toEqual([]);
  });

  it("a package that refuses part of the range is reported, by kind", () => {
    const packages = {
      "": { version: "0.1.0", engines: { node: ">=99" } },
      "node_modules/late": { version: "4.1.3", engines: { node: ">=22.12" } },
      "node_modules/either": { version: "1.0.0", engines: { node: "^16 || ^18 || >=20" } },
      "node_modules/capped": { version: "2.0.0", engines: { node: ">=20 <25" } },
      "node_modules/tool": { version: "1.0.0", dev: true, engines: { node: "^20.19.0 || ^22.12.0 || >=23.5.0" } },
    };
    const range = "^20.19.0 || ^22.13.0 || >=24";
    expect(refusals(packages, range, "runtime")).toEqual([
      "node_modules/late@4.1.3 (node >=22.12) refuses part of ^20.19.0 || ^22.13.0 || >=24",
      "node_modules/capped@2.0.0 (node >=20 <25) refuses part of ^20.19.0 || ^22.13.0 || >=24",
    ]);
    expect(refusals(packages, range, "dev")).toEqual([]);
    expect(refusals(packages, "^20.19.0 || ^22.7.0 || >=24", "dev")).toEqual(["node_modules/tool@1.0.0 (node ^20.19.0 || ^22.12.0 || >=23.5.0) refuses part of ^20.19.0 || ^22.7.0 || >=24"]);
  });
});
