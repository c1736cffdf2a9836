// `cbqs state dump <file> [--height N] [filters]` and `cbqs state diff <a> <b>` (docs/reference/formats/state-dump.md).
// A dump's state comes from a dump or alloc file, from replaying a fixture (or a scenario, filled
// to one first) from genesis up to a height, or from a persistent store (--db: its head).
import { echo } from "../bounds.js";
import { fromHex, HexError } from "../bytes.js";
import { GenesisError } from "../engine/errors.js";
import { allDivergences, dumpHeaderNote, pathText, show } from "../harness/diff.js";
import { FillError, fillSteps } from "../harness/fill.js";
import { inFileSteps, readDocumentSteps, type Document } from "../harness/documents.js";
import type { Fixture } from "../harness/fixture.js";
import { describeKey, matchesFilter, registryIdentity, registryRecords, type DumpFilter } from "../harness/records.js";
import { newStore, replayFixtureSteps, ReplayInputError } from "../harness/replay.js";
import { InputError } from "../json/read.js";
import { jsonDocumentSteps, Output, Streamed, writingStoppable } from "../json/write.js";
import { ScenarioError } from "../scenario/json.js";
import type { Scenario } from "../scenario/parse.js";
import { resolveStreamKey } from "../scenario/refs.js";
import { diffDumps, diffIsEmpty, dumpEntryViews, dumpHeader, type DumpEntry } from "../../state/kv/dump.js";
import type { StateStore } from "../../state/kv/interface.js";
import { EXIT_OK, EXIT_REJECT, exitCodes, jsonReplacer, oneLine, option, outputOption, repeatableOption, report, UsageError } from "./common.js";
import type { CommandSpec } from "./define.js";
import { mismatchLines } from "./replay-report.js";
import { openExistingStore, usingStore } from "./store.js";
import { keeping, stoppable, watchSignals, type Steps } from "../steps.js";
import { writesToStdout } from "../output-file.js";

/** A value as people read it: a registry record's fields, an account's nonce and balance, else the decoded view. */
function view(e: DumpEntry): unknown {
  const v = e.decoded?.value as { kind?: string; record?: Record<string, unknown>; nonce?: string; balance?: string } | undefined;
  if (v === undefined) return e.value;
  if (v.kind === "StorageSlot" && v.record !== undefined) return Object.values(v.record)[0];
  if (v.kind === "Account") return { nonce: v.nonce, balance: v.balance };
  return v;
}

/** `--height`: a decimal u64. */
function parseHeight(text: string): bigint {
  if (!/^[0-9]+$/.test(text)) throw new UsageError(`--height must be a decimal integer (got ${echo(text)})`);
  const height = BigInt(text);
  if (height > 0xffff_ffff_ffff_ffffn) throw new UsageError(`--height exceeds u64 (got ${echo(text)})`);
  return height;
}

function addressOption(flag: string, text: string): Uint8Array {
  try {
    return fromHex(text, 20, flag);
  } catch (err) {
    if (err instanceof HexError) throw new UsageError(err.message);
    throw err;
  }
}

interface FilterOptions {
  stream?: string[];
  provider?: string[];
  account?: string[];
  owner?: string[];
}

/**
 * The filters of `state dump`. A stream is its 32-byte id, or a reference `owner:0x…/nonce:N`
 * (or `key_stream_of:<reference>`) resolved with the chain identity in the state's registry singleton.
 */
function dumpFilter(options: FilterOptions, entries: Iterable<readonly [Uint8Array, Uint8Array]>): DumpFilter | undefined {
  const o = { stream: options.stream ?? [], provider: options.provider ?? [], account: options.account ?? [], owner: options.owner ?? [] };
  if (o.stream.length + o.provider.length + o.account.length + o.owner.length === 0) return undefined;
  const streams = o.stream.map((text) => {
    if (/^0x[0-9a-fA-F]{64}$/.test(text)) return fromHex(text, 32);
    const id = registryIdentity(entries);
    if (id === undefined) throw new UsageError(`--stream ${echo(text)}: a reference needs the registry singleton in the state (give the 0x stream id)`);
    try {
      return resolveStreamKey(text, "--stream", id);
    } catch (err) {
      if (err instanceof ScenarioError) throw new UsageError(`--stream ${echo(text)}: ${err.reason}`);
      throw err;
    }
  });
  return {
    streams,
    providers: o.provider.map((a) => addressOption("--provider", a)),
    accounts: o.account.map((a) => addressOption("--account", a)),
    owners: o.owner.map((a) => addressOption("--owner", a)),
  };
}

function* filtered(entries: Iterable<readonly [Uint8Array, Uint8Array]>, filter: DumpFilter | undefined): Generator<readonly [Uint8Array, Uint8Array]> {
  for (const e of entries) if (filter === undefined || matchesFilter(e[0], e[1], filter)) yield e;
}

