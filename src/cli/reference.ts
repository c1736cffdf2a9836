// docs/reference/cli.md, generated from the commander tree of src/cli/program.ts: every command
// and group --help lists (hidden aliases are not), its usage, arguments, options with their
// defaults, the rules between its options and what its exit codes mean. Written by
// scripts/gen-cli-reference.ts; test/cli/reference.test.ts fails when the committed file is not
// what the tree gives.
import type { Command, Option } from "commander";
import { declaredOf, type OptionRule } from "./define.js";

export const CLI_REFERENCE_PATH = "docs/reference/cli.md";

/** Text for a markdown table cell or list item: `|` would end the cell, `<dir>` would be read as HTML. */
const text = (s: string): string => s.replace(/\|/g, "\\|").replace(/</g, "&lt;");
const code = (s: string): string => `\`${s}\``;

/** The commands --help lists under `command`, in its order: not the hidden aliases. */
function listed(command: Command): Command[] {
  return command.commands.filter((c) => !(c as unknown as { _hidden: boolean })._hidden);
}

function pathOf(command: Command): string {
  return command.parent === null ? command.name() : `${pathOf(command.parent)} ${command.name()}`;
}

/** The anchor GitHub gives the heading `## \`path\``. */
const anchor = (path: string): string => path.toLowerCase().replace(/[^a-z0-9 -]/g, "").replace(/ /g, "-");

function optionRow(o: Option): string {
  const takesValue = o.required || o.optional;
  const notes = [...(o.mandatory ? ["required"] : []), ...(takesValue && o.defaultValue !== undefined ? [`default: ${code(String(o.defaultValue))}`] : [])];
  return `| ${code(o.flags)} | ${text(o.description)}${notes.length === 0 ? "" : ` (${notes.join("; ")})`} |`;
}

function ruleLine(rule: OptionRule): string {
  if ("conflicts" in rule) return rule.conflicts.length === 2 ? `${code(rule.conflicts[0]!)} and ${code(rule.conflicts[1]!)}: not both` : `at most one of ${rule.conflicts.map(code).join(", ")}`;
  if ("needs" in rule) return `${code(rule.needs[0])} only with ${code(rule.needs[1])}`;
  if ("oneOf" in rule) return `exactly one of ${code(rule.oneOf[0])} and ${code(rule.oneOf[1])}`;
  return `at least one of ${code(rule.anyOf[0])} and ${code(rule.anyOf[1])}`;
}

/** One command's or group's section. */
function section(command: Command): string[] {
  const path = pathOf(command);
  const declared = declaredOf(command);
  if (declared === undefined) throw new Error(`${path}: not defined with its exit codes (src/cli/define.ts)`);
  const args = command.registeredArguments;
  const options = command.options.filter((o) => !o.hidden);
  const subcommands = listed(command);
  const lines = [`## ${code(path)}`, "", text(command.description()), "", "```", `${path} ${command.usage()}`, "```", ""];
  if (args.length > 0) {
    lines.push("| argument | |", "| --- | --- |", ...args.map((a) => `| ${code(a.required ? `<${a.name()}${a.variadic ? "..." : ""}>` : `[${a.name()}${a.variadic ? "..." : ""}]`)} | ${text(a.description)} |`), "");
  }
  if (options.length > 0) lines.push("| option | |", "| --- | --- |", ...options.map(optionRow), "");
  if (declared.rules.length > 0) lines.push("Option rules (a command line that breaks one is refused, exit 2):", "", ...declared.rules.map((r) => `- ${ruleLine(r)}`), "");
  if (subcommands.length > 0) lines.push("| command | |", "| --- | --- |", ...subcommands.map((c) => `| [${code(c.name())}](#${anchor(pathOf(c))}) | ${text(c.description())} |`), "");
  const e = declared.exits;
  lines.push("| exit | meaning |", "| --- | --- |", `| 0 | ${text(e.ok)} |`, `| 1 | ${text(e.reject)} |`, `| 2 | ${text(e.unusable)} |`);
  if (e.stopped !== undefined) lines.push(`| 130/143 | stopped by SIGINT/SIGTERM: ${text(e.stopped)} |`);
  return [...lines, ""];
}

/** Every listed command below `command`, depth first in --help order. */
function descendants(command: Command): Command[] {
  return listed(command).flatMap((c) => [c, ...descendants(c)]);
}

/** The reference of `program` (src/cli/program.ts buildProgram with every area loaded). */
export function cliReference(program: Command): string {
  const commands = descendants(program);
  const contents = commands.map((c) => `${"  ".repeat(pathOf(c).split(" ").length - 2)}- [${code(pathOf(c))}](#${anchor(pathOf(c))})`);
  return [
    "# `cbqs` command reference",
    "",
    "<!-- Generated from the command tree (src/cli/program.ts) by `node dist/scripts/gen-cli-reference.js`; test/cli/reference.test.ts fails when it is stale. Do not edit. -->",
    "",
    "Every command, group and option of `cbqs`, as its `--help` shows them, with what its exit codes mean.",
    "Every command also takes `-h, --help`. The conventions they share (exit codes, one error line, `-` for",
    "the standard input, gzip, `-o`, progress, stopping) are in the README's \"The CLI\" and",
    "[docs/fixtures.md §0](../fixtures.md); what is stable across versions is in the README's \"Versioning\".",
    "",
    ...contents,
    "",
    ...section(program),
    ...commands.flatMap(section),
  ].join("\n");
}
