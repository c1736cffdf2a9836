// The node's structured log on stderr (src/node/server.ts stderrLogger), as `cbqs node`
// writes it. Its own file: the command ends by a signal, which stops any node started after it in
// the same module.
import { describe, expect, it } from "vitest";
import { withNodeCommand } from "./command.js";
import { post } from "./helpers.js";

const FIXTURE = "fixtures/corpus/create-quote.json";

describe("the structured log on stderr (src/node/server.ts stderrLogger)", () => {
  it("cbqs node writes one JSON object per line on stderr, each with its time first, then the entry's fields", async () => {
    const r = await withNodeCommand(["--fixture", FIXTURE, "--port", "0"], async (url) => {
      expect((await post(url, "/mine", "")).status).toBe(200);
    });
    expect(r.exitCode).toBe(0);
    expect(r.err.endsWith("\n")).toBe(true);
    const lines = r.err.slice(0, -1).split("\n");
    expect(lines.length).toBeGreaterThan(1);
    for (const line of lines) {
      const entry = JSON.parse(line) as Record<string, unknown>;
      expect(Object.keys(entry)[0], line).toBe("time");
      expect(new Date(entry["time"] as string).toISOString(), line).toBe(entry["time"]);
      expect(typeof entry["msg"], line).toBe("string");
    }
    expect(lines.map((l) => (JSON.parse(l) as { msg: string }).msg)).toContain("stopping");
  });
});
