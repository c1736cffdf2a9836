// Commands as data. A command is a CommandSpec — its help, arguments, options, the rules between
// its options, what its exit codes mean, and its action — and a group is a GroupSpec; where each
// one stands in the `cbqs` tree, and which earlier names stay as hidden aliases, is the table of
// src/cli/program.ts. defineCommand and defineGroup turn them into commander commands, and the
// rules are checked here, in one place, before any action runs.
import type { Command, Option } from "commander";
import { exitCodesText, UsageError, type ExitCodes } from "./common.js";

/**
 * A rule between a command's options, each named by its flag (`--db`, `-k`), or its optional
 * argument, named as declared (`[file]`). A broken rule is `message`, one error line, exit 2.
 * An option counts as given when it is on the command line (a default is not given).
 */
export type OptionRule =
  /** At most one of them (`message` may name the ones given). */
  | { readonly conflicts: readonly string[]; readonly message: string | ((given: readonly string[]) => string) }
  /** The first only together with the second. */
  | { readonly needs: readonly [string, string]; readonly message: string }
  /** Exactly one of them. */
  | { readonly oneOf: readonly [string, string]; readonly message: string }
  /** At least one of them. */
  | { readonly anyOf: readonly [string, string]; readonly message: string };

export interface CommandSpec {
  readonly description: string;
  /** `<name>` (required), `[name]` (optional), `<name...>` (one or more), each with its help. */
  readonly arguments?: ReadonlyArray<readonly [name: string, description?: string]>;
  /** Made anew for each command defined from the spec (an alias is a second one): commander keeps state on them. */
  readonly options?: () => readonly Option[];
  readonly rules?: readonly OptionRule[];
  readonly exits: ExitCodes;
  /** Called as commander calls an action: the arguments, the options, the command. */
  readonly action: (...args: never[]) => void | Promise<void>;
  /** What commander has no declaration for: an option that changes others (t8n --server), an earlier spelling. */
  readonly configure?: (command: Command) => void;
}

export interface GroupSpec {
  readonly description: string;
  readonly exits: ExitCodes;
}

/** What a defined command declared that commander does not keep (docs/reference/cli.md shows it). */
export interface Declared {
  readonly exits: ExitCodes;
  readonly rules: readonly OptionRule[];
}

const declared = new WeakMap<Command, Declared>();

/** The exit codes and rules `command` was defined with (undefined for one not defined here). */
export function declaredOf(command: Command): Declared | undefined {
  return declared.get(command);
}

/** Ends `command`'s --help with what its exit codes mean, and keeps them and its rules for docs/reference/cli.md. */
export function declare(command: Command, exits: ExitCodes, rules: readonly OptionRule[] = []): Command {
  declared.set(command, { exits, rules });
  return command.addHelpText("after", exitCodesText(exits));
}

/** A group of commands under `parent`: its subcommands are defined on it afterwards. */
export function defineGroup(parent: Command, name: string, spec: GroupSpec, hidden = false): Command {
  return declare(parent.command(name, { hidden }).description(spec.description), spec.exits);
}

/** The command `spec` under `parent` as `name`; `hidden` leaves it out of --help listings (an alias). */
export function defineCommand(parent: Command, name: string, spec: CommandSpec, hidden = false): Command {
  const command = parent.command(name, { hidden }).description(spec.description);
  for (const [argument, description] of spec.arguments ?? []) command.argument(argument, description);
  for (const option of spec.options?.() ?? []) command.addOption(option);
  spec.configure?.(command);
  const rules = spec.rules ?? [];
  declare(command, spec.exits, rules);
  // After the checks every command has (src/cli/common.ts: unknown, missing and output options).
  if (rules.length > 0) command.hook("preAction", () => checkRules(command, rules));
  return command.action(spec.action as (...args: unknown[]) => void | Promise<void>);
}

/** Defines every command of an area at the top of `program` (the tests that run one area alone). */
export function defineAll(program: Command, commands: Readonly<Record<string, CommandSpec>>): void {
  for (const [name, spec] of Object.entries(commands)) defineCommand(program, name, spec);
}

/** Whether the option or argument `subject` is given on `command`'s command line. */
function given(command: Command, subject: string): boolean {
  if (subject.startsWith("<") || subject.startsWith("[")) {
    const index = command.registeredArguments.findIndex((a) => a.name() === subject.slice(1, -1));
    if (index < 0) throw new Error(`${command.name()}: a rule names ${subject}, which is not an argument`);
    return command.processedArgs[index] !== undefined;
  }
  const option = command.options.find((o) => o.long === subject || o.short === subject);
  if (option === undefined) throw new Error(`${command.name()}: a rule names ${subject}, which is not an option`);
  return command.getOptionValueSource(option.attributeName()) === "cli";
}

/** The first rule `command`'s command line breaks, as a usage error; the rules are checked in order. */
function checkRules(command: Command, rules: readonly OptionRule[]): void {
  const has = (subject: string) => given(command, subject);
  const broken = firstBroken(rules, has);
  if (broken !== undefined) throw new UsageError(ruleMessage(broken, has));
}

/** The first of `rules` that a command line giving the options and arguments `has` says it gives breaks, if any. */
export function firstBroken(rules: readonly OptionRule[], has: (subject: string) => boolean): OptionRule | undefined {
  return rules.find((rule) => {
    if ("conflicts" in rule) return rule.conflicts.filter(has).length > 1;
    if ("needs" in rule) return has(rule.needs[0]) && !has(rule.needs[1]);
    if ("oneOf" in rule) return has(rule.oneOf[0]) === has(rule.oneOf[1]);
    return !has(rule.anyOf[0]) && !has(rule.anyOf[1]);
  });
}

/** The error line of a broken `rule` (a conflict's may name the options given). */
export function ruleMessage(rule: OptionRule, has: (subject: string) => boolean): string {
  if ("conflicts" in rule && typeof rule.message !== "string") return rule.message(rule.conflicts.filter(has));
  return rule.message as string;
}
