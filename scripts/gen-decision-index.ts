// The decision records (docs/decisions/NNNN-slug.md): one file per place where a specification is
// silent, ambiguous or contradictory and this implementation chose. This script reads their front
// matter, checks it, and writes the index docs/decisions.md from it; `--check` only
// reports what is wrong (the index stale, a cited D-NNNN that does not exist, a record naming a code or
// test path that does not exist, malformed front matter); `--new "Title"` creates the next record
// from the template. test/decisions.test.ts runs the check on every test run.
import { existsSync, lstatSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { checkScriptArgs, usageExit } from "./script-args.js";

export const DECISIONS_DIR = "docs/decisions";
/** The register's index, where the docs have always kept it: the records themselves are in DECISIONS_DIR. */
export const INDEX_FILE = "docs/decisions.md";

export const STATUSES = ["accepted", "withdrawn", "superseded-by D-NNNN"] as const;
export const SCOPES = {
  consensus: "changes roots, receipts or gas",
  interface: "formats, CLI, HTTP",
  tooling: "tests, fuzzing, reports, performance",
} as const;
export type Scope = keyof typeof SCOPES;

export interface DecisionRecord {
  /** The file name within docs/decisions. */
  file: string;
  id: string;
  title: string;
  status: string;
  scope: Scope;
  area: string;
  specSections: string[];
  specGap: boolean;
  code: string[];
  tests: string[];
}

const RECORD_FILE = /^(\d{4})-[a-z0-9]+(?:-[a-z0-9]+)*\.md$/;
const ID = /^D-\d{4}$/;
const AREA = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const FIELDS = ["id", "title", "status", "scope", "area", "spec_sections", "spec_gap", "code", "tests"] as const;
const LIST_FIELDS = new Set<string>(["spec_sections", "code", "tests"]);
/** A record is a page, not a data file: front matter longer than this is refused before it is split. */
const MAX_RECORD_BYTES = 64 * 1024;

/** A scalar: a JSON string when quoted, else the bare text. */
function scalar(text: string, where: string): string {
  if (!text.startsWith('"')) return text;
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === "string") return value;
  } catch {
    // reported below
  }
  throw new Error(`${where}: ${text} is not a quoted string`);
}

/**
 * The front matter of one record: `key: value` lines and `key:` followed by `  - item` lines (or
 * `key: []`), between two `---` lines. Every field of FIELDS, nothing else.
 */
export function parseRecord(file: string, text: string): DecisionRecord {
  if (text.length > MAX_RECORD_BYTES) throw new Error(`${file}: longer than ${MAX_RECORD_BYTES} bytes`);
  const lines = text.split("\n");
  if (lines[0] !== "---") throw new Error(`${file}: does not start with a "---" front matter line`);
  const end = lines.indexOf("---", 1);
  if (end < 0) throw new Error(`${file}: the front matter has no closing "---"`);
  const values = new Map<string, string | string[]>();
  let list: string[] | undefined;
  for (const [n, line] of lines.slice(1, end).entries()) {
    const where = `${file}:${n + 2}`;
    const item = /^ {2}- (.+)$/.exec(line);
    if (item) {
      if (list === undefined) throw new Error(`${where}: a list item outside a list field`);
      list.push(scalar(item[1]!, where));
      continue;
    }
    const field = /^([a-z_]+):(?: (.*))?$/.exec(line);
    if (!field) throw new Error(`${where}: not "key: value" or "  - item": ${JSON.stringify(line)}`);
    const [, key, value] = field as unknown as [string, string, string | undefined];
    if (!(FIELDS as readonly string[]).includes(key)) throw new Error(`${where}: unknown field ${key}`);
    if (values.has(key)) throw new Error(`${where}: field ${key} given twice`);
    list = undefined;
    if (LIST_FIELDS.has(key)) {
      if (value !== undefined && value !== "[]") throw new Error(`${where}: ${key} is a list ("${key}:" then "  - item" lines, or "${key}: []")`);
      list = [];
      values.set(key, list);
    } else {
      if (value === undefined || value === "") throw new Error(`${where}: ${key} has no value`);
      values.set(key, scalar(value, where));
    }
  }
  for (const key of FIELDS) if (!values.has(key)) throw new Error(`${file}: missing field ${key}`);
  const text_ = (key: string) => values.get(key) as string;
  const list_ = (key: string) => values.get(key) as string[];

  const number = RECORD_FILE.exec(file)?.[1];
  if (number === undefined) throw new Error(`${file}: a record's file name is NNNN-slug.md (lowercase letters, digits, dashes)`);
  const id = text_("id");
  if (!ID.test(id)) throw new Error(`${file}: id ${id} is not D-NNNN`);
  if (id !== `D-${number}`) throw new Error(`${file}: id ${id} does not match the file name (D-${number})`);
  const status = text_("status");
  if (status !== "accepted" && status !== "withdrawn" && !/^superseded-by D-\d{4}$/.test(status)) {
    throw new Error(`${file}: unknown status ${JSON.stringify(status)} (one of ${STATUSES.join(", ")})`);
  }
  const scope = text_("scope");
  if (!Object.hasOwn(SCOPES, scope)) throw new Error(`${file}: unknown scope ${JSON.stringify(scope)} (one of ${Object.keys(SCOPES).join(", ")})`);
  const area = text_("area");
  if (!AREA.test(area)) throw new Error(`${file}: area ${JSON.stringify(area)} is not a lowercase-dashed name`);
  const specGap = text_("spec_gap");
  if (specGap !== "yes" && specGap !== "no") throw new Error(`${file}: spec_gap is yes or no, not ${JSON.stringify(specGap)}`);
  return {
    file,
    id,
    title: text_("title"),
    status,
    scope: scope as Scope,
    area,
    specSections: list_("spec_sections"),
    specGap: specGap === "yes",
    code: list_("code"),
    tests: list_("tests"),
  };
}

