// `cbqs consume` and `cbqs fuzz` through every kind of target a node team brings, the compiled CLI
// as they run it in CI: our own server (session_state_root "chain"), and three servers over a
// per-call t8n (session_state_root "per_block") — `cbqs t8n-adapter`, the shipped
// scripts/t8n-server.py, and test/consume/adapters/t8n-server.pl, an adapter in Perl written by
// an outside reader from docs/reference/formats/fixture.md §4–§4.2 alone. Each passes the whole corpus clean and
// leaves no temporary file (it is stopped with EOF, so it can clean up); with one planted
// consensus bug (a mutant copy of dist/, scripts/mutants.ts) each names exactly that difference.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildMutant, MUTANTS, removeMutant } from "../../scripts/mutants.js";
import { requireFreshDist } from "../fuzz/dist.js";

const CLI = "dist/src/cli.js";
let scratch: string;
/** A copy of dist/ in which a quote is still accepted one block after it expired (§4.4). */
let mutant: string;

beforeAll(() => {
  requireFreshDist();
  for (const [tool, check] of [["python3", ["-c", "0"]], ["perl", ["-MJSON::PP", "-e", "1"]]] as const) {
    // In CI this must run (.ci/run installs both); a machine without them fails here with the reason.
    if (spawnSync(tool, check).status !== 0) throw new Error(`these tests run node teams' adapters in Python and Perl: install ${tool === "perl" ? "perl (with JSON::PP, Debian's perl-modules)" : "python3"}`);
  }
  scratch = mkdtempSync(join(tmpdir(), "cbqs-targets-"));
  mutant = buildMutant(process.cwd(), MUTANTS.find((m) => m.name === "quote-accepted-one-block-late")!);
});
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
  removeMutant(mutant);
});

interface Ran {
  code: number | null;
  out: string;
  err: string;
}

/** The compiled cbqs with TMPDIR set to an empty folder of its own, and what it left there. */
function cbqs(args: string[]): Promise<Ran & { leftInTmp: string[] }> {
  const tmp = mkdtempSync(join(scratch, "tmp-"));
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, TMPDIR: tmp }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (c) => (out += String(c)));
    child.stderr.on("data", (c) => (err += String(c)));
    child.on("close", (code) => resolve({ code, out, err, leftInTmp: readdirSync(tmp) }));
  });
}

/** A target kind: the server command over a given build of cbqs (dist/, or the mutant's). */
interface Kind {
  name: string;
  server: (cli: string) => string;
}

const PER_CALL = (cli: string) => `'node ${cli} t8n --quiet'`;
const KINDS: readonly Kind[] = [
  { name: "our server, cbqs t8n --server (chain)", server: (cli) => `node ${cli} t8n --server` },
  { name: "cbqs t8n-adapter over the per-call t8n (per_block)", server: (cli) => `node ${CLI} t8n-adapter ${PER_CALL(cli)}` },
  { name: "scripts/t8n-server.py, Python (per_block)", server: (cli) => `python3 scripts/t8n-server.py ${PER_CALL(cli)}` },
  { name: "an adapter in Perl written from the protocol document alone (per_block)", server: (cli) => `perl test/consume/adapters/t8n-server.pl ${PER_CALL(cli)}` },
];

const SUMMARY = /^consume: (\d+) fixtures?: (\d+) ok, (\d+) mismatch(?:es)?, (\d+) unusable; (\d+) blocks?, (\d+) txs? in /m;

describe.each(KINDS)("consume and fuzz through $name", (kind) => {
  const mutantCli = () => join(mutant, CLI);

  it("the whole corpus: 19 fixtures, 79 blocks, every one ok (exit 0), and no temporary file left", async () => {
    const r = await cbqs(["consume", "fixtures/corpus", "--t8n-server", kind.server(CLI), "--quiet"]);
    expect([r.code, r.err], r.out).toEqual([0, ""]);
    expect(SUMMARY.exec(r.out)!.slice(1, 7)).toEqual(["19", "19", "0", "0", "79", "353"]);
    expect(r.leftInTmp).toEqual([]);
  });

  it("a planted bug is named exactly: the fixture, block, transaction and field, and nothing else differs (exit 1)", async () => {
    const server = kind.server(mutantCli());
    const r = await cbqs(["consume", "fixtures/corpus/create-quote.json", "fixtures/corpus/transfers.json", "--t8n-server", server, "--quiet"]);
    expect(r.code, r.err).toBe(1);
    expect(r.out.split("\n")).toEqual([
      'MISMATCH create-quote.json: block 5 tx 4 CreateStream: t8n result: receipts[4].status expected "rejected" got "ok"',
      `  reproduce: cbqs consume fixtures/corpus/create-quote.json --t8n-server '${server.replaceAll("'", "'\\''")}'`,
      expect.stringMatching(/^consume: 2 fixtures: 1 ok, 1 mismatch, 0 unusable; /),
      "",
    ]);
    expect(r.leftInTmp).toEqual([]);
  });

  it("fuzz: a clean campaign finds no divergence, and leaves no temporary file", async () => {
    const r = await cbqs(["fuzz", "--t8n-server", kind.server(CLI), "--seed", "5", "--runs", "2", "--blocks", "3", "--jobs", "1", "--quiet"]);
    expect([r.code, r.err]).toEqual([0, ""]);
    expect(r.out).toMatch(/^fuzz: 2 runs \(seed 5\), 6 blocks, .*, no divergence\n$/);
    expect(r.leftInTmp).toEqual([]);
  });
});

describe("fuzz names the same planted difference through a chain server and a per-block adapter", () => {
  it("settled-blocks-off-by-one, seed 1 run 4: one first difference, one shrunk chain", async () => {
    const settled = buildMutant(process.cwd(), MUTANTS.find((m) => m.name === "settled-blocks-off-by-one")!);
    try {
      const cli = join(settled, CLI);
      const found = async (server: string) => {
        const out = join(scratch, `report-${readdirSync(scratch).length}`);
        mkdirSync(out);
        const r = await cbqs(["fuzz", "--t8n-server", server, "--seed", "1", "--run", "4", "--blocks", "2", "--jobs", "1", "--quiet", "--out", out]);
        expect(r.code, r.err).toBe(1);
        return r.out.split("\n").slice(0, 2);
      };
      const chain = await found(KINDS[0]!.server(cli));
      expect(chain[0]).toMatch(/^DIVERGENCE seed 1 run 4: block 8: state: key 0x03[0-9a-f]{106}: record\.StreamRecordV1\.last_settled_block expected "6" got "7" \(and 1 more differing key\)$/);
      expect(await found(KINDS[3]!.server(cli))).toEqual(chain);
    } finally {
      removeMutant(settled);
    }
  });
});
