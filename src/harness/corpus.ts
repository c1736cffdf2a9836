// Test ids of a corpus: every fixture is named by its path relative to the corpus root it was
// found under (the directory given on the command line, or a single file's own directory), so
// `create-quote.json` is the same test in every checkout, CI job and report; a block is
// `<id>::<height>`. Ids select fixtures (`-k`), key the corpus index and name report rows.
import { basename, dirname, resolve } from "node:path";
import { statSync } from "node:fs";
import { fixtureFiles } from "./documents.js";
import { InputError, STDIN } from "../json/read.js";

export interface CorpusFile {
  /** The path as it is opened. */
  file: string;
  /** Its path relative to `root`. */
  id: string;
  /** The corpus root: the directory argument it came from, or the file's directory. */
  root: string;
}

/** The fixtures named by `targets` (files and directories), each once, with their ids; two fixtures with one id are unusable input. */
export function corpusFiles(targets: readonly string[]): CorpusFile[] {
  const out: CorpusFile[] = [];
  const seenFiles = new Set<string>();
  const byId = new Map<string, string>();
  for (const target of targets) {
    const isDir = target !== STDIN && statSync(target, { throwIfNoEntry: false })?.isDirectory() === true;
    for (const file of fixtureFiles(target)) {
      const full = file === STDIN ? STDIN : resolve(file);
      if (seenFiles.has(full)) continue;
      seenFiles.add(full);
      const id = file === STDIN ? "-" : basename(file);
      const other = byId.get(id);
      if (other !== undefined) throw new InputError(file, "", `two fixtures have the test id ${id} (the other is ${other}): give them different names or run them separately`);
      byId.set(id, file);
      out.push({ file, id, root: isDir ? target : dirname(file) });
    }
  }
  return out;
}

/** The id of block `height` of fixture `id`. */
export const blockId = (id: string, height: bigint): string => `${id}::${height}`;
