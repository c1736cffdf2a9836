import { describe, expect, it } from "vitest";
import { cbqs, unusableInput } from "../cli/program.js";

describe("cbqs admit-endpoint (CIP-39 §4.3)", () => {
  it("§4.3 CLI accepts with exit 0", async () => {
    expect(await cbqs("admit-endpoint", "--transport", "WebSocketTls", "wss://cbqs.example/stream")).toEqual({
      out: "accept\n",
      exitCode: 0,
      err: "",
    });
  });

  it("§4.3 CLI rejects with the rule number and exit 1", async () => {
    expect(await cbqs("admit-endpoint", "--transport", "Https", "https://2130706433/stream")).toEqual({
      out: "reject: rule 5: IPv4 literal 127.0.0.1 is in 127.0.0.0/8\n",
      exitCode: 1,
      err: "",
    });
    expect(await cbqs("admit-endpoint", "--transport", "Https", "https://@cbqs.example/stream", "--json")).toEqual({
      out: '{"ok":false,"rule":4,"reason":"raw authority contains @"}\n',
      exitCode: 1,
      err: "",
    });
  });

  it("§4.3 CLI treats an unknown transport as unusable input", async () => {
    expect(await cbqs("admit-endpoint", "--transport", "Tcp", "https://x.example/")).toEqual(unusableInput(/unknown transport "Tcp"/));
  });
});
