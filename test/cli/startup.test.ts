// Start-up: a call loads the modules of the command it runs, not every command's
// (src/cli/program.ts AREAS). The real CLI is spawned (after `npm run build`) with
// scripts/record-loads.ts as a loader hook, which lists every module the process loaded; what a
// call must not load is checked by name, never by timing (docs/engineering/performance.md "Start-up").
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Command } from "commander";
import { ALIASES, areasFor, buildProgram, nodeAt, TREE, type Area, type TreeNode } from "../../src/cli/program.js";
import { thousands } from "../../src/format.js";

const dir = mkdtempSync(join(tmpdir(), "cbqs-startup-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `cbqs args…` as its own process; returns its exit code, stdout and the modules it loaded (paths below the checkout). */
function loadsOf(...args: string[]): { status: number | null; out: string; err: string; loaded: string[] } {
  const file = join(dir, `loaded-${args[0]}.txt`);
  rmSync(file, { force: true });
  const r = spawnSync(process.execPath, ["--import", "./dist/scripts/record-loads.js", "dist/src/cli.js", ...args], { encoding: "utf8", env: { ...process.env, CBQS_RECORD_LOADS: file } });
  const root = `file://${process.cwd()}/`;
  const loaded = readFileSync(file, "utf8")
    .split("\n")
    .filter((u) => u.startsWith(root))
    .map((u) => u.slice(root.length));
  return { status: r.status, out: r.stdout, err: r.stderr, loaded };
}

const heavy = (pattern: RegExp) => (loaded: string[]) => loaded.filter((f) => pattern.test(f));

describe("a call loads only its command's modules", () => {
  it("`cbqs --version` loads no command module — no engine, codec, store, hash-wasm, noble, cbor-x or lmdb", () => {
    const r = loadsOf("--version");
    expect([r.status, r.out, r.err]).toEqual([0, `${JSON.parse(readFileSync("package.json", "utf8")).version}\n`, ""]);
    expect(r.loaded).toContain("dist/src/cli.js"); // the hook recorded this process
    expect(heavy(/^node_modules\/(?!commander\/)|^dist\/(src\/(engine|codec|crypto|harness|node|chain|scenario)|state|instructions)\/|^dist\/src\/cli\/(?!common|program|define)/)(r.loaded)).toEqual([]);
  });

  it("a per-call `cbqs t8n` of a small block loads no store (lmdb), replay pipeline, node, noble or other command's module", () => {
    const f = JSON.parse(readFileSync("fixtures/corpus/create-quote.json", "utf8")) as {
      genesis: { chain_instance_id: string };
      blocks: Array<{ height: string; timestamp: string; transactions: unknown; post_state: unknown }>;
    };
    const block = f.blocks[1]!; // block 5, the CLI tour's t8n example
    const write = (name: string, value: unknown) => writeFileSync(join(dir, `${name}.json`), JSON.stringify(value));
    write("pre", f.blocks[0]!.post_state);
    write("txs", block.transactions);
    write("env", { height: block.height, timestamp: block.timestamp, chain_id: "7", chain_instance_id: f.genesis.chain_instance_id, governance: "0x00000000000000000000000000000000000000aa" });
    const at = (name: string) => join(dir, `${name}.json`);
    const r = loadsOf("t8n", "--input.alloc", at("pre"), "--input.txs", at("txs"), "--input.env", at("env"), "--output.result", at("result"));
    expect([r.status, r.err]).toEqual([0, ""]);
    expect(JSON.parse(readFileSync(at("result"), "utf8"))).toMatchObject({ height: block.height });
    expect(r.loaded).toEqual(expect.arrayContaining(["dist/src/harness/t8n.js", "dist/src/engine/chain.js", "dist/src/cli/t8n.js"]));
    expect(heavy(/^node_modules\/(lmdb|@noble|cbor-x|msgpackr)\/|^dist\/state\/lmdb\/|^dist\/src\/node\/(?!snapshot-interval)|^dist\/src\/harness\/(replay|pipeline|fill|diff)\.js|^dist\/src\/cli\/(?!common|program|define|t8n|trace-output)/)(r.loaded)).toEqual([]);
  });

  it("a command's call defines only the commands of its area, at their paths and earlier names; all areas together are the whole tree, in --help order", async () => {
    // Every command of the tree and of the aliases, as a path, with its area.
    const leaves = (node: TreeNode, path: string): Array<[string, Area]> => ("area" in node ? [[path, node.area]] : node.children.flatMap((c) => leaves(c, `${path} ${c.name}`)));
    const expected = [...TREE.flatMap((n) => leaves(n, n.name)), ...ALIASES.flatMap(([old, path]) => leaves(nodeAt(path)!, old))];
    const defined = (c: Command, path = ""): string[] => c.commands.filter((s) => s.name() !== "help").flatMap((s) => (s.commands.length === 0 ? [`${path}${s.name()}`] : defined(s, `${path}${s.name()} `)));
    const full = await buildProgram("test");
    expect(defined(full)).toEqual(expected.map(([path]) => path));
    expect(full.commands.filter((c) => !(c as unknown as { _hidden: boolean })._hidden).map((c) => c.name())).toEqual([...TREE.map((n) => n.name), "help"]);
    for (const [path, area] of expected) {
      expect([path, areasFor(path.split(" "))]).toEqual([path, [area]]);
      const alone = defined(await buildProgram("test", [...path.split(" "), "--help"]));
      expect([path, alone]).toEqual([path, expected.filter(([, a]) => a === area).map(([p]) => p)]);
    }
    // --version needs no area; --help, `help`, and an unknown name need them all (commander suggests the nearest).
    expect((await buildProgram("test", ["--version"])).commands.map((c) => c.name())).toEqual(["help"]);
    for (const first of ["--help", "help", "rn"]) expect(defined(await buildProgram("test", [first])), first).toEqual(expected.map(([path]) => path));
  });

  it("thousands groups digits exactly as toLocaleString(\"en-US\") (it no longer initialises ICU for integers)", () => {
    const values: Array<number | bigint> = [0, 1, -1, 999, 1000, -1000, 1234567, -0, 1.5, -2.25, 2 ** 53, 2 ** 53 - 1, -(2 ** 53 - 1), 1e21, NaN, Infinity, 0n, -1000n, 100_000n, 10n ** 30n];
    for (let i = 0; i < 200; i++) values.push((i % 2 === 0 ? 1 : -1) * Math.floor((i * 7919) ** 3 % 1e15), BigInt(i) ** BigInt(i % 17));
    expect(values.filter((v) => thousands(v) !== v.toLocaleString("en-US"))).toEqual([]);
  });
});
