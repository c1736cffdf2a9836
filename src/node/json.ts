// JSON shapes the node answers with (docs/guides/run-a-devnet.md): integers as decimal strings, bytes as
// lowercase 0x hex (scenario-format §1 output conventions). A replication item is a
// cbqs-fixture/v1 block (docs/reference/formats/fixture.md) plus its parent_hash, so the follower loads it with the
// fixture loader and replays it exactly as `cbqs replay` does.
import { toHex } from "../bytes.js";
import { GAS_VECTORS_SHA256 } from "../gas/pinned.js";
import { blockJson } from "../harness/fixture.js";
import type { TextSink } from "../json/write.js";
import type { Steps } from "../steps.js";
import type { BlockRecord } from "../../state/chain-db/chain-db.js";

/** An answer already serialized (kept by a cache: the same block gives the same bytes). */
export class JsonText {
  constructor(readonly text: string) {}
}

/** An answer that is not JSON (GET /metrics' Prometheus text), sent with its own content type. */
export class TextAnswer {
  constructor(
    readonly contentType: string,
    readonly text: string,
  ) {}
}

/**
 * An answer too large to build as one string (GET /fixture): `produce` writes its text to `out`
 * unit by unit (src/steps.ts) and returns what the node logs when it is complete. The server sends
 * each unit's text as it comes and turns the event loop between units (src/node/server.ts).
 */
export class StreamedAnswer {
  constructor(readonly produce: (out: TextSink) => Steps<Record<string, unknown>>) {}
}

/** The read point every answer names. */
export type ReadPointJson = Record<"height" | "block_hash" | "state_root", string>;

export const readPointJson = (b: BlockRecord): ReadPointJson => ({
  height: b.height.toString(),
  block_hash: toHex(b.block_hash),
  state_root: toHex(b.state_root),
});

/** FinalizedViewV1 (CIP-39 §3) of a committed block. */
export const finalizedViewJson = (chainInstanceId: Uint8Array, b: BlockRecord) => ({
  chain_instance_id: toHex(chainInstanceId),
  height: b.height.toString(),
  block_hash: toHex(b.block_hash),
});

/** One replication item: everything a consumer needs to re-execute and verify the block. */
export function blockItemJson(b: BlockRecord): Record<string, unknown> {
  // The fixture's block (same fields, same order) with parent_hash after the timestamp.
  const { height, timestamp, ...rest } = blockJson({ ...b, gas_vectors_sha256: GAS_VECTORS_SHA256 });
  return { height, timestamp, parent_hash: toHex(b.parent_hash), ...rest };
}