/** Every record under `root`/docs/decisions, in id order; throws on the first malformed one, a duplicate id or a stray file. */
export function readRecords(root: string): DecisionRecord[] {
  const records: DecisionRecord[] = [];
  const seen = new Map<string, string>();
  for (const file of readdirSync(join(root, DECISIONS_DIR)).sort()) {
    if (file === "README.md") continue;
    const record = parseRecord(file, readFileSync(join(root, DECISIONS_DIR, file), "utf8"));
    const other = seen.get(record.id);
    if (other !== undefined) throw new Error(`${file}: duplicate id ${record.id} (also ${other})`);
    seen.set(record.id, file);
    records.push(record);
  }
  for (const r of records) {
    const target = /^superseded-by (D-\d{4})$/.exec(r.status)?.[1];
    if (target !== undefined && !seen.has(target)) throw new Error(`${r.file}: superseded by ${target}, which does not exist`);
  }
  return records;
}

/** The next free id: one above the highest ever used (ids are never reused, so withdrawn ones count). */
export function nextId(records: readonly DecisionRecord[]): string {
  const highest = records.reduce((max, r) => Math.max(max, Number(r.id.slice(2))), 0);
  return `D-${String(highest + 1).padStart(4, "0")}`;
}

export function slugOf(title: string): string {
  const slug = title
    .toLowerCase()
    .replace(/§/g, "s")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
  if (slug.length <= 60) return slug || "record";
  const cut = slug.slice(0, 60);
  return cut.includes("-") ? cut.slice(0, cut.lastIndexOf("-")) : cut;
}

/** What a record's front matter holds, before it has a file. */
export type RecordFields = Omit<DecisionRecord, "file">;

/** A record's text: its front matter, its heading and `body`. */
export function recordText(r: RecordFields, body: string): string {
  const list = (key: string, items: readonly string[], quoted: boolean) =>
    items.length === 0 ? [`${key}: []`] : [`${key}:`, ...items.map((item) => `  - ${quoted ? JSON.stringify(item) : item}`)];
  return [
    "---",
    `id: ${r.id}`,
    `title: ${JSON.stringify(r.title)}`,
    `status: ${r.status}`,
    `scope: ${r.scope}`,
    `area: ${r.area}`,
    ...list("spec_sections", r.specSections, true),
    `spec_gap: ${r.specGap ? "yes" : "no"}`,
    ...list("code", r.code, false),
    ...list("tests", r.tests, false),
    "---",
    "",
    `# ${r.id} ${r.title}`,
    "",
    body.trimEnd(),
    "",
  ].join("\n");
}

