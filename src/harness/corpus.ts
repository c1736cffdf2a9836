// Test ids of a corpus: every fixture is named by its path relative to the corpus root it was
// found under (the directory given on the command line, or a single file's own directory), so
// `create-quote.json` is the same test in every checkout, CI job and report; a block is
// `<id>::<height>`. Ids select fixtures (`-k`), key the corpus index and name report rows.
import { basename, dirname, resolve } from "node:path";
import { statSync } from "node:fs";
import { fixtureFiles } from "./documents.js";
import { STDIN } from "../json/read.js";

export interface CorpusFile {
  /** The path as it is opened. */
  file: string;
  /** Its path relative to `root`. */
  id: string;
  /** The corpus root: the directory argument it came from, or the file's directory. */
  root: string;
  /** The command-line argument it came from (a report's suite). */
  target: string;
}

/**
 * The fixtures named by `targets` (files and directories), each once, with their ids. A file
 * name that occurs under two roots is ambiguous as an id: those fixtures are named by their path
 * as given instead (`a/x.json`, `b/x.json`).
 */
export function corpusFiles(targets: readonly string[]): CorpusFile[] {
  const out: CorpusFile[] = [];
  const seenFiles = new Set<string>();
  for (const target of targets) {
    const isDir = target !== STDIN && statSync(target, { throwIfNoEntry: false })?.isDirectory() === true;
    for (const file of fixtureFiles(target)) {
      const full = file === STDIN ? STDIN : resolve(file);
      if (seenFiles.has(full)) continue;
      seenFiles.add(full);
      out.push({ file, id: file === STDIN ? "-" : basename(file), root: isDir ? target : dirname(file), target });
    }
  }
  const uses = new Map<string, number>();
  for (const f of out) uses.set(f.id, (uses.get(f.id) ?? 0) + 1);
  return out.map((f) => (uses.get(f.id)! > 1 ? { ...f, id: f.file } : f));
}

/** The id of block `height` of fixture `id`. */
export const blockId = (id: string, height: bigint): string => `${id}::${height}`;