/** `state diff`'s lines: each changed field of a changed key (`provider 0x…: live_assigned_streams "0" → "1"`). */
export function stateDiffText(a: Iterable<readonly [Uint8Array, Uint8Array]>, b: Iterable<readonly [Uint8Array, Uint8Array]>): { lines: string[]; json: Record<string, unknown>; equal: boolean } {
  const diff = diffDumps(a, b, registryRecords);
  const name = (key: string) => describeKey(fromHex(key, 54));
  const changed = diff.changed.map((c) => ({ key: c.key, name: name(c.key), fields: allDivergences(view(c.before), view(c.after)) }));
  const lines = [
    ...diff.added.map((e) => `+ ${name(e.key)}: ${show(view(e))}`),
    ...diff.removed.map((e) => `- ${name(e.key)}: ${show(view(e))}`),
    ...changed.flatMap((c) =>
      c.fields.length === 0
        ? [`~ ${c.name}: ${show(view(diff.changed.find((x) => x.key === c.key)!.before))} → (bytes differ)`]
        : c.fields.map((f) => `~ ${c.name}: ${f.path.length === 0 ? "value" : pathText(f.path)} ${show(f.ours)} → ${show(f.theirs)}`),
    ),
    diffIsEmpty(diff) ? "equal" : `${diff.added.length} added, ${diff.removed.length} removed, ${diff.changed.length} changed`,
  ];
  const json = {
    added: diff.added,
    removed: diff.removed,
    changed: changed.map((c) => ({ key: c.key, name: c.name, fields: c.fields.map((f) => ({ path: pathText(f.path), before: f.ours ?? null, after: f.theirs ?? null })) })),
  };
  return { lines, json, equal: diffIsEmpty(diff) };
}

/**
 * The docs/reference/formats/state-dump.md field order (height and root above the long entry list), written entry by
 * entry: a 1.25 M-entry dump is never one string.
 */
async function writeDump(source: DumpSource, opts: FilterOptions & { output: string }): Promise<void> {
  const header = dumpHeader({ ...(source.height === undefined ? {} : { height: source.height }), ...(source.stateRoot === undefined ? {} : { stateRoot: source.stateRoot }) });
  const filter = dumpFilter(opts, source.entries);
  await keeping(
    () => (writesToStdout(opts.output) ? "stdout has the entries so far (an incomplete document)" : `${opts.output} is not written`),
    () =>
      writingStoppable(new Output(opts.output), (out) =>
        jsonDocumentSteps(out, { ...header, entries: new Streamed(dumpEntryViews(filtered(source.entries, filter), registryRecords)) }, jsonReplacer),
      ),
  );
}

/** A scenario as a fixture (the same pipeline as `cbqs fill`), so both replay the same way. */
function* scenarioFixture(file: string, scenario: Scenario): Steps<Fixture> {
  try {
    return yield* inFileSteps(file, fillSteps(scenario, "none"));
  } catch (err) {
    if (err instanceof GenesisError) throw new InputError(file, scenario.genesisPath, `invalid genesis: ${err.message}`);
    throw err; // FillError: handled by the caller (exit 1)
  }
}

/** What `state dump` writes: the dump's header and its entries, produced one at a time. */
interface DumpSource {
  height?: bigint;
  stateRoot?: Uint8Array;
  entries: Iterable<readonly [Uint8Array, Uint8Array]>;
}

/**
 * Replays `fixture` from genesis through its last block at or below `height` (every block when
 * undefined) on a fresh store and dumps that store. Heights are sparse: the dump's `height` is
 * the block actually reached (0 = genesis). A mismatch on the way is returned instead.
 */
function* dumpAtHeight(file: string, fixture: Fixture, height: bigint | undefined): Steps<DumpSource | { mismatch: string[] }> {
  const store: StateStore = newStore();
  let outcome: { blocks: number; mismatch: Parameters<typeof mismatchLines>[1] | null };
  try {
    outcome = yield* replayFixtureSteps(fixture, { store, ...(height === undefined ? {} : { toHeight: height }) });
  } catch (err) {
    if (err instanceof ReplayInputError) throw new InputError(file, err.path, err.message);
    throw err;
  }
  if (outcome.mismatch !== null) return { mismatch: mismatchLines(file, outcome.mismatch) };
  const reached = outcome.blocks === 0 ? 0n : fixture.blocks[outcome.blocks - 1]!.height;
  // Re-iterable: a stream reference in a filter reads the registry singleton first.
  return { height: reached, stateRoot: store.root(), entries: { [Symbol.iterator]: () => store.entries()[Symbol.iterator]() } };
}

