// The layers of the source tree, lowest first: a module imports only from its own layer or the
// layers below it, type-only imports included, so every folder can be read knowing only what is
// under it. test/layers.test.ts checks every import against this table, and
// docs/reference/layers.md is generated from it (scripts/gen-reference.ts). A new folder must be
// given its place here.

export interface Layer {
  /** Folders, or files at src/'s top, that form this layer. */
  readonly units: readonly string[];
  /** What is there. */
  readonly what: string;
}

export const LAYERS: readonly Layer[] = [
  { units: ["src/bytes.ts", "src/bounds.ts", "src/lines.ts", "src/steps.ts", "src/params.ts", "src/format.ts", "src/io-error.ts"], what: "bytes and hex, bounds, stop signals, number formatting, I/O error wording" },
  { units: ["src/output-file.ts", "src/json"], what: "output files (what the name already is decides how they are written); the strict JSON reader and writer" },
  { units: ["src/crypto"], what: "keccak256 / sha256 / blake3, strict Ed25519, HKDF-SHA256" },
  { units: ["state/kv"], what: "the key/value model: 54-byte keys (CIP-4 §4.1/§4.2), the value codec (§4.3), events, commonware codec primitives, the interfaces the engine and the commitment see, byte-keyed hash tables, dumps" },
  { units: ["state/roots"], what: "block roots (CIP-4 §5.2/§5.3): the BMT, `tx_root`, `receipt_root`, `logs_root`, inclusion proofs" },
  { units: ["state/qmdb"], what: "the state commitment's structures (CIP-4 §5.1): MMR, QMDB any/current over a storage interface, its in-memory storage, state proofs and their verifiers (§5.4), conformance digests" },
  { units: ["state/commitment"], what: "the commitment pipelined on a worker thread" },
  { units: ["state/store"], what: "the in-memory state store (block batches with checkpoints) and its watching wrappers" },
  { units: ["state/chain-db"], what: "the node's storage contract (`ChainDb`), its in-memory implementation, the staging both share, dry runs" },
  { units: ["state/lmdb"], what: "the persistent backend: the LMDB ChainDb, QMDB storage, snapshots, store checks" },
  { units: ["src/admission", "src/codec"], what: "canonical CIP-39 §14 codec: every consensus type and every §8–§15 broker wire type, signing bytes, digests, derivations, the §12.2 canonical helpers, JSON mapping; §4.3 endpoint admission (WHATWG URL, IPv4/IPv6 policy)" },
  // The engine dispatches to its instruction handlers, which use its context: one layer.
  { units: ["src/engine", "instructions"], what: "genesis, dispatch, block execution, governance, pause accounting, custody, meter, errors, the engine's inputs; one file per SYS_CBQS instruction, plus `settle.ts` (§6.1)" },
  { units: ["src/chain"], what: "the CBOR transaction envelope, nonces, receipts and block hashes" },
  { units: ["src/gas", "src/scenario"], what: "the gas schedule and vectors; scenario parsing, expectations, the run document (`cbqs run`)" },
  { units: ["src/harness"], what: "fixtures: fill, replay, t8n and its server, trace, diff; test ids, the corpus index and selection" },
  { units: ["src/target"], what: "an implementation under test: per-call t8n and t8n-server clients, the t8n adapter" },
  { units: ["src/fuzz", "src/report"], what: "`cbqs fuzz`: the chain model (shared with the property tests), generator, runner, comparison, shrinker, report; test reports (JUnit XML, HTML)" },
  { units: ["src/consume", "src/jobs"], what: "`cbqs consume`; `--jobs`: whole fixtures on worker threads, results in order" },
  { units: ["src/client"], what: "`cbqs-emulator/client`: the typed client of `cbqs node` — every endpoint as a method, proofs verified against the header of the block they name, a verified feed, typed errors, bounded 429 retries" },
  // The node's chain and its devnet: domain values and domain errors, no HTTP; src/node is the HTTP layer over it.
  { units: ["src/chain-node"], what: "the chain a node serves, without HTTP: opened from a genesis, a fixture or a store; the devnet's pool, block production, write queue and snapshots; the fixture export; its own errors, which the library throws and the node answers by one table" },
  // Beside the node, not in it: the store tools and the follower, a client of a node's HTTP interface.
  { units: ["src/store-tools"], what: "a node's `--db` store beside the node: opening it, snapshots, `cbqs store verify`, replaying a fixture into a store" },
  { units: ["src/follower"], what: "`cbqs follow`: a client of a node's feed and subscription that verifies every block into its own store" },
  { units: ["src/node"], what: "the local node (`cbqs node`), the HTTP layer over src/chain-node: the route table, reads, proofs, replication feed, subscriptions (SSE), the devnet's answers, limits, the explorer's files and reads" },
  { units: ["src/broker-kit"], what: "`cbqs check broker`: the broker rules, the bundle reader, the chain sources, the verifier; for tests and samples only, the reference signer, the kit chain and its bundles, the mutator" },
  { units: ["src/cli", "src/cli.ts", "src/api"], what: "the `cbqs` commands; the library's five entry points" },
  // The explorer page runs in a browser, compiled on its own (tsconfig.explorer.json): it imports
  // only its own modules (test/layers.test.ts checks it); the node serves its files without importing them.
  { units: ["src/explorer"], what: "the explorer page the node serves at `/`: browser code compiled by `tsconfig.explorer.json` (the DOM library); imports only its own modules" },
];
