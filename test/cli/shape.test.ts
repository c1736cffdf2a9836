// The shape of the CLI's code (src/cli/define.ts, src/cli/program.ts): an action only reads its
// options, calls what does the work and hands the outcome to its output, so no action passed to
// the command tree is longer than 40 lines; and the rules between options are declared in each
// command's table, not tested in actions — every rule of every table is broken here once, on the
// real program, and gives its own error line (exit 2, nothing on stdout) before any work; and each
// output document (`cbqs-replay/v1`, …) is built in one module.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Command } from "commander";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";
import { declaredOf, firstBroken, ruleMessage, type OptionRule } from "../../src/cli/define.js";
import { buildProgram, TREE, type TreeNode } from "../../src/cli/program.js";
import { cbqs } from "./program.js";

const MAX_ACTION_LINES = 40;
const CLI_DIR = "src/cli";

interface Action {
  /** `area name` for a command's spec, `file:line` for another `.action(…)`. */
  readonly of: string;
  readonly where: string;
  readonly lines: number;
}

/**
 * Every action of src/cli/*.ts passed to the command tree, with its length in lines: the `action`
 * of each spec of a module's `commands` table — written there, or returned by a function of the
 * module (`tx: proveInclusionSpec("tx")`), or named (`action: replayAction`) — and every other
 * function passed to `.action(…)` (`cbqs help`).
 */
function actions(): Action[] {
  const found: Action[] = [];
  for (const file of readdirSync(CLI_DIR).filter((f) => f.endsWith(".ts"))) {
    const path = join(CLI_DIR, file);
    const source = ts.createSourceFile(path, readFileSync(path, "utf8"), ts.ScriptTarget.Latest, true);
    const named = new Map<string, ts.Node>();
    let table: ts.ObjectLiteralExpression | undefined;
    const calls: ts.Node[] = [];
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionDeclaration(node) && node.name !== undefined) named.set(node.name.text, node);
      if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer !== undefined) {
        named.set(node.name.text, node.initializer);
        if (node.name.text === "commands" && ts.isObjectLiteralExpression(node.initializer)) table = node.initializer;
      }
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === "action" && node.arguments[0] !== undefined && ts.isFunctionLike(node.arguments[0])) {
        calls.push(node.arguments[0]);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
    const line = (pos: number) => source.getLineAndCharacterOfPosition(pos).line;
    const measured = (of: string, node: ts.Node): Action => {
      // A named function is measured where it is written.
      const body = ts.isIdentifier(node) ? named.get(node.text) : node;
      if (body === undefined) throw new Error(`${path}: the action of ${of}, ${node.getText(source)}, is not a function of this file`);
      return { of, where: `${path}:${line(body.getStart(source)) + 1}`, lines: line(body.getEnd()) - line(body.getStart(source)) + 1 };
    };
    for (const property of table?.properties ?? []) {
      if (!ts.isPropertyAssignment(property)) throw new Error(`${path}: commands.${property.getText(source)} is not a spec`);
      const name = ts.isStringLiteral(property.name) ? property.name.text : property.name.getText(source);
      let spec: ts.Node = property.initializer;
      // A spec made by a function of the module: the object it returns.
      if (ts.isCallExpression(spec) && ts.isIdentifier(spec.expression)) spec = named.get(spec.expression.text) ?? spec;
      const action = actionIn(spec);
      if (action === undefined) throw new Error(`${path}: no action found for the command ${name}`);
      found.push(measured(`${file.replace(/\.ts$/, "")} ${name}`, action));
    }
    for (const node of calls) found.push(measured(`${path}:${line(node.getStart(source)) + 1}`, node));
  }
  return found;
}

/** The value of the first `action:` property at or under `node`. */
function actionIn(node: ts.Node): ts.Node | undefined {
  if (ts.isPropertyAssignment(node) && ts.isIdentifier(node.name) && node.name.text === "action") return node.initializer;
  return ts.forEachChild(node, actionIn);
}

