import { describe, expect, it } from "vitest";
import { toHex } from "../../../src/bytes.js";
import {
  COMMONWARE_WORKLOADS,
  conformanceDigest,
  keyedRoot,
  traceKeyedWorkload,
} from "../../../state/qmdb/conformance.js";

// External anchors: commonware storage/conformance.toml at commit
// dc41a895f069ad1367fcee6aa475f6cf3d484cce, as listed in docs/reference/anchors.md. Typed in here
// independently of state/qmdb/conformance.ts so a wrong constant there cannot hide a mismatch.
const PUBLISHED: Record<string, string> = {
  "merkle::conformance::tests::MmrRootStability": "4078ce1f5e242f8edb1d41575d51e166af620404036124f8094fc74d4b401047",
  "bmt::tests::conformance::RootConformance": "18b1108f18520078e2eb5bb29c6a4cdf3bded6b52d8efda19d45c0f10be27207",
  "qmdb::conformance::tests::AnyMmrUnorderedVariableConf": "22374a7cbdfa0bdac17e2e285422a54375fec27017942ef7abea2cf8da298c70",
  "qmdb::conformance::tests::CurrentMmrUnorderedVariableConf": "0d0591823b7d5ed8dcb940d086ec214062eb3cfffd018e9fbadf9e16ce8da0f7",
  "qmdb::conformance::tests::AnyMmrUnorderedFixedConf": "79c5de9509b38d619ea082cdee833f80eadfa0ef21211f69039ee2d37de07bad",
  "qmdb::conformance::tests::CurrentMmrUnorderedFixedConf": "8ce052fef8ce8e4d817a2961144cf3a28aec4bd6eb75d32b013499116a6981da",
};

describe("commonware conformance digests (CIP-4 §5.1–§5.3, docs/reference/anchors.md)", () => {
  it("covers exactly the six anchored workloads", () => {
    expect(COMMONWARE_WORKLOADS.map((w) => w.name).sort()).toEqual(Object.keys(PUBLISHED).sort());
  });

  for (const workload of COMMONWARE_WORKLOADS) {
    it(`§5.1 ${workload.name} over ${workload.nCases} seeds matches the published digest`, () => {
      expect(workload.nCases).toBe(200);
      expect(conformanceDigest(workload.nCases, workload.commit)).toBe(PUBLISHED[workload.name]);
    });
  }
});

describe("conformance trace (debugging aid for node implementers)", () => {
  it("§5.1 the traced batches end in the workload root and every batch ends with its commit", () => {
    for (const variant of ["any", "current"] as const) {
      const steps = traceKeyedWorkload(variant, "variable", 17);
      expect(steps).toHaveLength(4);
      expect(steps[3]!.root).toBe(toHex(keyedRoot(variant, "variable", 17)));
      for (const step of steps) expect(step.ops[step.ops.length - 1]!.startsWith("0xd300")).toBe(true);
      expect(steps.map((s) => s.start)).toEqual([1, ...steps.slice(0, 3).map((s) => s.start + s.ops.length)]);
    }
  });
});
