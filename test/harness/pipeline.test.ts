// The pipelined replay (merkleization on a worker thread, src/harness/replay.ts
// `replayPipelined`) against the plain replay, its reference: the same outcome, the same first
// mismatch (message and state diff included) and the same per-block results, on the corpus and
// on tampered fixtures — including blocks executed again because a signature answered valid
// ahead of its check was not. A worker thread runs compiled JavaScript, so these tests run dist/.
import { beforeAll, describe, expect, it } from "vitest";
import { requireFreshDist } from "../fuzz/dist.js";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cli, corpusFiles, flipHex, readDoc, type Doc } from "./helpers.js";
import { fillScenario } from "../../src/harness/fill.js";
import { fixtureJsonText } from "../../src/harness/fixture.js";
import { parseScenario } from "../../src/scenario/parse.js";
import { headerHash } from "../../src/chain/block.js";
import { ed25519VerifyStrict } from "../../src/crypto/ed25519.js";

type ReplayModule = typeof import("../../src/harness/replay.js");
type FixtureModule = typeof import("../../src/harness/fixture.js");
let replay: ReplayModule;
let fixtures: FixtureModule;

beforeAll(async () => {
  requireFreshDist();
  replay = (await import(new URL("../../dist/src/harness/replay.js", import.meta.url).href)) as ReplayModule;
  fixtures = (await import(new URL("../../dist/src/harness/fixture.js", import.meta.url).href)) as FixtureModule;
});

let reexecuted = 0;

/** Runs `doc` both ways; everything each reported (outcome, every onBlock call, or the error thrown). */
function both(doc: Doc, toHeight?: bigint, shared?: InstanceType<ReplayModule["ReplayPipeline"]>) {
  const run = (pipeline: boolean | InstanceType<ReplayModule["ReplayPipeline"]>) => {
    const blocks: unknown[] = [];
    try {
      const outcome = replay.replayFixture(fixtures.loadFixture(JSON.parse(JSON.stringify(doc))), {
        pipeline,
        onReexecute: () => reexecuted++,
        ...(toHeight === undefined ? {} : { toHeight }),
        onBlock: (p, x) => blocks.push({ p, stateRoot: x.stateRoot, blockHash: x.blockHash, results: x.results, rent: x.effectiveRentHeight }),
      });
      return { outcome, blocks };
    } catch (err) {
      return { thrown: `${(err as Error).name}: ${(err as Error).message}`, blocks };
    }
  };
  return { plain: run(false), pipelined: run(shared ?? true) };
}

/** The encrypted-key-stream scenario filled (invalid quote signatures in blocks 2 and 3; a post_state at the last block only). */
const encryptedKeyStream = (): Doc => JSON.parse(fixtureJsonText(fillScenario(parseScenario(JSON.parse(readFileSync("fixtures/scenarios/encrypted-key-stream.json", "utf8"))), "final"))) as Doc;

/** The encrypted-key-stream fixture (invalid quote signatures in blocks 2 and 3) with empty blocks after each: a refusal is found a full window late. */
function lateRefusals(): Doc {
  const scenario = JSON.parse(readFileSync("fixtures/scenarios/encrypted-key-stream.json", "utf8")) as { blocks: { height: string; txs: unknown[] }[] };
  const empty = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, k) => ({ height: String(from + k), txs: [] }));
  const last = Number(scenario.blocks.at(-1)!.height);
  scenario.blocks = [...scenario.blocks.slice(0, 4), ...empty(5, 19), ...scenario.blocks.slice(4), ...empty(last + 1, last + 40)];
  return JSON.parse(fixtureJsonText(fillScenario(parseScenario(scenario), "final"))) as Doc;
}

