// JUnit XML, the test-report format CI servers read (Jenkins, GitLab, GitHub's test-report
// actions): the shape Ant's JUnit task writes, checked in the tests against test/junit.xsd.
// Mapping (docs/reference/formats/fixture.md "Reports"): one <testsuite> per Suite, one <testcase> per case
// (classname = the suite's, name = the case's id), a failed case's <failure> and an unusable
// one's <error> carry the first difference as `message` and the details and reproduce command as
// text; the suite's summary line is its <system-out>.
import { secondsText, tally, tallyAll, timestampText, type Suite, type TestCase } from "./model.js";
import { xmlAttribute, xmlText } from "./text.js";

const attributes = (pairs: ReadonlyArray<[string, string | number | undefined]>): string =>
  pairs
    .filter((p): p is [string, string | number] => p[1] !== undefined)
    .map(([k, v]) => ` ${k}="${xmlAttribute(String(v))}"`)
    .join("");

/** The text under a failure or error: the details, then the command that reproduces it. */
function body(c: TestCase): string {
  const lines = [...(c.details ?? []), ...(c.reproduce === undefined ? [] : [`reproduce: ${c.reproduce}`])];
  return xmlText(lines.join("\n"));
}

const OUTCOME = { failed: "failure", error: "error", skipped: "skipped" } as const;

function testcase(c: TestCase, classname: string): string {
  const open = `    <testcase${attributes([["classname", classname], ["name", c.id], ["time", secondsText(c.seconds)]])}`;
  if (c.status === "passed") return `${open}/>`;
  const element = OUTCOME[c.status];
  const outcome = `<${element}${attributes([["type", c.type], ["message", c.message]])}`;
  const text = body(c);
  return `${open}>\n      ${outcome}${text === "" ? "/>" : `>${text}</${element}>`}\n    </testcase>`;
}

function testsuite(s: Suite): string {
  const t = tally(s.cases);
  const head = `  <testsuite${attributes([
    ["name", s.name],
    ["tests", t.tests],
    ["failures", t.failed],
    ["errors", t.errors],
    ["skipped", t.skipped],
    ["time", secondsText(s.seconds)],
    ["timestamp", s.timestamp === undefined ? undefined : timestampText(s.timestamp)],
  ])}>`;
  const out = s.summary === undefined ? [] : [`    <system-out>${xmlText(s.summary)}</system-out>`];
  return [head, ...s.cases.map((c) => testcase(c, s.classname)), ...out, "  </testsuite>"].join("\n");
}

/** The JUnit XML document of `suites` (UTF-8 text, ending in a newline). */
export function junitXml(suites: readonly Suite[]): string {
  const t = tallyAll(suites);
  const seconds = suites.reduce((x, s) => x + s.seconds, 0);
  const root = `<testsuites${attributes([["tests", t.tests], ["failures", t.failed], ["errors", t.errors], ["time", secondsText(seconds)]])}>`;
  return ['<?xml version="1.0" encoding="UTF-8"?>', root, ...suites.map(testsuite), "</testsuites>", ""].join("\n");
}