/** A new record's text: example front matter to replace, and the Spec / Choice / Why / Test body. */
export function recordTemplate(id: string, title: string): string {
  const fields: RecordFields = {
    id,
    title,
    status: "accepted",
    scope: "consensus",
    area: "engine",
    specSections: ["CIP-39 §N"],
    specGap: false,
    code: ["src/engine/chain.ts"],
    tests: ["test/engine/dispatch.test.ts"],
  };
  return recordText(
    fields,
    [
      "- **Spec:** what the specification says (quote it, with its CIP and section), and what it leaves open.",
      "- **Choice:** what the code does.",
      "- **Why:** the reason for this reading over the others.",
      "- **Test:** the test file and the test name that pin it.",
      "- **What an implementer must do:** (consensus records only) the rule another implementation must follow to agree with us.",
    ].join("\n"),
  );
}

const HEAD = `<!-- Generated by scripts/gen-decision-index.ts from the records' front matter: do not edit by hand. -->
# Decisions

One record per place where a specification (CIP-39, CIP-4, the scenario format of
docs/scenario-format.md) is silent, ambiguous or contradictory and this implementation had to
choose. Each states the spec text involved (**Spec**), what the code does (**Choice**), the reason
(**Why**) and the tests that pin it (**Test**); a consensus record also says what another
implementation must do to agree with this one. Chain implementers: these are the places to check
first when your node and this emulator disagree. Code, tests and docs cite a record as \`D-NNNN\`.

Scopes: ${Object.entries(SCOPES)
  .map(([scope, meaning]) => `**${scope}** (${meaning})`)
  .join(", ")}.

A record is \`accepted\`, \`withdrawn\` or \`superseded-by D-NNNN\`; its id is never reused.

## Adding a record

1. \`npm run build && node dist/scripts/gen-decision-index.js --new "Title"\` creates
   \`docs/decisions/NNNN-title.md\` with the next free id from the template and prints its path.
2. Fill in its front matter: \`status\` (accepted / withdrawn / superseded-by D-NNNN), \`scope\`
   (consensus / interface / tooling), \`area\` (one of the areas below, or a new lowercase-dashed
   one), \`spec_sections\` (e.g. \`"CIP-39 §4.2"\`), \`spec_gap\` (yes when the spec text is wrong,
   self-contradictory or silent where it must not be: a question for the CIP authors), \`code\` and
   \`tests\` (paths that exist). Write the body, and cite the record as \`D-NNNN\` where the code does it.
3. \`node dist/scripts/gen-decision-index.js\` rewrites this index; test/decisions.test.ts fails
   while it is stale, while a cited id or a listed path does not exist, or while a front matter is
   malformed.

To replace a decision, add the new record and set the old one's status to \`superseded-by D-NNNN\`.

Entries written in the old single-file register (\`## Title\` entries under \`# Section\` in
docs/decisions.md, as a branch older than the records has them): after the merge, keep that
branch's file under another name (say \`old-decisions.md\`), run
\`node dist/scripts/gen-decision-index.js --import old-decisions.md\`, which makes a record of every
entry whose title has none yet, numbered on from the highest id, with a first draft of the front
matter taken from the entry's section and text. Read and correct each (and write "What an
implementer must do" for a consensus record), delete the old file, point its citations at the new
ids, and regenerate this index.
`;

function line(r: DecisionRecord): string {
  const sections = r.specSections.length > 0 ? ` (${r.specSections.join(", ")})` : "";
  const status = r.status === "accepted" ? "" : ` — *${r.status}*`;
  return `- [${r.id}](decisions/${r.file}) ${r.title}${sections}${status}`;
}

function byArea(records: readonly DecisionRecord[]): string[] {
  const areas = [...new Set(records.map((r) => r.area))].sort();
  return areas.flatMap((area) => ["", `### ${area}`, "", ...records.filter((r) => r.area === area).map(line)]);
}

/** The index: the spec gaps first, then the consensus records by area, then interface, then tooling. */
export function renderIndex(records: readonly DecisionRecord[]): string {
  const out = [HEAD];
  out.push("## Spec gaps: questions for the CIP authors", "");
  out.push("The records where the spec text is wrong, self-contradictory or silent where a node must not be;");
  out.push("each says what this implementation does meanwhile and, where there is one, the suggested fix.", "");
  out.push(...records.filter((r) => r.specGap).map((r) => `${line(r)} — ${r.scope}`));
  for (const scope of Object.keys(SCOPES) as Scope[]) {
    out.push("", `## ${scope[0]!.toUpperCase()}${scope.slice(1)} (${SCOPES[scope]})`);
    out.push(...byArea(records.filter((r) => r.scope === scope)));
  }
  return out.join("\n") + "\n";
}

