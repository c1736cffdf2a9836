// Where `cbqs verify-broker` and the reference signer read the chain: one interface, two
// sources. `--node <url>` reads a running node through the typed client (GET /genesis checked
// against its source bytes; GET /cbqs/broker-state pinned to the height, its block hash and
// state root tied to the verified header of that height, the schedule digest recomputed);
// `--fixture <file>` replays the fixture in this process — every root and receipt checked —
// into an in-memory store that keeps every block's state, and answers the same broker-state
// read from it (src/node/reads.ts), parsed by the same reader as the client's answers. A read is
// of one block: the stream record, its provider, the live bounds and effective_rent_height
// together (CIP-39 §3).
import { toHex } from "../bytes.js";
import { Gone, NotFound, createClient, type BrokerState, type Client } from "../client/index.js";
import { brokerStateAnswer } from "../client/answers.js";
import type { CbqsSigningContextV1, ProviderRecordV1, StreamRecordV1 } from "../codec/types.js";
import type { Fixture } from "../harness/fixture.js";
import { brokerStateOrNull } from "../node/reads.js";
import { replayIntoDb } from "../store-tools/replay-db.js";
import { MemoryChainDb } from "../../state/chain-db/memory.js";

/** The chain's state for one broker decision at one block. */
export interface ChainView {
  height: bigint;
  blockHash: Uint8Array;
  stream: StreamRecordV1;
  provider: ProviderRecordV1 | null;
  /** The §18.1 live governance scalars by name. */
  bounds: Record<string, bigint>;
  effectiveRentHeight: bigint;
}

export type ViewRead =
  | { kind: "view"; view: ChainView }
  | { kind: "no-block" }
  | { kind: "no-stream"; blockHash: Uint8Array };

export interface ChainSource {
  /** "node http://…" or "fixture <file>", for messages. */
  readonly name: string;
  /** The chain's signing context (CIP-39 §4): version 1, its chain id and chain instance. */
  readonly context: CbqsSigningContextV1;
  /** The stream's broker-state at the block of `height`. */
  at(stream: Uint8Array, height: bigint): Promise<ViewRead>;
}

/** A source the chain could not answer from (a node that no longer holds a block, a fixture that does not replay): unusable input. */
export class ChainSourceError extends Error {
  override name = "ChainSourceError";
}

function viewOf(answer: BrokerState): ChainView {
  return {
    height: answer.height,
    blockHash: answer.blockHash,
    stream: answer.stream,
    provider: answer.provider,
    bounds: answer.bounds,
    effectiveRentHeight: answer.effectiveRentHeight,
  };
}

/** A running node, through the typed client. */
export async function nodeSource(url: string, client: Client = createClient(url)): Promise<ChainSource> {
  const genesis = await client.genesis();
  return {
    name: `node ${client.url}`,
    context: { version: 1, chain_id: genesis.chainId, chain_instance_id: genesis.chainInstanceId },
    async at(stream, height) {
      try {
        return { kind: "view", view: viewOf(await client.brokerState({ stream }, { height })) };
      } catch (err) {
        if (err instanceof NotFound && err.code === "block_not_found") return { kind: "no-block" };
        if (err instanceof NotFound && err.code === "stream_not_found") {
          // The answer names the block it is absent at; the header of that height is what counts.
          return { kind: "no-stream", blockHash: height === 0n ? genesis.blockHash : (await client.block(height)).blockHash };
        }
        if (err instanceof Gone) {
          throw new ChainSourceError(`${client.url} no longer holds the state of height ${height} (${err.nodeMessage}): start the node with a larger --retain-blocks, or verify against the chain's fixture (--fixture)`);
        }
        throw err;
      }
    },
  };
}

/** A fixture, replayed here (every root and receipt checked) into a store that keeps every block's state. */
export async function fixtureSource(fixture: Fixture, name: string): Promise<ChainSource> {
  const db = new MemoryChainDb(fixture.blocks.length + 1);
  const outcome = await replayIntoDb(fixture, db);
  if (outcome.mismatch !== null) {
    const m = outcome.mismatch;
    throw new ChainSourceError(`${name}: the fixture does not replay: block ${m.height}: ${m.field}: expected ${m.expected}, got ${m.actual}`);
  }
  const g = fixture.genesis;
  const where = `fixture ${name}`;
  return {
    name: where,
    context: { version: 1, chain_id: g.config.chain_id, chain_instance_id: g.chain_instance_id },
    async at(stream, height) {
      const block = db.blockByHeight(height);
      if (block === undefined) return { kind: "no-block" };
      const answer = brokerStateOrNull(db, g.chain_instance_id, g.config.governance, stream, toHex(block.block_hash));
      if (answer === null) return { kind: "no-stream", blockHash: block.block_hash };
      // Through JSON, as a node's answer arrives: the same reader checks both sources.
      return { kind: "view", view: viewOf(brokerStateAnswer(where, JSON.parse(JSON.stringify(answer)) as Record<string, unknown>)) };
    },
  };
}