function* stateDumpOf(file: string, height: bigint | undefined): Steps<DumpSource | { mismatch: string[] }> {
  const doc = yield* readDocumentSteps(file, ["dump", "fixture", "scenario"]);
  switch (doc.kind) {
    case "dump":
      if (height !== undefined) throw new UsageError(`${file}: --height needs a fixture or scenario; a state dump has one height`);
      return { entries: doc.entries };
    case "fixture":
      return yield* dumpAtHeight(file, doc.fixture, height);
    case "scenario":
      try {
        return yield* dumpAtHeight(file, yield* scenarioFixture(file, doc.scenario), height);
      } catch (err) {
        if (err instanceof FillError) return { mismatch: [oneLine(`MISMATCH ${file}: ${err.message}`)] };
        throw err;
      }
    default:
      throw new Error("unreachable");
  }
}

/** The committed state at a store's head; the store stays open until the dump is written. */
async function withStoreDump(dir: string, write: (source: DumpSource) => Promise<void>): Promise<void> {
  const db = openExistingStore(dir);
  try {
    const head = db.head();
    if (head === undefined) throw new UsageError(`--db ${dir}: the store holds no chain yet`);
    await usingStore(dir, () => write({ height: head.height, stateRoot: db.state.root(), entries: { [Symbol.iterator]: () => db.state.entries()[Symbol.iterator]() } }));
  } finally {
    db.close();
  }
}

/** A dump or alloc file with its own `height` and `state_root` members. */
async function readDumpDocument(file: string): Promise<Extract<Document, { kind: "dump" }>> {
  const doc = await stoppable(readDocumentSteps(file, ["dump"]));
  if (doc.kind !== "dump") throw new Error("unreachable");
  return doc;
}

export const commands: Readonly<Record<string, CommandSpec>> = {
  dump: {
    description:
      "print the canonical dump (sorted keys, lowercase hex, decoded views) of a dump/alloc file, or of the state " +
      "a cbqs-fixture/v1 (.json or .json.gz) or cbqs-scenario/v1 reaches by replay from genesis",
    arguments: [["[file]"]],
    options: () => [
      option(
        "--height <n>",
        "fixture/scenario: the state after the last block at or below this height (heights are sparse; " +
          "the dump's \"height\" names the block reached, 0 = genesis); default: the last block",
      ),
      repeatableOption("--stream <id>", "only this stream's record: 0x id, owner:0x<addr>/nonce:<n> or key_stream_of:<ref> (repeatable)"),
      repeatableOption("--provider <addr>", "only this provider's record and account (repeatable)"),
      repeatableOption("--account <addr>", "only the keys stored under this address (repeatable)"),
      repeatableOption("--owner <addr>", "only this owner's streams, stream count and account (repeatable)"),
      option("--db <dir>", "dump the committed state of this store (its head) instead of a file"),
      outputOption("-o, --output <file>", "output file; - is stdout", "-"),
    ],
    rules: [
      { oneOf: ["[file]", "--db"], message: "give either a file or --db <dir>" },
      { conflicts: ["--height", "--db"], message: "--height needs a fixture or scenario; --db dumps the store's head" },
    ],
    exits: exitCodes(
      "the dump is written",
      "a fixture or scenario does not replay to its own expected values before the height",
      "unreadable or malformed input, bad --height or filter, unwritable output, a store in use or empty",
      "no file is written (on stdout, the entries so far); a store is closed unchanged",
    ),
    action: async (file: string | undefined, opts: FilterOptions & { height?: string; output: string; db?: string }) => {
      watchSignals();
      const height = opts.height === undefined ? undefined : parseHeight(opts.height);
      if (opts.db !== undefined) {
        await withStoreDump(opts.db, (source) => writeDump(source, opts));
        process.exitCode = EXIT_OK;
        return;
      }
      const result = await stoppable(stateDumpOf(file!, height));
      if ("mismatch" in result) {
        // Like `cbqs replay`: the first mismatch, its differing keys indented below; nothing dumped.
        process.stderr.write(result.mismatch.join("\n") + "\n");
        process.exitCode = EXIT_REJECT;
        return;
      }
      await writeDump(result, opts);
      process.exitCode = EXIT_OK;
    },
  },

  diff: {
    description: "every key added, removed and changed from dump <a> to dump <b>, changed records field by field",
    arguments: [["<a>"], ["<b>"]],
    options: () => [option("--json", "print the diff as JSON")],
    exits: exitCodes("the two states are equal", "they differ", "unreadable or malformed dump", "while reading, nothing printed"),
    action: async (a: string, b: string, opts: { json?: boolean }) => {
      watchSignals();
      const [da, db] = [await readDumpDocument(a), await readDumpDocument(b)];
      const { lines, json, equal } = stateDiffText(da.entries, db.entries);
      // The verdict is the entries' alone; differing height/state_root members get a note after it.
      const note = dumpHeaderNote(da, db);
      report(opts.json === true, [...lines, ...(note === null ? [] : [`note: ${note}`])].map(oneLine).join("\n"), note === null ? json : { ...json, note });
      process.exitCode = equal ? EXIT_OK : EXIT_REJECT;
    },
  },
};
