// Reading fixtures and scenarios from disk for the harness commands: a file, or every
// `*.json` / `*.json.gz` in a directory (sorted by name, not recursive). Every problem is a
// HarnessInputError naming the file, for the CLI's one-line exit-2 report.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { FixtureError, fixtureText, MAX_FIXTURE_BYTES, parseFixtureText, type Fixture } from "./fixture.js";

export class HarnessInputError extends Error {
  override name = "HarnessInputError";
}

const isFixtureName = (name: string): boolean => name.endsWith(".json") || name.endsWith(".json.gz");

/** The fixture files named by `target`: the file itself, or a directory's fixtures. */
export function fixtureFiles(target: string): string[] {
  let isDir: boolean;
  try {
    isDir = statSync(target).isDirectory();
  } catch (err) {
    throw new HarnessInputError(`cannot read ${target}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  if (!isDir) return [target];
  const files = readdirSync(target)
    .filter(isFixtureName)
    .sort()
    .map((name) => join(target, name));
  if (files.length === 0) throw new HarnessInputError(`${target}: no *.json or *.json.gz fixtures in this directory`);
  return files;
}

export function readBytes(file: string, max = MAX_FIXTURE_BYTES): Uint8Array {
  try {
    const size = statSync(file).size;
    if (size > max) throw new HarnessInputError(`${file}: ${size} bytes exceed the ${max}-byte bound`);
    return readFileSync(file);
  } catch (err) {
    if (err instanceof HarnessInputError) throw err;
    throw new HarnessInputError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
}

export function readText(file: string): string {
  return Buffer.from(readBytes(file)).toString("utf8");
}

export function readJson(file: string): unknown {
  try {
    return JSON.parse(readText(file));
  } catch (err) {
    if (err instanceof HarnessInputError) throw err;
    throw new HarnessInputError(`${file}: not valid JSON (${(err as Error).message})`);
  }
}

export function readFixture(file: string): Fixture {
  try {
    return parseFixtureText(fixtureText(readBytes(file), file.endsWith(".gz")));
  } catch (err) {
    if (err instanceof FixtureError) throw new HarnessInputError(`${file}: ${err.message}`);
    throw err;
  }
}
