// GET /fixture?since=&until=&post_state= (docs/guides/run-a-devnet.md "Fixtures"): the node's chain as the
// cbqs-fixture/v1 that `cbqs export --db` writes of the same store — the same producer
// (src/node/fixture-export.ts), the same bytes. `since` and `until` are `--from` and `--to`:
// every block from genesis through `until` is in it (a fixture replays from genesis), and
// `since` chooses the first block carrying a post_state. Every check comes first (400, or 410 for
// a node started from a snapshot); the document is then streamed, block by block.
import type { PostStateMode } from "../harness/fill.js";
import type { ChainDb } from "../../state/chain-db/chain-db.js";
import { U64_MAX } from "../engine/math.js";
import { parseDecimal } from "./decimal.js";
import { badRequest, RequestError } from "./errors.js";
import { ExportRefused, exportSteps, planExport, POST_STATE_MODES, type ExportPlan } from "./fixture-export.js";
import { readPointJson, StreamedAnswer } from "./json.js";

const HEIGHT = { what: "a block height", max: U64_MAX };

export function fixtureAnswer(db: ChainDb, params: ReadonlyMap<string, string>): StreamedAnswer {
  const height = (name: string): bigint | undefined => {
    const text = params.get(name);
    return text === undefined ? undefined : parseDecimal(text, { name, ...HEIGHT });
  };
  const since = height("since");
  const until = height("until");
  const postState = params.get("post_state") ?? "every";
  if (!(POST_STATE_MODES as readonly string[]).includes(postState)) {
    throw badRequest("invalid_post_state", `post_state must be every, final or none (got ${JSON.stringify(postState.slice(0, 40))})`);
  }
  let plan: ExportPlan;
  try {
    plan = planExport(db, {
      postState: postState as PostStateMode,
      names: { from: "since", to: "until", postState: "post_state" },
      ...(since === undefined ? {} : { from: since }),
      ...(until === undefined ? {} : { to: until }),
    });
  } catch (err) {
    if (!(err instanceof ExportRefused)) throw err;
    // Both depend on the chain: the answer names the block it was decided at.
    const at = readPointJson(db.head()!);
    throw err.kind === "history" ? new RequestError(410, "history_not_held", err.message, at) : new RequestError(400, "invalid_range", err.message, at);
  }
  return new StreamedAnswer(function* (out) {
    const s = yield* exportSteps(db, plan, out);
    return { msg: "fixture written", until: plan.to.toString(), post_state: plan.postState, blocks: s.blocks, txs: s.txs, post_states: s.postStates };
  });
}