describe("pipelined replay = plain replay", () => {
  it("every corpus fixture: same outcome and the same roots, receipts and block hash for every block", () => {
    reexecuted = 0;
    for (const file of corpusFiles()) {
      const { plain, pipelined } = both(readDoc(file));
      expect(plain.outcome?.mismatch, file).toBeNull();
      expect(pipelined, file).toEqual(plain);
    }
    // The corpus has invalid quote signatures: blocks whose speculative "valid" was wrong were executed again.
    expect(reexecuted).toBeGreaterThan(0);
  });

  it("an invalid signature found 16 blocks late: the blocks executed after it are undone, and every block matches the plain replay's", () => {
    // encrypted-key-stream has invalid quote signatures in blocks 2 and 3 (heights 3 and 4); with
    // empty blocks after each, the pipeline has executed a full window past them when the worker refuses.
    const doc = lateRefusals();
    const indices: number[] = [];
    const outcome = replay.replayFixture(fixtures.loadFixture(JSON.parse(JSON.stringify(doc))), { pipeline: true, onReexecute: (i) => indices.push(i) });
    expect(outcome).toEqual({ blocks: doc.blocks.length, txs: 27, mismatch: null });
    expect(indices).toEqual([2, 3]);
    const { plain, pipelined } = both(doc);
    expect(plain.outcome?.mismatch).toBeNull();
    expect(pipelined).toEqual(plain);
  });

  it("one ReplayPipeline for many replays, some abandoned half way (a mismatch, a refusal in flight): each the plain replay's", () => {
    const shared = new replay.ReplayPipeline();
    try {
      const late = lateRefusals();
      const tampered = JSON.parse(JSON.stringify(late)) as Doc;
      // Block 3's own state root: the replay stops there, with block 3's refusal and later blocks in flight.
      tampered.blocks[3]!.state_root = flipHex(tampered.blocks[3]!.state_root as string);
      // Block 1's state root: the replay stops there with blocks 2 and 3 (invalid checks) in flight;
      // the next replay's genesis must not inherit their checks (it once was refused for them).
      // (Filled with a post_state at the last block only: a block with one is checked before the next executes.)
      const early = encryptedKeyStream();
      const earlyStop = JSON.parse(JSON.stringify(early)) as Doc;
      earlyStop.blocks[1]!.state_root = flipHex(earlyStop.blocks[1]!.state_root as string);
      const docs = [late, tampered, earlyStop, early, earlyStop, ...corpusFiles().map(readDoc), tampered, late];
      for (const [i, doc] of docs.entries()) {
        const { plain, pipelined } = both(doc, undefined, shared);
        expect(pipelined, `replay ${i}`).toEqual(plain);
      }
    } finally {
      shared.close();
    }
  });

  it("--to-height: the same prefix", () => {
    const doc = readDoc("fixtures/corpus/rent-settle-suspend-expire.json");
    const { plain, pipelined } = both(doc, BigInt(doc.blocks[2]!.height));
    expect(plain.outcome?.blocks).toBe(3);
    expect(pipelined).toEqual(plain);
  });

  describe("a tampered fixture: the same first mismatch, reported at the same block", () => {
    const base = readDoc("fixtures/corpus/rent-settle-suspend-expire.json");
    const last = base.blocks.length - 1;
    const fields = ["state_root", "tx_root", "receipt_root", "logs_root", "block_hash"];
    const cases: Array<[string, (d: Doc) => void]> = [
      ...[0, 1, last].flatMap((bi) => fields.map((f): [string, (d: Doc) => void] => [`block ${bi} ${f}`, (d) => void (d.blocks[bi]![f] = flipHex(d.blocks[bi]![f] as string))])),
      ["a receipt's cycles", (d) => void (d.blocks[1]!.receipts[0]!.cycles = "1")],
      ["effective_rent_height", (d) => void (d.blocks[2]!.effective_rent_height = "999")],
      [
        "two blocks: the earlier wins",
        (d) => {
          d.blocks[3]!.tx_root = flipHex(d.blocks[3]!.tx_root as string);
          d.blocks[1]!.state_root = flipHex(d.blocks[1]!.state_root as string);
        },
      ],
      [
        "the state diff of the last block (post_state)",
        (d) => {
          const b = d.blocks[last]! as Doc["blocks"][number] & { post_state: { entries: Array<{ key: string; value: string }> } };
          b.state_root = flipHex(b.state_root as string);
          const account = b.post_state.entries.findIndex((e) => e.key.startsWith("0x01"));
          b.post_state.entries[account]!.value = flipHex(b.post_state.entries[account]!.value);
        },
      ],
      [
        "post_state alone",
        (d) => {
          const b = d.blocks[last]! as Doc["blocks"][number] & { post_state: { entries: Array<{ key: string; value: string }> } };
          b.post_state.entries.pop();
        },
      ],
      // Without post_state dumps the pipeline runs a window ahead: the last block is checked only by the final drain.
      ["no post_state: the last block's tx_root", (d) => void (dropPostStates(d), (d.blocks[last]!.tx_root = flipHex(d.blocks[last]!.tx_root as string)))],
      [
        "no post_state: block 0 mismatching, block 1 undecodable (the mismatch is in flight when the error comes)",
        (d) => {
          dropPostStates(d);
          d.blocks[0]!.tx_root = flipHex(d.blocks[0]!.tx_root as string);
          d.blocks[1]!.transactions[0] = "0x00";
        },
      ],
      ["the genesis state_root", (d) => void (d.genesis["state_root"] = flipHex(d.genesis["state_root"]!))],
      ["an undecodable transaction", (d) => void (d.blocks[2]!.transactions[0] = "0x00")],
      // No later block's mismatch (and its plain re-run from genesis) can bring this error out again.
      ["an undecodable transaction in the last block", (d) => void (d.blocks[last]!.transactions[0] = "0x00")],
      [
        "an undecodable transaction after a mismatching block",
        (d) => {
          d.blocks[2]!.transactions[0] = "0x00";
          d.blocks[1]!.logs_root = flipHex(d.blocks[1]!.logs_root as string);
        },
      ],
    ];
    for (const [what, tamper] of cases) {
      it(what, () => {
        const doc = JSON.parse(JSON.stringify(base)) as Doc;
        tamper(doc);
        const { plain, pipelined } = both(doc);
        expect(plain.thrown ?? plain.outcome?.mismatch).toBeTruthy();
        expect(pipelined).toEqual(plain);
      });
    }
  });
});