/** The commands of the tree (TREE's leaves: one CommandSpec each), as `area name`. */
const leaves = (nodes: readonly TreeNode[]): string[] => nodes.flatMap((n) => ("children" in n ? leaves(n.children) : [`${n.area} ${n.name}`]));

describe("actions", () => {
  it(`no action passed to the command tree is longer than ${MAX_ACTION_LINES} lines (src/cli/*.ts read with the TypeScript compiler)`, () => {
    const found = actions();
    // Every command of the tree has its action among them (none missed by the search), and `cbqs help` its own.
    expect(new Set(found.filter((a) => !a.of.startsWith(CLI_DIR)).map((a) => a.of))).toEqual(new Set(leaves(TREE)));
    expect(found.filter((a) => a.of.startsWith(CLI_DIR)).map((a) => a.of.split(":")[0])).toEqual([`${CLI_DIR}/program.ts`]);
    expect(found.filter((a) => a.lines > MAX_ACTION_LINES)).toEqual([]);
  });
});

/** The TypeScript files under `dir`. */
const sourcesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sourcesUnder(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : []));

const DOCUMENT_ID = /^cbqs-[a-z0-9-]+\/v[0-9]+$/;

/**
 * Where each document is built: the modules of src/ and state/ whose object literals give it its
 * `format` (written out, or as the constant that holds it).
 */
function documentBuilders(): Map<string, Set<string>> {
  const constants = new Map<string, string>();
  const formats: Array<{ file: string; value: ts.Expression }> = [];
  for (const file of [...sourcesUnder("src"), ...sourcesUnder("state")]) {
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer !== undefined && ts.isStringLiteral(node.initializer) && DOCUMENT_ID.test(node.initializer.text)) {
        if (constants.has(node.name.text)) throw new Error(`${file}: a second constant ${node.name.text}`);
        constants.set(node.name.text, node.initializer.text);
      }
      if (ts.isPropertyAssignment(node) && node.name.getText(source) === "format") formats.push({ file, value: node.initializer });
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  const builders = new Map<string, Set<string>>();
  for (const { file, value } of formats) {
    const id = ts.isStringLiteral(value) ? value.text : ts.isIdentifier(value) ? constants.get(value.text) : undefined;
    if (id === undefined || !DOCUMENT_ID.test(id)) continue;
    builders.set(id, (builders.get(id) ?? new Set()).add(file));
  }
  return builders;
}

describe("output documents", () => {
  it("each document the CLI writes is built in exactly one module (its `format` given there and nowhere else)", () => {
    expect(Object.fromEntries([...documentBuilders()].map(([id, files]) => [id, [...files]]))).toEqual({
      "cbqs-replay/v1": ["src/cli/replay-report.ts"],
      "cbqs-run/v1": ["src/scenario/run.ts"],
      "cbqs-fixture/v1": ["src/harness/fixture.ts"],
      "cbqs-fixture-index/v1": ["src/harness/corpus-index.ts"],
      "cbqs-t8n-result/v1": ["src/harness/t8n.ts"],
      "cbqs-trace/v1": ["src/harness/trace.ts"],
      "cbqs-state-dump/v1": ["state/kv/dump.ts"],
      "cbqs-fuzz-report/v1": ["src/fuzz/report.ts"],
      "cbqs-verify-broker/v1": ["src/broker-kit/report.ts"],
      "cbqs-broker-bundle/v1": ["src/broker-kit/bundle.ts"],
    });
  });
});

/** The commands of `command` as --help lists them (earlier names are the same commands, hidden), with their paths. */
function listed(command: Command, path: string[]): Array<{ path: string[]; command: Command }> {
  return command.commands
    .filter((c) => !(c as unknown as { _hidden: boolean })._hidden)
    .flatMap((c) => [{ path: [...path, c.name()], command: c }, ...listed(c, [...path, c.name()])]);
}

/** The options and arguments `rule` names. */
function subjects(rule: OptionRule): readonly string[] {
  if ("conflicts" in rule) return rule.conflicts;
  if ("needs" in rule) return rule.needs;
  if ("oneOf" in rule) return rule.oneOf;
  return rule.anyOf;
}

