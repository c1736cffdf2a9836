// A census of what fuzz chains reach: how often each cell of src/fuzz/cells.ts
// is hit, and in how many runs at least once — "a cell appears in 0.5 % of runs" is that per-run
// count over `runs`. Lanes count their own runs and the campaign adds them up (merge), so a
// census crosses worker threads as plain JSON.
import type { BuiltBlock } from "./build.js";
import { blockCells, CELL_GROUPS, type CellGroup } from "./cells.js";

export interface CellCount {
  group: CellGroup;
  name: string;
  /** Times hit. */
  hits: number;
  /** Runs that hit it at least once. */
  runs: number;
}

/** A census as plain data (structured-clone and JSON safe). */
export interface CensusJson {
  runs: number;
  cells: CellCount[];
}

const keyOf = (group: CellGroup, name: string): string => `${group}\n${name}`;

export class Census {
  private total = 0;
  private readonly counts = new Map<string, CellCount>();
  /** Cells the run under way has hit. */
  private readonly current = new Set<CellCount>();

  /** Runs ended (endRun) or merged in. */
  get runs(): number {
    return this.total;
  }

  /** Distinct cells hit: the fuzz summary's "states reached". */
  get reached(): number {
    return this.counts.size;
  }

  /** Counts the cells of one block of the run under way. */
  add(block: BuiltBlock): void {
    blockCells(block, (group, name) => {
      const key = keyOf(group, name);
      let c = this.counts.get(key);
      if (c === undefined) {
        c = { group, name, hits: 0, runs: 0 };
        this.counts.set(key, c);
      }
      c.hits++;
      this.current.add(c);
    });
  }

  /** Ends the run under way: each cell it hit counts one run more. */
  endRun(): void {
    for (const c of this.current) c.runs++;
    this.current.clear();
    this.total++;
  }

  /** Adds another census's ended runs (neither may have a run under way). */
  merge(other: Census | CensusJson): this {
    const json = other instanceof Census ? other.toJSON() : other;
    if (this.current.size > 0) throw new Error("a census with a run under way cannot be merged into");
    this.total += json.runs;
    for (const c of json.cells) {
      const known = this.counts.get(keyOf(c.group, c.name));
      if (known === undefined) this.counts.set(keyOf(c.group, c.name), { ...c });
      else {
        known.hits += c.hits;
        known.runs += c.runs;
      }
    }
    return this;
  }

  static fromJSON(json: CensusJson): Census {
    return new Census().merge(json);
  }

  toJSON(): CensusJson {
    if (this.current.size > 0) throw new Error("a census with a run under way has no final counts");
    return { runs: this.total, cells: this.cells() };
  }

  /** Every cell hit, by group (in CELL_GROUPS order) and name: the same list whatever order runs were merged in. */
  cells(): CellCount[] {
    const rank = (g: CellGroup) => CELL_GROUPS.indexOf(g);
    return [...this.counts.values()].map((c) => ({ ...c })).sort((x, y) => rank(x.group) - rank(y.group) || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
  }

  /** Runs that hit the cell (0 if never). */
  runsWith(group: CellGroup, name: string): number {
    return this.counts.get(keyOf(group, name))?.runs ?? 0;
  }
}