const dropPostStates = (d: Doc): void => {
  for (const b of d.blocks) delete b["post_state"];
};

type Pipeline = InstanceType<ReplayModule["ReplayPipeline"]>;

/** A pipeline whose worker's state root for the `batch`-th state batch (0: genesis) is rewritten by `rewrite` once it is in. */
function rootRewritten(batch: number, rewrite: (root: Uint8Array) => void): Pipeline {
  const pipeline = new replay.ReplayPipeline();
  const c = pipeline.commitment;
  const commit = c.commitBatch.bind(c);
  const settle = c.settle.bind(c);
  let n = 0;
  let target: { job: number; root: Uint8Array } | null = null;
  c.commitBatch = (changes) => {
    const job = c.jobs;
    const root = commit(changes);
    if (n++ === batch) target = { job, root };
    return root;
  };
  c.settle = (count) => {
    settle(count);
    if (target !== null && count > target.job) {
      rewrite(target.root);
      target = null;
    }
  };
  return pipeline;
}

describe("the pipeline vouches for nothing the plain replay does not find (src/harness/replay.ts referenceAt)", () => {
  const base = readDoc("fixtures/corpus/rent-settle-suspend-expire.json");

  it("a block the pipeline alone finds mismatching (its worker's root wrong) is not reported: the replay fails, naming both", () => {
    const pipeline = rootRewritten(2, (root) => void (root[0]! ^= 1)); // block 1's
    try {
      expect(() => replay.replayFixture(fixtures.loadFixture(JSON.parse(JSON.stringify(base))), { pipeline })).toThrow(
        new Error(`pipelined replay: block ${base.blocks[1]!.height} did not match, but the plain replay found no mismatch`),
      );
    } finally {
      pipeline.close();
    }
  });

  it("a mismatch the pipeline missed (its root made to equal a tampered expectation) is not hidden behind a later one: the replay fails, naming where the plain replay stops", () => {
    // Block 1 expects a flipped state root, and a block hash chained on it; the pipeline's worker
    // answers exactly that root, so only block 2 (chained on the original hash) mismatches there.
    const doc = JSON.parse(JSON.stringify(base)) as Doc;
    const b1 = fixtures.loadFixture(JSON.parse(JSON.stringify(base))).blocks[1]!;
    const flipped = Uint8Array.from(b1.state_root);
    flipped[0]! ^= 1;
    const parent = fixtures.loadFixture(JSON.parse(JSON.stringify(base))).blocks[0]!.block_hash;
    const instance = fixtures.loadFixture(JSON.parse(JSON.stringify(base))).genesis.chain_instance_id;
    doc.blocks[1]!.state_root = `0x${Buffer.from(flipped).toString("hex")}`;
    doc.blocks[1]!.block_hash = `0x${Buffer.from(headerHash(instance, b1.height, b1.timestamp, parent, flipped, b1)).toString("hex")}`;
    const pipeline = rootRewritten(2, (root) => root.set(flipped));
    try {
      expect(() => replay.replayFixture(fixtures.loadFixture(doc), { pipeline })).toThrow(
        new Error(`pipelined replay: block ${doc.blocks[2]!.height} did not match, but the plain replay found its first at block ${doc.blocks[1]!.height} ($.blocks[1].state_root)`),
      );
    } finally {
      pipeline.close();
    }
  });

  it("a block that fails to execute because a signature answered valid ahead of its check was not: executed again with the real check, once", () => {
    // encrypted-key-stream: invalid quote signatures in blocks 2 and 3. The first wrong "valid" here
    // also makes the execution fail (as a wrong answer might, further on); the second is refused by the worker as usual.
    const doc = encryptedKeyStream();
    const pipeline = new replay.ReplayPipeline();
    const speculative = pipeline.signatures.verify;
    let failed = 0;
    (pipeline.signatures as { verify: typeof speculative }).verify = (key, message, signature) => {
      const answer = speculative(key, message, signature);
      if (failed === 0 && !ed25519VerifyStrict(key, message, signature)) {
        failed++;
        throw new Error("a failure the wrong answer led to");
      }
      return answer;
    };
    const indices: number[] = [];
    try {
      const outcome = replay.replayFixture(fixtures.loadFixture(JSON.parse(JSON.stringify(doc))), { pipeline, onReexecute: (i) => indices.push(i) });
      expect(failed).toBe(1);
      expect(indices).toEqual([2, 3]);
      expect(outcome).toEqual(replay.replayFixture(fixtures.loadFixture(JSON.parse(JSON.stringify(doc)))));
      expect(outcome.mismatch).toBeNull();
    } finally {
      pipeline.close();
    }
  });
});

