// Numbers as the CLI and the reports write them: grouped thousands, counted nouns, rates.

/**
 * 2100 → "2,100" (bigint too): en-US grouping, as toLocaleString("en-US") writes it. An integer
 * is grouped here: the first toLocaleString of a process initialises ICU, about 30 ms, and the
 * --snapshot-interval help (src/cli/store-options.ts) is built on every call of its commands
 * (docs/engineering/performance.md "Start-up").
 */
export function thousands(n: number | bigint): string {
  if (typeof n === "number" && (!Number.isSafeInteger(n) || Object.is(n, -0))) return n.toLocaleString("en-US");
  const text = n.toString();
  const sign = text.startsWith("-") ? "-" : "";
  return sign + text.slice(sign.length).replace(/\B(?=(\d{3})+$)/g, ",");
}

/** "1 block", "2 blocks" — `plural` given for irregular nouns ("entry"/"entries"). */
export function count(n: number | bigint, singular: string, plural = `${singular}s`): string {
  return `${thousands(n)} ${n === 1 || n === 1n ? singular : plural}`;
}

export function rate(amount: number, seconds: number): string {
  if (seconds <= 0) return "-";
  const r = amount / seconds;
  return r >= 100 ? thousands(Math.round(r)) : r.toFixed(1);
}
