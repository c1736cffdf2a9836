// Words a reader cannot look up: an "issue NN" in a test name, a code comment or a documentation
// page points at a tracker the reader of this repository does not have. Tests are named by the
// behaviour they pin (the § and the rule), code cites the spec section or a decision record
// (D-NNNN), and history belongs in a journal page (docs/journal*.md), the one place exempt.
import { lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..");

const ISSUE_NUMBER = /\bissues? #?\d+/i;

const isJournal = (path: string) => /^docs\/journal[^/]*\.md$/.test(path);

/** The files under `path` that `keep` accepts; symbolic links are not followed. */
function files(path: string, keep: (path: string) => boolean): string[] {
  const stat = lstatSync(join(ROOT, path));
  if (stat.isSymbolicLink()) return [];
  if (!stat.isDirectory()) return keep(path) ? [path] : [];
  return readdirSync(join(ROOT, path))
    .filter((name) => name !== "node_modules")
    .flatMap((name) => files(`${path}/${name}`, keep));
}

/** `path:line: text` for every line of `paths` that says "issue NN". */
function issueNumbers(paths: readonly string[]): string[] {
  return paths.flatMap((path) =>
    readFileSync(join(ROOT, path), "utf8")
      .split("\n")
      .flatMap((line, i) => (ISSUE_NUMBER.test(line) ? [`${path}:${i + 1}: ${line.trim().slice(0, 120)}`] : [])),
  );
}

describe("no issue numbers where a reader cannot look them up", () => {
  it("no test name, test comment or code comment says 'issue NN' (src, state, instructions, scripts, test)", () => {
    const code = ["src", "state", "instructions", "scripts", "test"].flatMap((dir) => files(dir, (p) => /\.(ts|mts|js|mjs|py|html|css)$/.test(p)));
    expect(code.length).toBeGreaterThan(100);
    expect(issueNumbers(code)).toEqual([]);
  });

  it("no documentation page says 'issue NN' (docs/, the README, gas-vectors/), journal pages aside", () => {
    const pages = [...files("docs", (p) => p.endsWith(".md")), "README.md", ...files("gas-vectors", (p) => p.endsWith(".md"))].filter(
      (p) => !isJournal(p),
    );
    expect(pages).toContain("docs/decisions.md");
    expect(issueNumbers(pages)).toEqual([]);
  });

  it("the check finds an issue number in a test name, a comment and a page line, in any case", () => {
    // Spelled in two parts so that this file passes its own check.
    const [issue, Issue] = ["iss" + "ue", "Iss" + "ue"];
    for (const line of [`it("${issue} 22: a rejected top-up persists nothing", () => {`, `// ${Issue} 26 §1: the devnet`, `before ${issue} 11 (b922b24)`, `see ${issue}s 3 and 4`, `${Issue} #27`]) {
      expect(ISSUE_NUMBER.test(line), line).toBe(true);
    }
    for (const line of ["the issue's goal size", "an issue of the spec", "tissue 5"]) expect(ISSUE_NUMBER.test(line), line).toBe(false);
  });

  it("only docs/journal*.md pages are history", () => {
    expect(["docs/journal.md", "docs/journal-2026.md"].every(isJournal)).toBe(true);
    expect(["docs/node.md", "docs/guides/journal.md", "journal.md"].some(isJournal)).toBe(false);
  });
});
