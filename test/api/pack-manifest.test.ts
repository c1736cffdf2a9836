// npm's prepack and postpack steps (scripts/pack-manifest.ts): the packed package.json has no
// `scripts`, the repository's comes back byte for byte, and a dist/ older than its sources is
// never packed. test/api/package.test.ts runs them through a real `npm pack`.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BACKUP, restore, strip } from "../../scripts/pack-manifest.js";

// Written as npm writes it: two spaces, keys in their order, a trailing newline — and one line
// indented its own way, so "byte for byte" is not the same as "re-serialized".
const MANIFEST = '{\n  "name": "p",\n  "scripts": { "prepare": "npm run build" },\n  "type": "module",\n  "exports": { ".": "./dist/src/a.js" }\n}\n';

describe("pack-manifest (prepack strip, postpack restore)", () => {
  let root = "";
  const file = (path: string, text: string, mtime: number) => {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text);
    utimesSync(join(root, path), mtime, mtime);
  };
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "cbqs-pack-manifest-"));
    writeFileSync(join(root, "package.json"), MANIFEST);
    file("src/a.ts", "export {};\n", 1_000);
    file("dist/src/a.js", "export {};\n", 2_000);
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("strip writes package.json without scripts, every other field kept in order; restore puts the original back byte for byte", () => {
    strip(root);
    expect(readFileSync(join(root, "package.json"), "utf8")).toBe('{\n  "name": "p",\n  "type": "module",\n  "exports": {\n    ".": "./dist/src/a.js"\n  }\n}\n');
    restore(root);
    expect(readFileSync(join(root, "package.json"), "utf8")).toBe(MANIFEST);
    expect(existsSync(join(root, BACKUP))).toBe(false);
  });

  it("strip refuses a dist/ older than a source, or missing a build of one, and changes nothing", () => {
    file("src/a.ts", "export const changed = 1;\n", 3_000);
    expect(() => strip(root)).toThrow("dist/ is older than src/a.ts: run npm run build, then pack");
    file("src/a.ts", "export {};\n", 1_000);
    file("state/b.ts", "export {};\n", 1_000);
    expect(() => strip(root)).toThrow("dist/ is older than state/b.ts");
    expect(readFileSync(join(root, "package.json"), "utf8")).toBe(MANIFEST);
    expect(existsSync(join(root, BACKUP))).toBe(false);
  });

  it("strip refuses to run over the backup of a pack that did not finish (it would lose the scripts)", () => {
    strip(root);
    expect(() => strip(root)).toThrow(`${BACKUP} is left from a pack that did not finish`);
    restore(root);
    expect(readFileSync(join(root, "package.json"), "utf8")).toBe(MANIFEST);
  });
});
