import { describe, expect, it } from "vitest";
import { cbqs, unusableInput } from "../cli/program.js";

const PUB = "0xd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
const SIG =
  "0xe5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b";

describe("cbqs verify-sig (CIP-39 §9.1)", () => {
  it("§9.1 CLI prints valid and exits 0 for RFC 8032 test 1", async () => {
    expect(await cbqs("verify-sig", "--pub", PUB, "--msg", "0x", "--sig", SIG)).toEqual({ out: "valid\n", exitCode: 0, err: "" });
  });

  it("§9.1 CLI prints the reject reason and exits 1", async () => {
    expect(await cbqs("verify-sig", "--pub", PUB, "--msg", "0x00", "--sig", SIG)).toEqual({
      out: "invalid: equation failed\n",
      exitCode: 1,
      err: "",
    });
    expect(await cbqs("verify-sig", "--pub", "0x" + "00".repeat(32), "--msg", "0x", "--sig", SIG, "--json")).toEqual({
      out: '{"valid":false,"reason":"small-order A"}\n',
      exitCode: 1,
      err: "",
    });
  });

  it("verifier exit rule : a key or signature of the wrong length is malformed input, exit 2, not an invalid signature", async () => {
    expect(await cbqs("verify-sig", "--pub", "0x01", "--msg", "0x", "--sig", SIG)).toEqual(unusableInput(/--pub: expected 32 bytes, got 1(?!\d)/));
    expect(await cbqs("verify-sig", "--pub", PUB + "00", "--msg", "0x", "--sig", SIG)).toEqual(unusableInput(/--pub: expected 32 bytes, got 33/));
    expect(await cbqs("verify-sig", "--pub", PUB, "--msg", "0x", "--sig", SIG.slice(0, -2))).toEqual(unusableInput(/--sig: expected 64 bytes, got 63/));
    expect(await cbqs("verify-sig", "--pub", PUB, "--msg", "0x", "--sig", "0x")).toEqual(unusableInput(/--sig: expected 64 bytes, got 0/));
  });

  it("§9.1 CLI treats malformed hex as unusable input", async () => {
    const malformedHex = unusableInput(/--pub: expected 0x-prefixed hex with an even number of digits/);
    expect(await cbqs("verify-sig", "--pub", "0xabc", "--msg", "0x", "--sig", SIG)).toEqual(malformedHex);
    expect(await cbqs("verify-sig", "--pub", PUB.slice(2), "--msg", "0x", "--sig", SIG)).toEqual(malformedHex);
  });
});
