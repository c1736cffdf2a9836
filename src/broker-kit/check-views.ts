// The rules that judge a receipt by the chain's state at its own view (CIP-39 §6, §6.1, §7, §14):
// economic availability for mutations (B29, B30) and the monotone view cursor (B28).
import type { Artifact } from "./bundle.js";
import type { ChainView } from "./chain-source.js";
import { hex, type Checks } from "./checks.js";

const U128_MAX = (1n << 128n) - 1n;

/**
 * B29/B30 (§6, §6.1): a mutation served at `view` needs an Active record whose escrow covers the
 * rent accrued through the view's effective_rent_height — never served_at.height, which is
 * physical (§6). A Suspended record is refused whatever its escrow; at or past its pinned grace
 * deadline it is named so. A height below last_settled_block or an overflow fails closed.
 */
export function checkEconomics(c: Checks, a: Artifact, view: ChainView, what: string): void {
  const s = view.stream;
  const erh = view.effectiveRentHeight;
  const active = s.status === "Active";
  c.check(a, "B30", active, () => {
    const deadline = s.suspension_grace_deadline_block;
    const past = deadline !== null && erh >= deadline ? `, at or past its pinned grace deadline ${deadline} (effective rent height ${erh})` : deadline !== null ? ` (in its grace window: deadline ${deadline}, effective rent height ${erh})` : "";
    return `${what} served at height ${view.height}, where the stream is ${s.status}${past}: a broker serves no mutation then (§6.1)`;
  });
  if (!active) return;
  if (!c.check(a, "B29", erh >= s.last_settled_block, () => `${what} served at height ${view.height}: effective_rent_height ${erh} is below last_settled_block ${s.last_settled_block}, which fails closed`)) return;
  const accrued = (erh - s.last_settled_block) * s.rate_per_block;
  if (!c.check(a, "B29", accrued <= U128_MAX, () => `${what} served at height ${view.height}: the accrued rent overflows u128, which fails closed`)) return;
  c.check(a, "B29", s.escrow_balance >= accrued, () =>
    `${what} served at height ${view.height}: escrow_balance ${s.escrow_balance} is below the rent accrued through effective_rent_height ${erh}: (${erh} − last_settled_block ${s.last_settled_block}) × rate_per_block ${s.rate_per_block} = ${accrued}`,
  );
}

/** The finalized fields whose change §7 and §14 condition the view cursor on. */
function watched(view: ChainView): Record<string, string> {
  const s = view.stream;
  return {
    status: s.status,
    provider_signing_key: hex(s.provider_signing_key.key),
    provider_epoch: String(s.provider_epoch),
    authorization_generation: String(s.authorization_generation),
    encryption_generation: String(s.encryption_generation),
  };
}

/**
 * B28 (§7, §14): along one chain of receipts, once the broker signed from a view where a watched
 * field had changed, it signs nothing from a view older than that change. Each chain (the global
 * receipts, each group, the checkpoints) keeps its newest view.
 */
export class ViewCursor {
  private readonly newest = new Map<string, { view: ChainView; line: number }>();

  constructor(private readonly c: Checks) {}

  see(a: Artifact, chain: string, view: ChainView): void {
    const top = this.newest.get(chain);
    if (top !== undefined && view.height < top.view.height) {
      const older = watched(view);
      const newer = watched(top.view);
      const changed = Object.keys(older).find((k) => older[k] !== newer[k]);
      this.c.check(a, "B28", changed === undefined, () =>
        `served at height ${view.height}, older than height ${top.view.height} of the ${chain} receipt on line ${top.line}, by which ${changed} had changed (${older[changed!]} → ${newer[changed!]}): the broker had observed the change`,
      );
      return;
    }
    if (top !== undefined) this.c.check(a, "B28", true, () => "");
    this.newest.set(chain, { view, line: a.line });
  }
}
