// docs/guides/use-the-library.md's examples, their types stripped, run against the built package the way a user's
// code imports it (by its name: the package resolves itself through package.json `exports`). A
// node for the client's example is a devnet `cbqs node` started here on 127.0.0.1:0. The package
// test type-checks them (test/api/package.test.ts).
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiExamples, exampleProblems, ROOT, runExample } from "./examples.js";
import { requireFreshDist } from "../fuzz/dist.js";
import { startNode, type TestNode } from "../node/helpers.js";
import { DEFAULT_GENESIS_SOURCE } from "../../src/harness/genesis.js";

const examples = apiExamples();
const DIR = join(ROOT, ".cache", "api-examples");

describe("docs/guides/use-the-library.md examples", () => {
  let node: TestNode | undefined;
  beforeAll(async () => {
    requireFreshDist();
    if (examples.some((e) => e.needsNode)) node = await startNode({ kind: "genesis", source: DEFAULT_GENESIS_SOURCE });
  });
  afterAll(async () => {
    await node?.close();
  });

  it("there are examples for every entry point", () => {
    const imports = examples.map((e) => e.code).join("\n");
    for (const entry of ['"cbqs-emulator"', '"cbqs-emulator/state"', '"cbqs-emulator/codec"', '"cbqs-emulator/crypto"', '"cbqs-emulator/client"']) expect(imports).toContain(entry);
    expect(examples.every((e) => e.expected.length > 0)).toBe(true);
  });

  it.each(examples.map((e) => [`${e.number}: ${e.section}`, e] as const))("example %s runs and prints what it says", async (_, example) => {
    const run = await runExample(example, DIR, node === undefined ? {} : { CBQS_NODE_URL: node.url });
    expect(exampleProblems(example, run)).toEqual([]);
  });

  it("a promised line that is not printed is reported (the check can fail)", () => {
    const example = { ...examples[0]!, expected: ["no such line"] };
    expect(exampleProblems(example, { status: 0, stdout: "something\n", stderr: "" })).toEqual(['does not print "no such line"']);
  });
});
