// Every relative link of the README and docs/ resolves: to a file or folder of the repository, and
// for a link to a heading of a Markdown page (`page.md#anchor`, `#anchor`), to a heading of that page
// (GitHub's anchors: lower case, punctuation dropped, spaces as hyphens, repeats numbered).
// Reference and guide pages carry no dates and no issue numbers: they are looked up, not a diary.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");

function markdown(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return path === join("docs", "api-report") ? [] : markdown(path);
    return e.name.endsWith(".md") ? [path] : [];
  });
}

const PAGES = ["README.md", ...markdown("docs")];

/** The page's text with fenced code blocks blanked: a link in a code example is not a link. */
function prose(text: string): string {
  return text.replace(/^(`{3,})[^\n]*\n[\s\S]*?\n\1[ \t]*$/gm, "");
}

function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of prose(text).matchAll(/^#{1,6} +(.+?) *$/gm)) {
    const base = m[1]!
      .replace(/`/g, "")
      .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, "")
      .replace(/ /g, "-");
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  for (const m of text.matchAll(/<a (?:name|id)="([^"]+)"/g)) out.add(m[1]!);
  return out;
}

const anchorCache = new Map<string, Set<string>>();
const anchorsOf = (page: string): Set<string> => {
  let a = anchorCache.get(page);
  if (a === undefined) anchorCache.set(page, (a = anchors(readFileSync(join(ROOT, page), "utf8"))));
  return a;
};

function brokenLinks(page: string): string[] {
  const text = prose(readFileSync(join(ROOT, page), "utf8")).replace(/`[^`\n]*`/g, "");
  const broken: string[] = [];
  for (const m of text.matchAll(/\]\(([^)\s]+)(?: "[^"]*")?\)/g)) {
    const link = m[1]!;
    if (/^[a-z][a-z0-9+.-]*:/i.test(link)) continue; // https:, mailto:
    const [path, anchor] = link.split("#") as [string, string | undefined];
    const target = path === "" ? page : normalize(join(dirname(page), decodeURIComponent(path)));
    if (relative(ROOT, join(ROOT, target)).startsWith("..") || !existsSync(join(ROOT, target))) {
      broken.push(`${page}: ${link} (no ${target})`);
      continue;
    }
    if (anchor !== undefined && target.endsWith(".md") && !anchorsOf(target).has(decodeURIComponent(anchor))) broken.push(`${page}: ${link} (no heading #${anchor} in ${target})`);
  }
  return broken;
}

describe("documentation links", () => {
  it("there are pages and links to check (test precondition)", () => {
    expect(PAGES.length).toBeGreaterThan(20);
    expect(PAGES).toContain(join("docs", "README.md"));
  });

  it("every relative link of README.md and docs/ names a file or folder that exists, and a heading that exists", () => {
    expect(PAGES.flatMap(brokenLinks)).toEqual([]);
  });

  it("every page of docs/ is linked from the docs index, or from a page it links", () => {
    const reached = new Set<string>();
    const visit = (page: string): void => {
      if (reached.has(page)) return;
      reached.add(page);
      const text = prose(readFileSync(join(ROOT, page), "utf8"));
      for (const m of text.matchAll(/\]\(([^)\s#]+\.md)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/i.test(m[1]!)) continue;
        const target = normalize(join(dirname(page), m[1]!));
        if (existsSync(join(ROOT, target))) visit(target);
      }
    };
    visit(join("docs", "README.md"));
    expect(PAGES.filter((p) => p !== "README.md" && !reached.has(p))).toEqual([]);
  });

  it("guide and reference pages carry no issue numbers and no dates", () => {
    const offenders = PAGES.filter((p) => /^docs\/(guides|reference)\//.test(p)).flatMap((page) =>
      readFileSync(join(ROOT, page), "utf8")
        .split("\n")
        .flatMap((line, i) => (/\bissue \d+|\b20\d\d-\d\d-\d\d\b|\bused to\b/i.test(line) ? [`${page}:${i + 1}: ${line.slice(0, 100)}`] : [])),
    );
    expect(offenders).toEqual([]);
  });
});
