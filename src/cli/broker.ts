// `cbqs check broker <bundles…> (--node <url> | --fixture <file>)`: a broker's signed artifacts
// checked against the chain, rule by rule (docs/broker.md "The 30 rules", src/broker-kit/).
// Every bundle is read (and refused, exit 2, naming the line) before the chain is consulted.
import { readBundle, type Bundle } from "../broker-kit/bundle.js";
import { ChainSourceError, fixtureSource, nodeSource, type ChainSource } from "../broker-kit/chain-source.js";
import { bundleOk, humanLines, reportJson, suitesOf, VERIFY_BROKER_FORMAT, type VerifiedBundle } from "../broker-kit/report.js";
import { verifyBundle } from "../broker-kit/verify.js";
import { readFixture } from "../harness/documents.js";
import { Stopwatch } from "../harness/progress.js";
import { shellWord } from "../report/text.js";
import { checkReportFiles, EXIT_OK, EXIT_REJECT, exitCodes, jsonReplacer, option, reportOptions, UsageError, withReports } from "./common.js";
import type { CommandSpec } from "./define.js";

interface Options {
  node?: string;
  fixture?: string;
  json?: boolean;
  junit?: string;
  report?: string;
}

/** The chain the artifacts were served on: a node, or a fixture replayed here (exactly one is given: the rule below). */
async function sourceOf(opts: Options): Promise<ChainSource> {
  try {
    if (opts.fixture !== undefined) return await fixtureSource(readFixture(opts.fixture), opts.fixture);
    return await nodeSource(opts.node!);
  } catch (err) {
    if (err instanceof ChainSourceError) throw new UsageError(err.message);
    throw err;
  }
}

export const commands: Readonly<Record<string, CommandSpec>> = {
  broker: {
    description: "check a broker's signed artifacts (grants, sessions, requests, receipts, checkpoints, anchors, snapshot manifests) against the chain they were served on, rule by rule: the 30 broker-side rules of CIP-39 a verifier can check offline (docs/broker.md)",
    arguments: [["<bundles...>", "cbqs-broker-bundle/v1 files: a header line, then one artifact a line, JSON or hex (docs/broker.md \"Bundle format\"); - is the standard input"]],
    options: () => [
      option("--node <url>", "read the chain from this cbqs node: broker-state pinned to every served_at height, tied to its verified header"),
      option("--fixture <file>", "read the chain from this cbqs-fixture/v1, replayed here (every root and receipt checked)"),
      option("--json", `print one ${VERIFY_BROKER_FORMAT} document instead of lines`),
      ...reportOptions("a testcase per rule and bundle; a rule nothing exercised is skipped"),
    ],
    rules: [{ oneOf: ["--node", "--fixture"], message: "give the chain the artifacts were served on: --node <url> or --fixture <file>, one of them" }],
    exits: exitCodes(
      "every bundle holds every rule the verifier checks",
      "a rule is broken: each failure is printed with its bundle line, artifact type, rule (section) and evidence",
      "unusable input: an unreadable bundle or a line that does not decode (named), a fixture that does not replay, a node that cannot be reached or no longer holds a view, bad options",
    ),
    action: async (files: string[], opts: Options) => {
      const started = new Date();
      checkReportFiles(opts);
      process.exitCode = await renderVerified(await verifyBundles(files, opts), opts, started);
    },
  },
};

/** The verification as text or its JSON report, and the --junit/--report files; the exit code. */
async function renderVerified(verified: { source: string; bundles: VerifiedBundle[] }, opts: Options, started: Date): Promise<number> {
  if (opts.json === true) process.stdout.write(JSON.stringify(reportJson(verified.source, verified.bundles), jsonReplacer) + "\n");
  else process.stdout.write(verified.bundles.flatMap(humanLines).join("\n") + "\n");
  const verdict = verified.bundles.every((v) => bundleOk(v.report)) ? EXIT_OK : EXIT_REJECT;
  const chain = opts.fixture !== undefined ? `--fixture ${shellWord(opts.fixture)}` : `--node ${shellWord(opts.node!)}`;
  return withReports(opts, verdict, () => suitesOf(verified.bundles, (file) => `cbqs verify-broker ${shellWord(file)} ${chain}`, started), { title: "cbqs verify-broker", caseLabel: "rule" });
}

/** Every bundle read (a malformed one refused before the chain is consulted), then verified against the chain. */
async function verifyBundles(files: readonly string[], opts: Options): Promise<{ source: string; bundles: VerifiedBundle[] }> {
  const bundles: Array<{ file: string; bundle: Bundle }> = files.map((file) => ({ file, bundle: readBundle(file) }));
  const source = await sourceOf(opts);
  const verified: VerifiedBundle[] = [];
  for (const { file, bundle } of bundles) {
    const watch = new Stopwatch();
    const report = await verifyBundle(bundle, source);
    verified.push({ file, report, seconds: watch.seconds() });
  }
  return { source: source.name, bundles: verified };
}
