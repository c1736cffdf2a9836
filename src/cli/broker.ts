// `cbqs verify-broker <bundles…> (--node <url> | --fixture <file>)`: a broker's signed artifacts
// checked against the chain, rule by rule (docs/guides/verify-a-broker.md "The 30 rules", src/broker-kit/).
// Every bundle is read (and refused, exit 2, naming the line) before the chain is consulted.
import type { Command } from "commander";
import { readBundle, type Bundle } from "../broker-kit/bundle.js";
import { ChainSourceError, fixtureSource, nodeSource, type ChainSource } from "../broker-kit/chain-source.js";
import { bundleOk, humanLines, reportJson, suitesOf, VERIFY_BROKER_FORMAT, type VerifiedBundle } from "../broker-kit/report.js";
import { verifyBundle } from "../broker-kit/verify.js";
import { readFixture } from "../harness/documents.js";
import { Stopwatch } from "../harness/progress.js";
import { shellWord } from "../report/text.js";
import { checkReportFiles, EXIT_OK, EXIT_REJECT, exitCodes, jsonReplacer, reportOptions, UsageError, withReports, type Registrar } from "./common.js";

interface Options {
  node?: string;
  fixture?: string;
  json?: boolean;
  junit?: string;
  report?: string;
}

async function sourceOf(opts: Options): Promise<ChainSource> {
  if ((opts.node === undefined) === (opts.fixture === undefined)) {
    throw new UsageError("give the chain the artifacts were served on: --node <url> or --fixture <file>, one of them");
  }
  try {
    if (opts.fixture !== undefined) return await fixtureSource(readFixture(opts.fixture), opts.fixture);
    return await nodeSource(opts.node!);
  } catch (err) {
    if (err instanceof ChainSourceError) throw new UsageError(err.message);
    throw err;
  }
}

export const register: Registrar = (program: Command) => {
  const command = program
    .command("verify-broker")
    .description("check a broker's signed artifacts (grants, sessions, requests, receipts, checkpoints, anchors, snapshot manifests) against the chain they were served on, rule by rule: the 30 broker-side rules of CIP-39 a verifier can check offline (docs/broker.md)")
    .argument("<bundles...>", "cbqs-broker-bundle/v1 files: a header line, then one artifact a line, JSON or hex (docs/broker.md \"Bundle format\"); - is the standard input")
    .option("--node <url>", "read the chain from this cbqs node: broker-state pinned to every served_at height, tied to its verified header")
    .option("--fixture <file>", "read the chain from this cbqs-fixture/v1, replayed here (every root and receipt checked)")
    .option("--json", `print one ${VERIFY_BROKER_FORMAT} document instead of lines`);
  reportOptions(command, "a testcase per rule and bundle; a rule nothing exercised is skipped")
    .addHelpText(
      "after",
      exitCodes(
        "every bundle holds every rule the verifier checks",
        "a rule is broken: each failure is printed with its bundle line, artifact type, rule (section) and evidence",
        "unusable input: an unreadable bundle or a line that does not decode (named), a fixture that does not replay, a node that cannot be reached or no longer holds a view, bad options",
      ),
    )
    .action(async (files: string[], opts: Options) => {
      const started = new Date();
      checkReportFiles(opts);
      const bundles: Array<{ file: string; bundle: Bundle }> = files.map((file) => ({ file, bundle: readBundle(file) }));
      const source = await sourceOf(opts);
      const verified: VerifiedBundle[] = [];
      for (const { file, bundle } of bundles) {
        const watch = new Stopwatch();
        const report = await verifyBundle(bundle, source);
        verified.push({ file, report, seconds: watch.seconds() });
      }
      if (opts.json === true) process.stdout.write(JSON.stringify(reportJson(source.name, verified), jsonReplacer) + "\n");
      else process.stdout.write(verified.flatMap(humanLines).join("\n") + "\n");
      const verdict = verified.every((v) => bundleOk(v.report)) ? EXIT_OK : EXIT_REJECT;
      const chain = opts.fixture !== undefined ? `--fixture ${shellWord(opts.fixture)}` : `--node ${shellWord(opts.node!)}`;
      process.exitCode = await withReports(opts, verdict, () => suitesOf(verified, (file) => `cbqs verify-broker ${shellWord(file)} ${chain}`, started), { title: "cbqs verify-broker", caseLabel: "rule" });
    });
};