/** The outcome (or the error thrown) and the heights of the blocks reported checked, in order; `indices` gets the blocks executed again. */
const outcomeOf = (doc: Doc, pipeline: Pipeline | false, indices: number[] = []) => {
  const checked: bigint[] = [];
  try {
    const outcome = replay.replayFixture(fixtures.loadFixture(JSON.parse(JSON.stringify(doc))), { pipeline, onReexecute: (i) => indices.push(i), onBlock: (p) => checked.push(p.height) });
    return { outcome, checked };
  } catch (err) {
    return { thrown: `${(err as Error).name}: ${(err as Error).message}`, checked };
  }
};

describe("a refusal noticed while older blocks wait unchecked (src/harness/replay.ts rewind)", () => {
  // encrypted-key-stream: block 2 carries an invalid quote signature the pipeline answers valid.
  // The pipeline is told no root is ever in early (`ready` false), so blocks wait for the window;
  // block 4 cannot be executed, and settling everything then brings out block 2's refusal while
  // blocks 0 and 1 are still unchecked: the rewind checks them first.
  const lateRoots = (): Pipeline => {
    const pipeline = new replay.ReplayPipeline();
    pipeline.commitment.ready = () => false;
    return pipeline;
  };

  it("the older blocks match: checked, then the refused block executed again; the unusable block is reported as the plain replay reports it", () => {
    const doc = encryptedKeyStream();
    doc.blocks[4]!.transactions[0] = "0x00";
    const pipeline = lateRoots();
    const indices: number[] = [];
    try {
      const pipelined = outcomeOf(doc, pipeline, indices);
      expect(pipelined).toEqual(outcomeOf(doc, false));
      expect(pipelined.thrown).toBeDefined();
      expect(pipelined.checked).toHaveLength(4);
      // Block 3's invalid signature is refused the same way, with block 2 then the older one waiting.
      expect(indices).toEqual([2, 3]);
    } finally {
      pipeline.close();
    }
  });

  it("an older block mismatches: that mismatch is the outcome, as the plain replay's", () => {
    const doc = encryptedKeyStream();
    doc.blocks[4]!.transactions[0] = "0x00";
    doc.blocks[1]!.tx_root = flipHex(doc.blocks[1]!.tx_root as string);
    const pipeline = lateRoots();
    const indices: number[] = [];
    try {
      const pipelined = outcomeOf(doc, pipeline, indices);
      expect(pipelined).toEqual(outcomeOf(doc, false));
      expect(pipelined.outcome).toMatchObject({ blocks: 2, mismatch: { path: "$.blocks[1].tx_root" } });
      expect(indices).toEqual([]);
    } finally {
      pipeline.close();
    }
  });
});

