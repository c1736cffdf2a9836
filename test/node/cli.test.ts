// The `cbqs node` command itself: "listening on http://<host>:<port>" once it serves, a clean exit 0
// on SIGTERM/SIGINT (the store closed, nothing half-done), and one-line exit-2 errors for unusable
// input.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { buildProgram } from "../../src/cli/program.js";
import { cbqs, unusableInput } from "../cli/program.js";
import { chainInstanceId } from "../../src/codec/derive.js";
import { DEFAULT_GENESIS, DEFAULT_GENESIS_SOURCE } from "../../src/harness/genesis.js";
import { parseGenesisSection } from "../../src/scenario/genesis.js";
import { get, post, toHex } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "cbqs-node-cli-"));

/** Runs `cbqs node …` in-process until it prints its URL, hands the URL to `use`, then sends `signal`. */
async function withNodeCommand(args: string[], signal: "SIGINT" | "SIGTERM", use: (url: string) => Promise<void>): Promise<{ out: string; err: string; exitCode: number }> {
  let out = "";
  let err = "";
  const o = vi.spyOn(process.stdout, "write").mockImplementation((c) => ((out += String(c)), true));
  const e = vi.spyOn(process.stderr, "write").mockImplementation((c) => ((err += String(c)), true));
  process.exitCode = 0;
  try {
    const running = (await buildProgram("test")).parseAsync(["node", "cbqs", "node", ...args]);
    for (let i = 0; i < 500 && !/listening on /.test(out); i++) await new Promise((r) => setTimeout(r, 10));
    const url = /listening on (\S+)\n/.exec(out)?.[1];
    if (url !== undefined) await use(url);
    process.emit(signal, signal);
    await running;
    return { out, err, exitCode: Number(process.exitCode ?? 0) };
  } finally {
    o.mockRestore();
    e.mockRestore();
    process.exitCode = 0;
  }
}

