// The runnable examples of docs/guides/use-the-library.md: every fenced block tagged `ts`, and the output lines each
// promises (`// → …`). Shared by the examples test (in this repository: run with their types
// stripped) and the package test (from an installed tarball: compiled by tsc, then run).
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";

export const ROOT = join(import.meta.dirname, "..", "..");

export interface Example {
  /** 1-based, in the order of docs/guides/use-the-library.md. */
  number: number;
  /** The file and the section heading above it. */
  section: string;
  code: string;
  expected: string[];
  /** It talks to a node: run it with CBQS_NODE_URL set. */
  needsNode: boolean;
  /** It has no static import (only `import type` and `import()`): it runs as a CommonJS module too. */
  commonJs: boolean;
}

/** The `ts` blocks of docs/guides/use-the-library.md, then the README's. */
export function apiExamples(): Example[] {
  const examples: Example[] = [];
  for (const doc of ["docs/guides/use-the-library.md", "README.md"]) collect(doc, examples);
  return examples;
}

function collect(doc: string, examples: Example[]): void {
  const text = readFileSync(join(ROOT, doc), "utf8");
  let section = "";
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (line.startsWith("## ")) section = `${doc} ${line.slice(3)}`;
    if (line !== "```ts") continue;
    const body: string[] = [];
    for (i++; i < lines.length && lines[i] !== "```"; i++) body.push(lines[i]!);
    const code = body.join("\n") + "\n";
    examples.push({
      number: examples.length + 1,
      section,
      code,
      expected: body.filter((l) => l.startsWith("// → ")).map((l) => l.slice("// → ".length)),
      needsNode: code.includes('"cbqs-emulator/client"'),
      commonJs: !/^import (?!type )/m.test(code),
    });
  }
}

export interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs an example as an ES module in `dir` (where `cbqs-emulator` resolves), its types stripped
 * (TypeScript's transpileModule: no type check); its exit status and output.
 */
export async function runExample(example: Example, dir: string, env: Record<string, string> = {}): Promise<Run> {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `api-example-${example.number}.mjs`);
  const { outputText } = ts.transpileModule(example.code, { compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 } });
  writeFileSync(file, outputText);
  return runScript(file, dir, env);
}

/**
 * Runs a JavaScript file with node in `cwd`; its exit status and output. Asynchronous, so a node
 * served by the test's own process can answer it.
 */
export async function runScript(file: string, cwd: string, env: Record<string, string> = {}): Promise<Run> {
  const child = spawn(process.execPath, [file], { cwd, env: { ...process.env, ...env }, timeout: 60_000 });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  const status = await new Promise<number | null>((resolve) => child.on("close", resolve));
  return { status, stdout, stderr };
}

/** What is wrong with a run of `example`: a failed exit, error output, or a promised line missing; empty when it is right. */
export function exampleProblems(example: Example, run: Run): string[] {
  const problems: string[] = [];
  if (run.status !== 0) problems.push(`exit ${run.status}: ${run.stderr.trim()}`);
  else if (run.stderr !== "") problems.push(`stderr: ${run.stderr.trim()}`);
  const printed = new Set(run.stdout.split("\n"));
  for (const line of example.expected) if (!printed.has(line)) problems.push(`does not print ${JSON.stringify(line)}`);
  if (run.stdout.trim() === "") problems.push("prints nothing");
  return problems;
}
