import { describe, expect, it } from "vitest";
import { partialMatch } from "../../src/scenario/expect.js";
import { streamId } from "../../src/codec/derive.js";
import { ed25519PublicKeyFromSeed } from "../../src/crypto/ed25519.js";
import { fromHex, toHex } from "../../src/bytes.js";

const id = { chainId: 7n, chainInstanceId: new Uint8Array(32).fill(9) };
const OWNER = "0x1111111111111111111111111111111111111111";
const SEED = "0x" + "42".repeat(32);
const actual = {
  escrow_balance: "80000",
  owner: OWNER,
  linked_stream_id: toHex(streamId(7n, id.chainInstanceId, fromHex(OWNER), 2n)),
  admin_key: { ed25519: toHex(ed25519PublicKeyFromSeed(fromHex(SEED))) },
  config: { retention_ms: "3600000", max_lanes: "1" },
  endpoints: [{ transport: "Https", uri: "https://a.example" }],
  rotation_key: null,
};

describe("expectation matching (scenario-format §3 partial records, §1 input conventions)", () => {
  it("§3: listed fields must equal, unlisted are ignored, nested objects match partially", () => {
    expect(partialMatch({ escrow_balance: 80000, config: { max_lanes: "1" } }, actual, "$", id)).toBeNull();
    expect(partialMatch({ owner: OWNER.toUpperCase().replace("0X", "0x"), rotation_key: null }, actual, "$", id)).toBeNull();
    expect(partialMatch({ config: { max_lanes: "2" } }, actual, "$", id)).toEqual({ path: "$.config.max_lanes", expected: "2", actual: "1" });
    expect(partialMatch({ nope: "1" }, actual, "$", id)).toEqual({ path: "$.nope", expected: "1", actual: undefined });
  });

  it("§1: seeds, stream references and exact arrays", () => {
    expect(partialMatch({ admin_key: { ed25519_seed: SEED } }, actual, "$", id)).toBeNull();
    expect(partialMatch({ linked_stream_id: { owner: OWNER, owner_nonce: "2" } }, actual, "$", id)).toBeNull();
    expect(partialMatch({ linked_stream_id: { owner: OWNER, owner_nonce: "3" } }, actual, "$", id)?.path).toBe("$.linked_stream_id");
    expect(partialMatch({ endpoints: [] }, actual, "$", id)?.path).toBe("$.endpoints");
    expect(partialMatch({ endpoints: [{ uri: "https://a.example" }] }, actual, "$", id)).toBeNull();
  });

  it("§3: null asserts an absent record", () => {
    expect(partialMatch(null, null, "$", id)).toBeNull();
    expect(partialMatch(null, actual, "$", id)?.path).toBe("$");
    expect(partialMatch({ escrow_balance: "1" }, null, "$", id)?.path).toBe("$");
  });
});