/** Where a cited D-NNNN is looked for, relative to the repository root. */
export const CITING = ["src", "state", "instructions", "scripts", "test", "docs", "README.md"] as const;
const CITED = /\bD-(\d{4})\b/g;
/** A markdown link to a record: `](decisions/0042-slug.md)`, `](0042-slug.md)`. */
const RECORD_LINK = /\]\(((?:[^()\s]*\/)?\d{4}-[a-z0-9-]+\.md)\)/g;
const SKIPPED_DIRS = new Set(["node_modules", "dist", ".git"]);
const TEXT_FILE = /\.(ts|tsx|js|mjs|cjs|py|md|json|html|css|txt)$/;

/** The text files under `path` (or `path` itself); symbolic links are not followed, so a link cycle cannot loop. */
function files(root: string, path: string): string[] {
  const full = join(root, path);
  if (!existsSync(full)) return [];
  const stat = lstatSync(full);
  if (stat.isSymbolicLink()) return [];
  if (!stat.isDirectory()) return TEXT_FILE.test(path) ? [path] : [];
  return readdirSync(full)
    .filter((name) => !SKIPPED_DIRS.has(name))
    .flatMap((name) => files(root, `${path}/${name}`));
}

/** Everything wrong with the records and their citations under `root`, one line each; [] when all is well. */
export function checkDecisions(root: string): string[] {
  let records: DecisionRecord[];
  try {
    records = readRecords(root);
  } catch (err) {
    return [(err as Error).message];
  }
  const problems: string[] = [];
  const ids = new Set(records.map((r) => r.id));
  for (const r of records) {
    for (const path of [...r.code, ...r.tests]) {
      if (!existsSync(join(root, path))) problems.push(`${r.file}: ${path} does not exist`);
    }
  }
  for (const file of CITING.flatMap((path) => files(root, path))) {
    const text = readFileSync(join(root, file), "utf8");
    for (const m of text.matchAll(CITED)) {
      if (!ids.has(`D-${m[1]}`)) problems.push(`${file}: cites D-${m[1]}, which is not a record`);
    }
    if (!file.endsWith(".md")) continue;
    for (const m of text.matchAll(RECORD_LINK)) {
      if (!existsSync(join(root, dirname(file), m[1]!))) problems.push(`${file}: links to ${m[1]}, which does not exist`);
    }
  }
  const index = join(root, INDEX_FILE);
  const current = existsSync(index) ? readFileSync(index, "utf8") : "";
  if (current !== renderIndex(records)) problems.push(`${INDEX_FILE} is stale: run node dist/scripts/gen-decision-index.js`);
  return problems;
}

/** Creates the next record for `title` under `root` and returns its path. */
export function createRecord(root: string, title: string): string {
  const id = nextId(readRecords(root));
  const path = `${DECISIONS_DIR}/${id.slice(2)}-${slugOf(title)}.md`;
  writeFileSync(join(root, path), recordTemplate(id, title), { flag: "wx" });
  return path;
}

/** A title without a trailing tracker reference in parentheses (the word, a space, a number). */
const untracked = (title: string) => title.replace(/\s*\((?:issue|Issue) \d+\)$/, "").trim();

/** The area and scope a section of the single-file register (the old docs/decisions.md, before the records) suggests. */
const LEGACY_SECTIONS: ReadonlyArray<[RegExp, string, Scope]> = [
  [/^Codec/, "codec", "consensus"],
  [/^Crypto/, "crypto", "consensus"],
  [/^State/, "state", "consensus"],
  [/^Engine/, "engine", "consensus"],
  [/^Metering/, "metering", "consensus"],
  [/^Known spec gaps/, "engine", "consensus"],
  [/^Scenarios/, "fixtures", "interface"],
  [/^Node/, "node", "interface"],
  [/^Broker wire/, "broker-wire", "interface"],
  [/^Verifying a broker/, "broker-verify", "interface"],
];