/**
 * Command lines, as the options and arguments they give, that break `rule` (a oneOf twice: with
 * neither and with both): the subjects that break it, plus what it takes to keep every earlier rule
 * of `rules` (an option another one needs, one of an either-or), so that `rule` is the one reported.
 */
function breaking(rules: readonly OptionRule[], rule: OptionRule): Array<Set<string>> {
  const starts: Array<{ given: string[]; keepOut: string[] }> =
    "conflicts" in rule ? [{ given: rule.conflicts.slice(0, 2), keepOut: [] }]
    : "needs" in rule ? [{ given: [rule.needs[0]], keepOut: [rule.needs[1]] }]
    : "oneOf" in rule ? [{ given: [], keepOut: [...rule.oneOf] }, { given: [...rule.oneOf], keepOut: [] }]
    : [{ given: [], keepOut: [...rule.anyOf] }];
  return starts.map(({ given: start, keepOut }) => {
    const given = new Set(start);
    for (let broken = firstBroken(rules, (s) => given.has(s)); broken !== rule; broken = firstBroken(rules, (s) => given.has(s))) {
      // An earlier rule is broken: keep it by giving one more option, never one that would keep `rule`.
      const add = broken === undefined || "conflicts" in broken ? undefined : (("needs" in broken ? [broken.needs[1]] : subjects(broken)).find((s) => !keepOut.includes(s) && !given.has(s)));
      if (add === undefined) throw new Error(`no command line breaks ${JSON.stringify(rule)} alone`);
      given.add(add);
    }
    return given;
  });
}

const dir = mkdtempSync(join(tmpdir(), "cbqs-rules-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The argv of `path` giving exactly `given` (plus what commander requires: its required arguments
 * and options, but no required option a rule says cannot go with one given). A value is a name in
 * an empty directory, or an option's first choice: nothing exists to be read, and an output there
 * can be written.
 */
function argv(path: readonly string[], command: Command, rules: readonly OptionRule[], given: ReadonlySet<string>): string[] {
  const excluded = (flag: string) => rules.some((r) => "conflicts" in r && r.conflicts.includes(flag) && r.conflicts.some((o) => o !== flag && given.has(o)));
  const args = command.registeredArguments.filter((a) => a.required || given.has(`[${a.name()}]`)).map((a) => join(dir, a.name()));
  const options = command.options.filter((o) => given.has(o.long!) || given.has(o.short!) || (o.mandatory && !excluded(o.long!)));
  const flags = options.flatMap((o) => {
    const flag = given.has(o.short!) ? o.short! : o.long!;
    if (!o.required && !o.optional) return [flag];
    return [flag, o.argChoices?.[0] ?? join(dir, o.attributeName())];
  });
  return [...path, ...args, ...flags];
}

describe("the rules between options (each command's table, checked in src/cli/define.ts)", async () => {
  const program = await buildProgram("test");
  const withRules = listed(program, []).filter(({ command }) => (declaredOf(command)?.rules.length ?? 0) > 0);

  it("the commands with rules are the ones whose options depend on each other (test precondition)", () => {
    expect(withRules.map((c) => c.path.join(" ")).sort()).toEqual(["check broker", "consume", "follow", "fuzz", "node", "proof state", "replay", "state dump", "t8n", "tx"]);
  });

  for (const { path, command } of withRules) {
    const rules = declaredOf(command)!.rules;
    it(`cbqs ${path.join(" ")}: ${rules.length === 1 ? "its rule" : `each of its ${rules.length} rules`}, broken alone, is exit 2 with its own error line before any work`, async () => {
      for (const rule of rules) {
        for (const given of breaking(rules, rule)) {
          const args = argv(path, command, rules, given);
          const expected = `cbqs: error: ${ruleMessage(rule, (s) => given.has(s))}\n`;
          expect({ args, ...(await cbqs(...args)) }).toEqual({ args, exitCode: 2, out: "", err: expected });
        }
      }
      // Nothing was written: every value named the empty directory.
      expect(readdirSync(dir)).toEqual([]);
    });
  }
});
