// `cbqs diff <ours> <theirs>` (docs/fixtures.md §6): the first divergence between two run
// documents, fixtures, t8n results, state dumps or traces, or a t8n result and the fixture block
// of its height, narrowed to the field. Both are read and validated completely first.
import type { DiffOutcome } from "../harness/diff.js";
import { readDocumentSteps } from "../harness/documents.js";
import { stoppable, watchSignals } from "../steps.js";
import { EXIT_OK, EXIT_REJECT, exitCodes, oneLine, UsageError } from "./common.js";
import type { CommandSpec } from "./define.js";

export const commands: Readonly<Record<string, CommandSpec>> = {
  diff: {
    description: "first divergence between two run documents, fixtures, t8n results, state dumps or traces, or a t8n result and the fixture block of its height",
    arguments: [
      ["<ours>", "the reference (expected)"],
      ["<theirs>", "the implementation under test (got)"],
    ],
    exits: exitCodes(
      "the two are the same (prints same)",
      "they differ (the first difference, narrowed to the field)",
      "unreadable or malformed input (both are validated completely first), documents that cannot be compared",
      "while reading, nothing printed",
    ),
    action: async (ours: string, theirs: string) => {
      watchSignals();
      const outcome = await compare(ours, theirs);
      // Values echo input: terminal-safe like every error line (detail lines keep their indent).
      const safe = (l: string) => (l.startsWith("  ") ? `  ${oneLine(l)}` : oneLine(l));
      const lines = [...(outcome.lines ?? ["same"]), ...(outcome.note === null ? [] : [`  ${outcome.note}`])];
      process.stdout.write(lines.map(safe).join("\n") + "\n");
      process.exitCode = outcome.lines === null ? EXIT_OK : EXIT_REJECT;
    },
  },
};

async function compare(ours: string, theirs: string): Promise<DiffOutcome> {
  // Both documents are read and validated completely (the loaders replay and t8n use) first.
  const a = await stoppable(readDocumentSteps(ours, ["run", "fixture", "t8n", "dump", "trace"]));
  const b = await stoppable(readDocumentSteps(theirs, ["run", "fixture", "t8n", "dump", "trace"]));
  const { compareDocuments, DiffInputError } = await import("../harness/diff.js");
  try {
    return compareDocuments(a, b);
  } catch (err) {
    if (err instanceof DiffInputError) throw new UsageError(`${ours} and ${theirs}: ${err.message}`);
    throw err;
  }
}
