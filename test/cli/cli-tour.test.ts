// The CLI tour (docs/guides/cli-tour.md) is what a new user types after the README: every
// `cbqs …` example of its table must name a registered command, and the self-contained ones (no
// /tmp input, no shell substitution) must run with the documented outcome — exit 1 where the row
// says "(reject…", else exit 0.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { get, post, startNode } from "../node/helpers.js";
import { cbqs } from "./program.js";

const TOUR = "docs/guides/cli-tour.md";

interface Example {
  command: string;
  expectReject: boolean;
}

function tourExamples(): Example[] {
  const table = readFileSync(TOUR, "utf8");
  const examples: Example[] = [];
  for (const row of table.split("\n").filter((l) => l.startsWith("| `"))) {
    const cell = row.slice(row.indexOf(" | ") + 3);
    for (const m of cell.matchAll(/`(cbqs [^`]+)`([^`]*)/g)) {
      examples.push({ command: m[1]!, expectReject: /^\s*\(reject/.test(m[2]!) });
    }
  }
  return examples;
}

/** Shell words of a one-line example: whitespace-separated, with '…' quoting. */
function words(command: string): string[] {
  return [...command.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]!);
}

const examples = tourExamples();
const selfContained = examples.filter((e) => !/\/tmp\/|\$\(|\*/.test(e.command));

describe("CLI tour: one example per command", () => {
  it("has examples, most of them self-contained (test precondition)", () => {
    expect(examples.length).toBeGreaterThan(15);
    expect(selfContained.length).toBeGreaterThan(10);
  });

  it("every example names a registered command (its --help exits 0)", async () => {
    for (const { command } of examples) {
      const args = words(command).slice(1);
      const end = args.findIndex((a) => !/^[a-z][a-z0-9-]*$/.test(a));
      const names = args.slice(0, end === -1 ? args.length : end); // command [subcommand]
      const r = await cbqs(...names, "--help");
      expect(r.exitCode, command).toBe(0);
      expect(r.err, command).toBe("");
    }
  });

  for (const { command, expectReject } of selfContained) {
    it(`runs: ${command.slice(0, 90)}`, async () => {
      const r = await cbqs(...words(command).slice(1));
      expect(r.err, command).toBe("");
      expect(r.exitCode, command).toBe(expectReject ? 1 : 0);
      expect(r.out.length).toBeGreaterThan(0);
    });
  }
});

describe("CLI tour: the fixture export row", () => {
  it("its examples run in order, /tmp/ a fresh directory: the store filled, exported, and the export replayed (exit 0 each)", async () => {
    const row = readFileSync(TOUR, "utf8").split("\n").find((l) => l.startsWith("| `fixture export` "))!;
    const commands = [...row.matchAll(/`(cbqs [^`]+)`/g)].map((m) => m[1]!);
    expect(commands.map((c) => words(c).slice(1, words(c)[1] === "fixture" ? 3 : 2).join(" "))).toEqual(["replay", "fixture export", "replay"]);
    const dir = mkdtempSync(join(tmpdir(), "cbqs-tour-export-"));
    try {
      for (const command of commands) {
        const r = await cbqs(...words(command.replaceAll("/tmp/", `${dir}/`)).slice(1));
        expect([r.exitCode, r.err], command).toEqual([0, ""]);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("docs/guides/run-a-devnet.md: Serve an existing chain", () => {
  const section = readFileSync("docs/guides/run-a-devnet.md", "utf8").split("## Serve an existing chain")[1]!.split("\n## ")[0]!;

  it("the tx example is accepted and mined by the node the section starts", async () => {
    const fixture = /cbqs node --fixture (\S+)/.exec(section)![1]!;
    // The shell block's `cbqs tx …` command, its line continuation joined.
    const tx = /\$\((cbqs tx [^)]+)\)/.exec(section.replace(/\\\n\s*/g, ""))![1]!;
    const envelope = await cbqs(...words(tx).slice(1));
    expect([envelope.exitCode, envelope.err]).toEqual([0, ""]);
    const node = await startNode(fixture);
    try {
      const genesis = await get(node.url, "/genesis");
      expect(tx).toContain(`--chain-id ${String(genesis.body["chain_id"])} --chain-instance ${String(genesis.body["chain_instance_id"])} `);
      expect(await post(node.url, "/tx", envelope.out.trim())).toMatchObject({ status: 200 });
      const mined = await post(node.url, "/mine", "");
      expect(mined).toMatchObject({ status: 200, body: { height: "7", receipts: [{ status: "ok" }] } });
    } finally {
      await node.close();
    }
  });
});
