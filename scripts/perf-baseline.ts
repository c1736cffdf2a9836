// The build the performance guard compares this one with (scripts/perf-guard.ts,
// docs/engineering/performance.md "Regression guard"): a commit of this repository, built once into
// .cache/perf-baseline/<commit>/ and kept there.
//
// Move it (this line only, in its own commit, saying why) when a change is an intended
// trade-off — slower on purpose, or a consensus change that the old build cannot replay — or
// after a change that made a workload faster, so that the next regression is measured from the
// new level: set it to the commit that is to be the new reference (usually the merge that made
// the change) and run `npm run perf-guard`, which then reads about 1.00 everywhere.
export const PERF_BASELINE_COMMIT = "d6c17b347278a7a6502342f4e3334d78a4a02d4f";
