// The in-memory ChainDb against the storage contract (the persistent one runs the same suite).
import { describe, expect, it } from "vitest";
import { ChainDbError } from "../../../state/chain-db/chain-db.js";
import { MemoryChainDb } from "../../../state/chain-db/memory.js";
import { describeChainDb } from "./conformance.js";

describeChainDb("MemoryChainDb", (retainBlocks) => new MemoryChainDb(retainBlocks));

describe("MemoryChainDb's retention", () => {
  it("retainBlocks must be a whole number ≥ 0", () => {
    for (const bad of [-1, 1.5, Number.NaN]) expect(() => new MemoryChainDb(bad)).toThrow(new ChainDbError(`retainBlocks must be a non-negative integer (got ${bad})`));
    expect(new MemoryChainDb(0).retainBlocks).toBe(0);
  });
});