describe("cbqs node (command)", () => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`prints "listening on" once serving, answers, and exits 0 on ${signal}`, async () => {
      let height = "";
      const r = await withNodeCommand(["--fixture", "fixtures/corpus/create-quote.json", "--host", "127.0.0.1", "--port", "0", "--db", join(dir, "db")], signal, async (url) => {
        height = (await get(url, "/cbqs/finalized-view")).body["height"] as string;
      });
      expect(r.exitCode).toBe(0);
      expect(r.out).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+\n$/);
      expect(height).toBe("6");
      expect(r.err).toMatch(new RegExp(`"msg":"stopping","signal":"${signal}","height":"6"`));
    });
  }

  it("unusable input is exit 2 with one error line", async () => {
    const genesisFile = join(dir, "genesis.json");
    writeFileSync(genesisFile, '{"chain_id": "x"}');
    const cases: Array<[string[], RegExp]> = [
      [["--fixture", "fixtures/corpus/create-quote.json", "--genesis", genesisFile], /--fixture and --genesis are exclusive/],
      // The path is the genesis file's own ($ is the file), not genesis_source's.
      [["--genesis", genesisFile, "--port", "0"], /genesis\.json: invalid genesis: \$\.timestamp: missing/],
      [["--genesis", join(dir, "missing.json")], /cannot read .*missing\.json: no such file or directory \(ENOENT\)/],
      [["--fixture", join(dir, "missing.json")], /cannot read .*missing\.json: no such file or directory \(ENOENT\)/],
      [["--fixture", "fixtures/corpus/create-quote.json", "--port", "70000"], /--port must be an integer from 0 to 65535/],
      [["--fixture", "fixtures/corpus/create-quote.json", "--block-time", "-1"], /--block-time must be seconds/],
      [["--fixture", "fixtures/corpus/create-quote.json", "--rate-limit", "many"], /--rate-limit must be an integer/],
      [["--fixture", "fixtures/corpus/create-quote.json", "--client-rate-limit", "-1"], /--client-rate-limit must be an integer from 0 to 1000000/],
      [["--fixture", "fixtures/corpus/create-quote.json", "--mine-queue", "0"], /--mine-queue must be an integer from 1 to 100000000 \(got 0\)/],
      [["--fixture", "fixtures/corpus/create-quote.json", "--client-mine-queue", "0"], /--client-mine-queue must be an integer from 1 to 100000000 \(got 0\)/],
      [["--fixture", "fixtures/corpus/create-quote.json", "--max-client-subscribers", "x"], /--max-client-subscribers must be an integer from 1 to 100000 \(got x\)/],
      [["--fixture", "fixtures/corpus/create-quote.json", "--host", "0.0.0.0x", "--expose-devnet", "--port", "0", "--quiet"], /cannot listen on 0\.0\.0\.0x:0: ENOTFOUND: --host is not an address of this machine/],
    ];
    for (const [args, problem] of cases) expect(await cbqs("node", ...args), args.join(" ")).toEqual(unusableInput(problem));
  });

  it("a fixture or scenario given as --genesis is named, with the way to its genesis (cbqs genesis) and to start it", async () => {
    const fixture = "fixtures/corpus/create-quote.json";
    const scenario = "fixtures/scenarios/create-quote.json";
    const isFixture = new RegExp(`${fixture}: a cbqs-fixture/v1 document, not a genesis file: cbqs genesis ${fixture} -o genesis\\.json writes its genesis source; cbqs node --fixture ${fixture} starts its chain$`, "m");
    expect(await cbqs("node", "--genesis", fixture, "--port", "0")).toEqual(unusableInput(isFixture));
    expect(await cbqs("derive", "chain-instance-id", "--genesis", fixture)).toEqual(unusableInput(isFixture));
    expect(await cbqs("node", "--genesis", scenario, "--port", "0")).toEqual(unusableInput(/a cbqs-scenario\/v1 document, not a genesis file: .*cbqs fill makes it a fixture/));
  });

  it("cbqs genesis writes a fixture's genesis source: its chain instance id is the fixture's, and node --genesis starts that chain", async () => {
    const fixture = "fixtures/corpus/create-quote.json";
    const genesis = join(dir, "extracted-genesis.json");
    expect(await cbqs("genesis", fixture, "-o", genesis)).toMatchObject({ exitCode: 0, err: "" });
    const expected = (JSON.parse(readFileSync(fixture, "utf8")) as { genesis: { chain_instance_id: string; source: string } }).genesis;
    expect("0x" + readFileSync(genesis).toString("hex")).toBe(expected.source);
    for (const option of ["--genesis", "--genesis-file"]) {
      expect(await cbqs("derive", "chain-instance-id", option, genesis)).toEqual({ exitCode: 0, out: expected.chain_instance_id + "\n", err: "" });
    }
    let instance = "";
    const r = await withNodeCommand(["--genesis", genesis, "--port", "0", "--quiet"], "SIGTERM", async (url) => {
      instance = (await get(url, "/genesis")).body["chain_instance_id"] as string;
    });
    expect([r.exitCode, instance]).toEqual([0, expected.chain_instance_id]);
    // A scenario's genesis source too: the one its filled fixture carries.
    expect((await cbqs("genesis", "fixtures/scenarios/create-quote.json")).out).toBe(readFileSync(genesis, "utf8"));
  });

  it("with --accounts 0 (no dev accounts) and no --genesis/--fixture on an empty store the node starts from the canonical serialization of the default genesis config (CIP-39 §3) and logs the chain instance with the URL", async () => {
    const expectedId = toHex(chainInstanceId(DEFAULT_GENESIS_SOURCE));
    // Pinned (D-0108): a change of the default config is a change of the default chain.
    expect(expectedId).toBe("0x25fa0c715d0eaeaf0b7c493a50756763e148ef0ceabb5f6ef1d8753f902a25a7");
    // The same bytes a scenario whose genesis is the default config is identified by.
    expect(parseGenesisSection({ genesis: DEFAULT_GENESIS }).sourceBytes).toEqual(DEFAULT_GENESIS_SOURCE);
    const store = join(dir, "default-db");
    // Without --accounts the devnet genesis adds dev accounts (test/node/dev-accounts.test.ts);
    // a store holding the default genesis's chain is continued without it.
    for (const args of [["--port", "0", "--accounts", "0"], ["--port", "0", "--db", store, "--accounts", "0"], ["--port", "0", "--db", store]]) {
      let genesis: Record<string, unknown> = {};
      let url = "";
      const r = await withNodeCommand(args, "SIGTERM", async (u) => {
        url = u;
        genesis = (await get(u, "/genesis")).body;
      });
      expect(r.exitCode, args.join(" ")).toBe(0);
      expect(genesis["chain_instance_id"]).toBe(expectedId);
      expect(genesis["source"]).toBe(toHex(DEFAULT_GENESIS_SOURCE));
      expect(r.err).toContain(`"msg":"serving","url":"${url}","chain_instance_id":"${expectedId}","height":"0","genesis":"default","mining":"manual"}`);
    }
    // cbqs derive over those exact bytes names the same chain instance, and node --genesis with them is that chain.
    const file = join(dir, "default-genesis.json");
    writeFileSync(file, DEFAULT_GENESIS_SOURCE);
    expect(await cbqs("derive", "chain-instance-id", "--genesis", file)).toEqual({ exitCode: 0, out: expectedId + "\n", err: "" });
    // A stored chain of another genesis is continued, not replaced by the default.
    const other = join(dir, "other-db");
    await withNodeCommand(["--fixture", "fixtures/corpus/create-quote.json", "--port", "0", "--db", other, "--quiet"], "SIGTERM", async () => undefined);
    let instance = "";
    await withNodeCommand(["--port", "0", "--db", other], "SIGTERM", async (u) => {
      instance = (await get(u, "/genesis")).body["chain_instance_id"] as string;
    });
    expect(instance).toBe(JSON.parse(readFileSync("fixtures/corpus/create-quote.json", "utf8")).genesis.chain_instance_id);
  });

  it("--mine-queue, --client-mine-queue (default a quarter) and --max-client-subscribers bound the node it starts", async () => {
    const invalid = async (url: string, blocks: number) => (await post(url, `/mine?blocks=${blocks}`, "")).body["error"];
    const seen: unknown[] = [];
    await withNodeCommand(["--port", "0", "--quiet", "--mine-queue", "20", "--max-subscribers", "8", "--max-client-subscribers", "1"], "SIGTERM", async (url) => {
      seen.push(await invalid(url, 6));
      const open = new AbortController();
      const first = await fetch(`${url}/subscribe`, { signal: open.signal });
      seen.push(first.status, (await fetch(`${url}/subscribe`, { method: "HEAD" })).status);
      open.abort();
    });
    await withNodeCommand(["--port", "0", "--quiet", "--mine-queue", "20", "--client-mine-queue", "10"], "SIGTERM", async (url) => {
      seen.push(await invalid(url, 11), (await post(url, "/mine?blocks=10", "")).status);
    });
    const refused = (max: number) => ({ code: "invalid_blocks", message: `blocks must be from 1 to ${max} (this node's --client-mine-queue)` });
    expect(seen).toEqual([refused(5), 200, 429, refused(10), 200]);
  });

  it("a port in use is exit 2, one line", async () => {
    let busy = "";
    await withNodeCommand(["--fixture", "fixtures/corpus/create-quote.json", "--port", "0", "--quiet"], "SIGTERM", async (url) => {
      busy = new URL(url).port;
      expect(await cbqs("node", "--fixture", "fixtures/corpus/create-quote.json", "--port", busy, "--quiet")).toEqual(unusableInput(/cannot listen on 127\.0\.0\.1:\d+: EADDRINUSE: the port is in use \(--port 0 picks a free one\)/));
    });
    expect(busy).not.toBe("");
  });
});