/** The spec sections a **Spec:** paragraph cites: "CIP-4 §5.1", a bare "§4.2" as CIP-39's unless a CIP-4 was named before it. */
export function citedSections(spec: string): string[] {
  const out: string[] = [];
  let cip = "CIP-39";
  for (const m of spec.matchAll(/(CIP-\d+)|(§\d+(?:\.\d+)*|Appendix [A-Z])/g)) {
    if (m[1] !== undefined) cip = m[1];
    else if (!out.includes(`${cip} ${m[2]}`)) out.push(`${cip} ${m[2]}`);
  }
  return out;
}

/**
 * Turns the "## Title" entries of a single-file register (an old docs/decisions.md kept under another name, as branches
 * still write it) that have no record of the same title into new records, numbered on from the
 * highest id; returns their paths. Area, scope and spec gap come from the entry's "# Section",
 * spec sections from its **Spec:** paragraph, code and test paths from the paths its text names
 * that exist: a first draft of the front matter, to be read and corrected like any new record.
 */
export function importRegister(root: string, register: string): string[] {
  const records = readRecords(root);
  const titles = new Set(records.map((r) => r.title));
  let next = Number(nextId(records).slice(2));
  const created: string[] = [];
  let section = "";
  const entries: Array<{ section: string; title: string; lines: string[] }> = [];
  for (const line of register.split("\n")) {
    if (line.startsWith("# ")) section = line.slice(2).trim();
    else if (line.startsWith("## ")) entries.push({ section, title: untracked(line.slice(3)), lines: [] });
    else entries.at(-1)?.lines.push(line);
  }
  for (const entry of entries) {
    if (entry.title === "Contents" || /^Issue \d+/.test(entry.title) || titles.has(entry.title)) continue;
    const body = entry.lines.join("\n").trim();
    const [, area, scope] = LEGACY_SECTIONS.find(([pattern]) => pattern.test(entry.section)) ?? [/./, "engine", "consensus" as Scope];
    const named = [...new Set([...body.matchAll(/(?<![\w/.-])((?:src|state|instructions|scripts|test)\/[\w./-]*\w)/g)].map((m) => m[1]!))];
    const exists = (path: string) => existsSync(join(root, path)) && !statSync(join(root, path)).isDirectory();
    const spec = /\*\*Spec:\*\*([\s\S]*?)(?:\n- \*\*|$)/.exec(body)?.[1] ?? "";
    const id = `D-${String(next++).padStart(4, "0")}`;
    const fields: RecordFields = {
      id,
      title: entry.title,
      status: "accepted",
      scope,
      area,
      specSections: citedSections(spec),
      specGap: /^Known spec gaps/.test(entry.section),
      code: named.filter((p) => !p.startsWith("test/") && exists(p)),
      tests: named.filter((p) => p.startsWith("test/") && exists(p)),
    };
    const path = `${DECISIONS_DIR}/${id.slice(2)}-${slugOf(entry.title)}.md`;
    writeFileSync(join(root, path), recordText(fields, body), { flag: "wx" });
    titles.add(entry.title);
    created.push(path);
  }
  return created;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const usage = `usage: gen-decision-index [--check | --new "Title" | --import <file>]
  (no option)      writes ${INDEX_FILE} from the records' front matter
  --check          reports a stale index, a cited D-NNNN that does not exist, a missing code or test path, malformed front matter (exit 1)
  --new "Title"    creates ${DECISIONS_DIR}/NNNN-title.md with the next free id from the template and prints its path
  --import <file>  makes a record of every "## Title" entry of a single-file register (an old docs/decisions.md, renamed) that has none yet, prints their paths
`;
  const argv = process.argv.slice(2);
  checkScriptArgs(argv, usage, ["--new", "--import"], ["--check"]);
  const root = process.cwd();
  const valueOf = (option: string) => (argv.includes(option) ? argv[argv.indexOf(option) + 1] : undefined);
  const title = valueOf("--new");
  const register = valueOf("--import");
  if (argv.length > 2) usageExit("gen-decision-index", "give one of --check, --new and --import", usage);
  if (title !== undefined) {
    process.stdout.write(`${createRecord(root, title)}\n`);
  } else if (register !== undefined) {
    for (const path of importRegister(root, readFileSync(register, "utf8"))) process.stdout.write(`${path}\n`);
  } else if (argv.includes("--check")) {
    const problems = checkDecisions(root);
    for (const p of problems) process.stderr.write(`${p}\n`);
    process.exitCode = problems.length > 0 ? 1 : 0;
  } else {
    writeFileSync(join(root, INDEX_FILE), renderIndex(readRecords(root)));
  }
}