describe("a refusal noticed while its own block is executed (src/harness/replay.ts rewind)", () => {
  it("the refused block is the one under way: nothing older waits, that block is executed again with the real check, every block as the plain replay's", () => {
    // A worker fast enough that every refusal comes out in the block that caused it: each block's
    // roots job is posted only after everything before it is settled, the block's own state batch
    // included. encrypted-key-stream's invalid quote signatures (blocks 2 and 3) are then refused
    // while those blocks are executed, with no block queued unchecked.
    const doc = encryptedKeyStream();
    const pipeline = new replay.ReplayPipeline();
    const { commitment } = pipeline;
    const deferRoots = commitment.deferRoots.bind(commitment);
    commitment.deferRoots = (job) => {
      commitment.settle(commitment.jobs);
      return deferRoots(job);
    };
    const indices: number[] = [];
    try {
      const pipelined = outcomeOf(doc, pipeline, indices);
      expect(indices).toEqual([2, 3]);
      expect(pipelined).toEqual(outcomeOf(doc, false));
      expect(pipelined.checked).toHaveLength(doc.blocks.length);
      expect(pipelined.outcome?.mismatch).toBeNull();
    } finally {
      pipeline.close();
    }
  });
});

describe("pipelined replay of a fixture with no blocks", () => {
  it("is genesis alone, as the plain replay's", () => {
    const doc = readDoc("fixtures/corpus/provider-lifecycle.json");
    doc.blocks = [];
    const { plain, pipelined } = both(doc);
    expect(plain.outcome).toEqual({ blocks: 0, txs: 0, mismatch: null });
    expect(pipelined).toEqual(plain);
  });
});

describe("cbqs replay --pipeline", () => {
  it("the corpus through one worker (compiled CLI): the same --json report as the plain replay", () => {
    const run = (...extra: string[]) => spawnSync(process.execPath, ["dist/src/cli.js", "replay", "--json", ...extra, "fixtures/corpus"], { encoding: "utf8" });
    const [plain, pipelined] = [run(), run("--pipeline")];
    expect(plain.status).toBe(0);
    expect(pipelined.status).toBe(0);
    expect(pipelined.stdout).toBe(plain.stdout);
    expect(JSON.parse(plain.stdout).fixtures).toHaveLength(corpusFiles().length);
  });

  it("is refused with --trace or --db (exit 2): both need the plain replay's store", async () => {
    for (const extra of [["--trace", "-"], ["--db", "/nonexistent-cbqs-db"]]) {
      const r = await cli(["replay", "--pipeline", ...extra, "fixtures/corpus/provider-lifecycle.json"]);
      expect(r.exitCode).toBe(2);
      expect(r.thrown).toMatch(/--pipeline cannot be combined with --trace or --db/);
    }
  });
});
