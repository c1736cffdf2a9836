// The report tests need two programs from outside npm: xmllint (Debian's libxml2-utils) to check
// JUnit files against test/junit.xsd, and a headless Chromium to render the HTML page. `.ci/run`
// installs both when missing and sets CI, so in CI a missing tool FAILS its test; on a developer's
// machine without them the test is skipped, saying which tool is missing and how to install it
// (D-0098 "Report tests need xmllint and Chromium: skipped on a bare machine, failed in CI").
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import type { TestContext } from "vitest";

const APT = "apt-get update && apt-get install -y --no-install-recommends";

/** Whether this is a CI run (`.ci/run` sets CI=1; CI services set CI=true). */
export const inCi = (): boolean => !["", "0", "false"].includes((process.env["CI"] ?? "").toLowerCase());

/** Null when xmllint runs, else what is missing and how to install it. */
export function xmllintMissing(): string | null {
  const r = spawnSync("xmllint", ["--version"], { encoding: "utf8" });
  return r.status === 0 ? null : `xmllint is not installed (${APT} libxml2-utils)`;
}

/** Where a Chromium is looked for: $CBQS_CHROMIUM alone when it is set, else Debian's. */
function chromiumCandidates(): string[] {
  const given = process.env["CBQS_CHROMIUM"];
  return given !== undefined && given !== "" ? [given] : ["/usr/bin/chromium", "/usr/bin/chromium-browser"];
}

/** The Chromium to drive; null when there is none. */
export function chromiumPath(): string | null {
  return chromiumCandidates().find((p) => existsSync(p)) ?? null;
}

export function chromiumMissing(): string | null {
  return chromiumPath() === null ? `no Chromium at ${chromiumCandidates().join(" or ")} (${APT} chromium; or set CBQS_CHROMIUM to a Chromium or Chrome binary)` : null;
}

/** Stops the test when `missing` names a missing tool: a failure in CI, a skip that says why elsewhere. */
export function requireTool(ctx: TestContext, missing: string | null): void {
  if (missing === null) return;
  if (inCi()) throw new Error(`${missing}: CI must have it (.ci/run installs it)`);
  console.warn(`skipped: ${missing}`);
  ctx.skip(missing);
}

/** `xmllint --noout --schema test/junit.xsd <file>`: null when the file is valid, else xmllint's complaint. */
export function junitSchemaErrors(file: string): string | null {
  const r = spawnSync("xmllint", ["--noout", "--schema", "test/junit.xsd", file], { encoding: "utf8" });
  return r.status === 0 ? null : r.stderr;
}

/** The string value of an XPath expression over `file` (xmllint --xpath 'string(…)', which ends it with a newline). */
export function xpathString(file: string, expression: string): string {
  const r = spawnSync("xmllint", ["--xpath", `string(${expression})`, file], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`xmllint --xpath ${expression}: ${r.stderr}`);
  return r.stdout.replace(/\n$/, "");
}
