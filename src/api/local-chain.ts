// A chain in this process, the way a library user drives one (@ethereumjs/vm's createVM and
// runBlock, anvil without the HTTP): a genesis, transactions sent and blocks mined, reads and
// proofs of the head state. It is the devnet chain of `cbqs node` (src/chain-node/chain-node.ts) on an
// in-memory store, so its roots, receipts and block hashes are the node's, `cbqs replay`'s and
// `cbqs fill`'s.
import { utf8 } from "../bytes.js";
import { loadFixture, type Fixture } from "../harness/fixture.js";
import { exportSteps, planExport } from "../chain-node/fixture-export.js";
import { finish } from "../steps.js";
import type { Account } from "../engine/accounts.js";
import { parseJson, type JsonObject } from "../json/parse.js";
import type { Address, Bytes32, ProviderRecordV1, StreamRecordV1 } from "../codec/types.js";
import type { GenesisConfig } from "../engine/inputs.js";
import { DEFAULT_GENESIS_SOURCE } from "../harness/genesis.js";
import { canonicalJson } from "../scenario/genesis.js";
import { CbqsNode, NodeInputError, type MinedBlock } from "../chain-node/chain-node.js";
import { GenesisError } from "../engine/errors.js";
import { buildTransaction } from "../scenario/transaction.js";
import type { TransactionInput } from "../scenario/transaction-input.js";
import type { BlockRecord } from "../../state/chain-db/chain-db.js";
import { MemoryChainDb } from "../../state/chain-db/memory.js";
import type { ExclusionProof, StateProof } from "../../state/qmdb/proof.js";

export type { BlockRecord, MinedBlock };
// The chain's own errors, thrown as they are: a TransactionRefused subclass for each reason a
// transaction is refused (its `code` names it), a RangeError subclass for a height out of range.
export {
  InvalidBlockCount,
  InvalidHeight,
  InvalidTransaction,
  KeylessSender,
  NonceGap,
  PoolFull,
  TimestampBackwards,
  TransactionRefused,
  TransactionTooLarge,
} from "../chain-node/errors.js";

export interface ChainOptions {
  /**
   * The genesis: its exact source bytes (a genesis file, CIP-39 §3: the chain instance id is
   * derived from them), or a genesis object, whose canonical JSON serialization is the source.
   * Default: the default genesis config (`cbqs node` without a genesis file).
   */
  genesis?: Uint8Array | JsonObject;
}

export class LocalChain {
  private constructor(private readonly node: CbqsNode) {}

  /** A new chain at its genesis block; GenesisError, naming the field, when the genesis is invalid. */
  static create(options: ChainOptions = {}): LocalChain {
    const g = options.genesis;
    const source = g === undefined ? DEFAULT_GENESIS_SOURCE : g instanceof Uint8Array ? g : utf8(canonicalJson(g));
    try {
      return new LocalChain(CbqsNode.open(new MemoryChainDb(), { kind: "genesis", source }));
    } catch (err) {
      // The node words it for its command line; a library caller gets the engine's error class.
      if (err instanceof NodeInputError) throw new GenesisError(err.message);
      throw err;
    }
  }

  get chainId(): bigint {
    return this.node.config.chain_id;
  }

  get chainInstanceId(): Bytes32 {
    return this.node.chainInstanceId;
  }

  get genesis(): GenesisConfig {
    return this.node.config;
  }

  /** The newest block (the genesis block until one is mined). */
  head(): BlockRecord {
    return this.node.head();
  }

  account(address: Address): Account {
    return this.node.chain.account(address);
  }

  stream(id: Bytes32): StreamRecordV1 | null {
    return this.node.chain.stream(id);
  }

  provider(address: Address): ProviderRecordV1 | null {
    return this.node.chain.provider(address);
  }

  /**
   * The envelope of a transaction written as a scenario writes it (docs/reference/formats/scenario.md §2),
   * for this chain, with the sender's next nonce (account nonce plus its transactions sent and
   * not yet mined) unless one is given. A malformed transaction is a ScenarioError naming its
   * JSON path.
   */
  buildTransaction(tx: TransactionInput, options: { nonce?: bigint } = {}): Uint8Array {
    const nonce = options.nonce ?? ((from: Address) => this.account(from).nonce + BigInt(this.node.pendingFrom(from)));
    return buildTransaction(tx, { chainId: this.chainId, chainInstanceId: this.chainInstanceId, nonce });
  }

  /** Queues a raw envelope for the next block; TransactionRefused (a subclass naming why) when no block may contain it. */
  send(raw: Uint8Array): { txHash: Uint8Array; nonce: bigint } {
    return this.node.submit(raw);
  }

  /**
   * Produces the next block (or the block at `height`, skipping the heights between) from the sent
   * transactions, in the order sent. Timestamps follow the genesis: timestamp + height ×
   * block_time_seconds (D-0107 "Devnet blocks"). A height not above the head is an
   * InvalidHeight (a RangeError).
   */
  mine(options: { height?: bigint } = {}): MinedBlock {
    if (options.height !== undefined && typeof options.height !== "bigint") throw new TypeError(`height must be a bigint (${String(options.height)}n), got a ${typeof options.height}`);
    return this.node.mine(options.height);
  }

  /**
   * A block of these envelopes, after any already sent: send() each, then mine(). All or nothing:
   * when one is refused, none of them stays queued and nothing is mined.
   */
  executeBlock(raws: readonly Uint8Array[], options: { height?: bigint } = {}): MinedBlock {
    const before = this.node.pending;
    try {
      for (const raw of raws) this.send(raw);
    } catch (err) {
      this.node.dropPendingFrom(before);
      throw err;
    }
    return this.mine(options);
  }

  /**
   * The chain so far as a cbqs-fixture/v1 (docs/fixtures.md), every block re-executed from
   * genesis and checked first, as `cbqs fixture export` writes it: replayFixture(chain.toFixture()) is
   * ok, and another implementation can be run against it (`cbqs consume`).
   */
  toFixture(options: { name?: string; description?: string; postState?: "every" | "final" | "none" } = {}): Fixture {
    const plan = planExport(this.node.db, {
      postState: options.postState ?? "final",
      ...(options.name === undefined ? {} : { name: options.name }),
      ...(options.description === undefined ? {} : { description: options.description }),
      names: { from: "from", to: "to", postState: "postState" },
    });
    const parts: string[] = [];
    finish(exportSteps(this.node.db, plan, { write: (t) => parts.push(t) }));
    return loadFixture(parseJson(parts.join("")));
  }

  /** A proof of `key`'s current value (or of its absence) against head().state_root; check it with verifyStateProof (cbqs-emulator/state). */
  prove(key: Uint8Array): StateProof | ExclusionProof {
    return this.node.db.proveKey(key);
  }
}

/** A new in-process chain (LocalChain.create). */
export const createChain = (options: ChainOptions = {}): LocalChain => LocalChain.create(options);
