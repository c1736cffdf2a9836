// The kit's mutants (src/broker-kit/mutants.ts) in process, on the synthetic chain: every one is
// refused with exactly its rule, on the lines it breaks, with the evidence the verifier owes its
// reader — and the unmutated reference bundles are accepted, each rule checked as often as the
// bundle's artifacts call for (a dispatch that skipped an artifact, or checked one twice, shows
// here). mutants.test.ts runs the same mutants on the kit chain replayed from its fixture.
import { describe, expect, it } from "vitest";
import { MUTANTS } from "../../src/broker-kit/mutants.js";
import { verifyBundle } from "../../src/broker-kit/verify.js";
import { syntheticBundle, syntheticSource } from "./synthetic-chain.js";

/** Each mutant's failures as [line, rule, evidence], by its name. */
const REFUSED: ReadonlyArray<[string, Array<[number, string, string]>]> = [
  ["an append receipt signed under another chain_id", [
    [37, "B1", "response.body.append_receipt.context: chain_id is 8; this chain's is 7"],
  ]],
  ["an append receipt whose served_at names another block hash", [
    [37, "B2", "response.body.append_receipt.served_at.block_hash is 0xd492ab0f552fe409fd4815fa80b6d4eb402573ba7dea66ef9cbe85b6e506797c; the chain's block at height 8 is 0x9cfa3ad22263d25809560022bb33b298d3601cd4e63166b4b8ad1c6e34bcc40e"],
  ]],
  ["an append receipt served at a height with no block", [
    [37, "B2", "response.body.append_receipt.served_at names height 9, at which this chain has no block"],
  ]],
  ["an append receipt served at a block before the stream existed", [
    [43, "B2", "response.body.append_receipt.served_at: the stream does not exist at height 1"],
  ]],
  ["an append receipt signed by a key other than the stream's provider key", [
    [37, "B3", "response.body.append_receipt.signature does not verify under the stream's provider_signing_key 0xd0e16f23fdc3c4c2f421445ca0556bd4345b06d818177e904c43f3f3318399fa at height 8"],
  ]],
  ["a grant signed by a key other than the stream's admin key", [
    [5, "B4", "the grant on line 2 does not verify under the stream's admin_key 0xdb3592eab2cc9254aa9ea9f5295143d5c1bab02d948735bb47b3ce266895cabd at height 3"],
    [11, "B4", "the grant on line 2 does not verify under the stream's admin_key 0xdb3592eab2cc9254aa9ea9f5295143d5c1bab02d948735bb47b3ce266895cabd at height 4"],
    [18, "B4", "the grant on line 2 does not verify under the stream's admin_key 0xdb3592eab2cc9254aa9ea9f5295143d5c1bab02d948735bb47b3ce266895cabd at height 5"],
  ]],
  ["a session naming a grant id no grant of the bundle has", [
    [3, "B5", "challenge.grant_id 0xae56d8230a1d88d4a3fbd857159bee27013dbec760624712f56065c7646ebffe is the id of no grant in the bundle (grant_id = keccak256(stream_grant_signing_bytes_v1(grant)))"],
    [4, "B5", "proof.grant_id 0xae56d8230a1d88d4a3fbd857159bee27013dbec760624712f56065c7646ebffe is the id of no grant in the bundle (grant_id = keccak256(stream_grant_signing_bytes_v1(grant)))"],
    [5, "B5", "opened.grant_id 0xae56d8230a1d88d4a3fbd857159bee27013dbec760624712f56065c7646ebffe is the id of no grant in the bundle (grant_id = keccak256(stream_grant_signing_bytes_v1(grant)))"],
  ]],
  ["a grant carrying an authorization_generation the stream does not have at its views", [
    [5, "B6", "the grant on line 2 carries authorization_generation 2; the stream's at height 3 is 1"],
    [11, "B6", "the grant on line 2 carries authorization_generation 2; the stream's at height 4 is 1"],
    [18, "B6", "the grant on line 2 carries authorization_generation 2; the stream's at height 5 is 1"],
  ]],
  ["receipts committed before the grant's not_before_ms (less the clock skew)", [
    [7, "B7", "committed at 1767225602000 ms, before the grant's not_before_ms 1767228600000 less cbqs.max_clock_skew_ms 5000: admitted before the grant's window"],
    [9, "B7", "committed at 1767225604000 ms, before the grant's not_before_ms 1767228600000 less cbqs.max_clock_skew_ms 5000: admitted before the grant's window"],
    [11, "B7", "committed at 1767225605000 ms, before the grant's not_before_ms 1767228600000 less cbqs.max_clock_skew_ms 5000: admitted before the grant's window"],
    [13, "B7", "committed at 1767225606000 ms, before the grant's not_before_ms 1767228600000 less cbqs.max_clock_skew_ms 5000: admitted before the grant's window"],
    [16, "B7", "committed at 1767225608000 ms, before the grant's not_before_ms 1767228600000 less cbqs.max_clock_skew_ms 5000: admitted before the grant's window"],
    [18, "B7", "committed at 1767225609000 ms, before the grant's not_before_ms 1767228600000 less cbqs.max_clock_skew_ms 5000: admitted before the grant's window"],
    [21, "B7", "committed at 1767225611000 ms, before the grant's not_before_ms 1767228600000 less cbqs.max_clock_skew_ms 5000: admitted before the grant's window"],
    [23, "B7", "committed at 1767225612000 ms, before the grant's not_before_ms 1767228600000 less cbqs.max_clock_skew_ms 5000: admitted before the grant's window"],
    [25, "B7", "committed at 1767225614000 ms, before the grant's not_before_ms 1767228600000 less cbqs.max_clock_skew_ms 5000: admitted before the grant's window"],
  ]],
  ["a grant valid for longer than cbqs.max_grant_ttl_ms", [
    [5, "B7", "the grant on line 2 is valid for 86400001 ms, above cbqs.max_grant_ttl_ms 86400000 at height 3"],
  ]],
  ["appends under a grant without the APPEND verb", [
    [6, "B8", "the Append request needs APPEND; the grant's verbs are 0b1111110"],
    [10, "B8", "the Append request needs APPEND; the grant's verbs are 0b1111110"],
    [17, "B8", "the Append request needs APPEND; the grant's verbs are 0b1111110"],
  ]],
  ["requests on lanes outside the grant's lane scope", [
    [6, "B9", "lane 0x0000000000000000000000000000000000000000000000000000000000000000 is outside the grant's lane_scope (Exact)"],
    [8, "B9", "lane 0x6eee1573f000420c65e40e39e6f0dd7beba355ca34dd40190c36fef5bd1c8a74 is outside the grant's lane_scope (Exact)"],
    [10, "B9", "lane 0x6eee1573f000420c65e40e39e6f0dd7beba355ca34dd40190c36fef5bd1c8a74 is outside the grant's lane_scope (Exact)"],
    [12, "B9", "lane 0x0000000000000000000000000000000000000000000000000000000000000000 is outside the grant's lane_scope (Exact)"],
    [15, "B9", "lane 0x0000000000000000000000000000000000000000000000000000000000000000 is outside the grant's lane_scope (Exact)"],
    [17, "B9", "lane 0x0000000000000000000000000000000000000000000000000000000000000000 is outside the grant's lane_scope (Exact)"],
    [20, "B9", "lane 0x0000000000000000000000000000000000000000000000000000000000000000 is outside the grant's lane_scope (Exact)"],
    [22, "B9", "lane 0x0000000000000000000000000000000000000000000000000000000000000000 is outside the grant's lane_scope (Exact)"],
    [24, "B9", "lane 0x6eee1573f000420c65e40e39e6f0dd7beba355ca34dd40190c36fef5bd1c8a74 is outside the grant's lane_scope (Exact)"],
  ]],
  ["group requests outside the grant's group scope", [
    [12, "B9", "group 0xf7602e358e8f8e8f3e8245f9f6233b498be8824f3ab353d376d6525253a53102 is outside the grant's group_scope (Exact)"],
    [15, "B9", "group 0xf7602e358e8f8e8f3e8245f9f6233b498be8824f3ab353d376d6525253a53102 is outside the grant's group_scope (Exact)"],
    [20, "B9", "group 0xf7602e358e8f8e8f3e8245f9f6233b498be8824f3ab353d376d6525253a53102 is outside the grant's group_scope (Exact)"],
    [22, "B9", "group 0xf7602e358e8f8e8f3e8245f9f6233b498be8824f3ab353d376d6525253a53102 is outside the grant's group_scope (Exact)"],
  ]],
  ["appends larger than the grant's max_message_bytes", [
    [7, "B10", "the append's payload is 9 bytes, above min(the stream's max_message_bytes 1024 at height 3, the grant's 4)"],
    [11, "B10", "the append's payload is 9 bytes, above min(the stream's max_message_bytes 1024 at height 4, the grant's 4)"],
    [18, "B10", "the append's payload is 9 bytes, above min(the stream's max_message_bytes 1024 at height 5, the grant's 4)"],
  ]],
  ["a grant allowing more lane creations a minute than cbqs.max_lane_creates_per_min", [
    [5, "B11", "the grant on line 2 allows 257 lane creations a minute, above cbqs.max_lane_creates_per_min 256 at height 3"],
    [11, "B11", "the grant on line 2 allows 257 lane creations a minute, above cbqs.max_lane_creates_per_min 256 at height 4"],
    [18, "B11", "the grant on line 2 allows 257 lane creations a minute, above cbqs.max_lane_creates_per_min 256 at height 5"],
  ]],
  ["a proof of possession signed by a key other than the grant's holder key", [
    [4, "B12", "proof.signature does not verify under the grant's holder_signing_key 0xa53f8331a9430274b4ab3fcbe0d84957481b36431f137d9c2c00507cffe0f249"],
  ]],
  ["a proof of possession of another challenge", [
    [4, "B12", "proof.challenge 0xf753f197020ecd91… is not the session's challenge 0xce9e5677eea71920…"],
  ]],
  ["a request proof signed by a key other than the session's holder key", [
    [10, "B13", "proof.signature does not verify under the session's holder key 0xa53f8331a9430274b4ab3fcbe0d84957481b36431f137d9c2c00507cffe0f249"],
  ]],
  ["a request counter repeated within a session", [
    [10, "B14", "counter 2 does not increase on the session's last 2"],
  ]],
  ["an append receipt off the stream's global receipt chain", [
    [11, "B15", "response.body.append_receipt.previous_global_receipt is 0x8d42822a76f8205bce86c948a1adbab71a66867aa55ae56213a1e98dedbfe73b; the chain's tail is 0x91d464f8b5e72287daf37170fe661fdeedcad4b288223cf5808148a152bfb157 (the digest of the receipt before it)"],
  ]],
  ["an append receipt off its lane's receipt chain", [
    [11, "B16", "response.body.append_receipt.previous_lane_receipt is 0x8d42822a76f8205bce86c948a1adbab71a66867aa55ae56213a1e98dedbfe73b; lane 0x6eee1573f000420c…'s tail is 0xbf3cb05ffd7b28403ca8994a51b7334e0eabc043a13fb678e96f934dd77f431a (lane_receipt_genesis)"],
  ]],
  ["an append receipt whose payload_hash is not the appended payload's", [
    [37, "B17", "response.body.append_receipt.payload_hash is 0x4e1bef231daccf3047d51dc810acac87ecd8249bb39b2ef63d1fad8bdcddb25d; the append it answers makes it 0x29ede552c7a3d89d9703bfe1914578e8b7215a8e76da496b0e039d8350b71c11"],
  ]],
  ["an append declaring encryption generation 1 on a stream at generation 0", [
    [37, "B18", "the append declares encryption_generation 1; the stream's at height 8 is 0"],
  ]],
  ["an append with a nonzero nonce on an unencrypted stream", [
    [37, "B18", "the append carries a nonzero nonce on an unencrypted stream (§10: zero for unencrypted streams)"],
  ]],
  ["a created lane whose id is not derived from its nonce", [
    [9, "B19", "the created lane's id is 0x5a511a32ca9f49344fbd06b0a5eb01dc499903635e9418fb1b27a672eac75395; keccak256(\"cbqs/lane-id/v1\" ‖ stream_id ‖ lane_nonce) is 0x6eee1573f000420c65e40e39e6f0dd7beba355ca34dd40190c36fef5bd1c8a74"],
  ]],
  ["a lane id created a second time after it was closed", [
    [43, "B19", "lane 0x6eee1573f000420c65e40e39e6f0dd7beba355ca34dd40190c36fef5bd1c8a74 is created a second time: closed lane ids are never reused (§8)"],
  ]],
  ["more open lanes than the stream's max_lanes", [
    [15, "B19", "5 lanes would be open (the default lane included), above the stream's max_lanes 4 at height 3"],
  ]],
  ["a delivery-state receipt off its group's receipt chain", [
    [16, "B20", "response.body.receipt.previous_group_receipt is 0x8d42822a76f8205bce86c948a1adbab71a66867aa55ae56213a1e98dedbfe73b; group 0xf7602e358e8f8e8f… on lane 0x0000000000000000…'s tail is 0x2e774adaa27d55afd00d0b565d621997186518bd16b4b64cfea234c2a2270a6f"],
  ]],
  ["a group created again after its deletion (the tuple reused)", [
    [43, "B20", "response.body.receipt: a GroupCreate of group 0xf7602e358e8f8e8f… on lane 0x0000000000000000… after its GroupDelete on line 39: the (stream, lane, group) tuple is never reused (§11.2)"],
  ]],
  ["a lease id that is not the §13.1 derivation", [
    [14, "B21", "delivery.delivery_state_receipt: lease_id is 0xb85fa4f5a4941d026067f01bc3471d13ed17b30252f28e525260afd8b25d8fa5; the §13.1 derivation for attempt 1 and holder 0x1b148c5c45a8508c… is 0x48d1b87f911d42906a292ca122287a77a2cae8c46422140b52517e9ffa8d551c"],
  ]],
  ["a redrive's successor cycle that is not the §13.1 derivation", [
    [23, "B21", "response.body.receipt: successor_cycle_id is 0x801657e5994a4212c7af2d1395f72786eab60b07d53fc9c47b069119fa1b7b56; the redrive derivation from the group's tail 0xea58cf47907835d6… is 0x2b0a7755bd77f362c15f0f689c41d8048b7e043851482e39b6088eb992fd7472"],
  ]],
  ["a group whose max_visibility_ms exceeds the stream's", [
    [13, "B22", "response.body.receipt: the group configuration breaks §13.1: max_visibility_ms 120000 exceeds the stream's max_visibility_ms 60000 at height 4"],
    [33, "B22", "response.body.receipt: the group configuration breaks §13.1: max_visibility_ms 120000 exceeds the stream's max_visibility_ms 60000 at height 7"],
  ]],
  ["the stream's first transition not anchored at checkpoint_genesis", [
    [2, "B23", "transition.last_durable_checkpoint is 0x3c48b953acd0b5e5c49f0c14049043b10fa56d50ce69bf346dbe9b6ac80a84e8; a new stream's transition names checkpoint_genesis 0x054f2f576dee66f7f4d1db4185157200480ea3af8685cfa08876e353de370ba5"],
  ]],
  ["a restart naming a checkpoint other than the latest", [
    [26, "B23", "transition.last_durable_checkpoint is 0x3c48b953acd0b5e5c49f0c14049043b10fa56d50ce69bf346dbe9b6ac80a84e8; the latest checkpoint is 0x32bbe5ee10396514d8d0c976f238cf17d979aa6d37f356d7d23998f2844b4f85 (line 23)"],
  ]],
  ["a checkpoint off the checkpoint chain", [
    [23, "B24", "checkpoint.previous_checkpoint is 0x8d42822a76f8205bce86c948a1adbab71a66867aa55ae56213a1e98dedbfe73b; the checkpoint before it (line 16) has digest 0x812c1ad7cc7b0bca52d31c406bc46dcd405d156c4b992028c9f5383ceb35fcf6"],
  ]],
  ["a gap between two checkpoints of one lineage", [
    [23, "B24", "checkpoint.first_sequence is 4; the checkpoint before it ends at 2"],
  ]],
  ["a checkpoint whose ordered_range_root is not its batch's", [
    [16, "B25", "checkpoint.ordered_range_root is 0xf7efebd9c2efe225c251994bafee92112c78cc82e0adef9a8048ae36640ba05a; the batch's records commit to 0x1302f5a75d636ce3296b8413da1edbe7b954f83e188693ba9d5acdb0fe762e76"],
  ]],
  ["two different records delivered at one fast record id", [
    [26, "B25", "two different records at fast id (0, 0): this one and line 8's"],
  ]],
  ["a stream-wide retention floor that regresses", [
    [40, "B26", "first_retained_sequence 1 regresses 2, the floor of the anchor on line 34 with the same comparison key: portable equivocation evidence (§15)"],
    [40, "B26", "anchor.previous_global_receipt is 0x0d2711bac50f5401f370262d4820e31c57a4ad69d00b3da8bce15230bd4fdc49; the global receipt before floor 1 is 0x1be5b443389937d26674eba9be530d6ab9b10408cc3512dde0e0fb3231f407f1"],
  ]],
  ["a retention anchor whose predecessor is not the receipt before its floor", [
    [34, "B26", "anchor.previous_global_receipt is 0x8d42822a76f8205bce86c948a1adbab71a66867aa55ae56213a1e98dedbfe73b; the global receipt before floor 2 is 0x91d464f8b5e72287daf37170fe661fdeedcad4b288223cf5808148a152bfb157"],
  ]],
  ["a group anchor naming no receipt of its group", [
    [35, "B26", "anchor.latest_retained_receipt 0x8d42822a76f8205bce86c948a1adbab71a66867aa55ae56213a1e98dedbfe73b is no receipt of group 0xf7602e358e8f8e8f…'s chain"],
  ]],
  ["a fast anchor whose previous_checkpoint is not the link before its floor", [
    [34, "B26", "anchor.previous_checkpoint is 0x8d42822a76f8205bce86c948a1adbab71a66867aa55ae56213a1e98dedbfe73b; the checkpoint chain's link before sequence 3 of broker epoch 0 is 0x812c1ad7cc7b0bca52d31c406bc46dcd405d156c4b992028c9f5383ceb35fcf6"],
  ]],
  ["a snapshot manifest covering a record its bundled receipt is not for", [
    [41, "B27", "manifest.covered_through is record 6; the bundled receipt (line 31) is record 5"],
  ]],
  ["a snapshot manifest whose receipt is not in the bundle", [
    [41, "B27", "manifest.provider_anchor 0x96aabc4158cc55b46d1b3cc66b35e81c7c9279662b7b0eb6e0a49e6df13cc57f is the digest of no receipt in the bundle: the receipt must be published with the manifest (§15)"],
  ]],
  ["a Fast snapshot manifest bound to an append receipt, not a checkpoint", [
    [36, "B27", "a Fast stream's snapshot covers a checkpoint receipt (§15): provider_anchor names an append receipt"],
  ]],
  ["a receipt from a view older than an authorization change the broker had observed", [
    [43, "B28", "served at height 5, older than height 8 of the global receipt on line 37, by which authorization_generation had changed (1 → 2): the broker had observed the change"],
  ]],
  ["an append at a height where the Active stream's escrow is below the accrued rent", [
    [11, "B29", "the Application receipt Standard(2) served at height 15: escrow_balance 80000 is below the rent accrued through effective_rent_height 15: (15 − last_settled_block 2) × rate_per_block 8000 = 104000"],
  ]],
  ["an append while the stream is Suspended, inside its grace window", [
    [11, "B30", "the Application receipt Standard(2) served at height 20, where the stream is Suspended (in its grace window: deadline 604812, effective rent height 20): a broker serves no mutation then (§6.1)"],
  ]],
  ["an append at the stream's pinned grace deadline", [
    [11, "B30", "the Application receipt Standard(2) served at height 604812, where the stream is Suspended, at or past its pinned grace deadline 604812 (effective rent height 604812): a broker serves no mutation then (§6.1)"],
  ]],];

describe("every kit mutant is refused with exactly its rule and evidence (synthetic chain)", () => {
  it("the table names every mutant once, in the mutator's order (test precondition)", () => {
    expect(REFUSED.map(([name]) => name)).toEqual(MUTANTS.map((m) => m.name));
  });

  it.each(MUTANTS.map((m, i) => [m.rule, m.name, m, REFUSED[i]![1]] as const))("%s: %s", async (rule, _name, mutant, expected) => {
    const report = await verifyBundle(await syntheticBundle(mutant.bundle, mutant), syntheticSource());
    expect(report.failures.map((f) => [f.line, f.rule, f.evidence])).toEqual(expected);
    expect(new Set(report.failures.map((f) => f.rule))).toEqual(new Set([rule]));
  });
});

describe("the reference bundles are accepted, every artifact reaching its checks (synthetic chain)", () => {
  const counts = (s: string): Record<string, number> => Object.fromEntries(s.split(" ").map((kv, i) => [`B${i + 1}`, Number(kv)]));
  it.each([
    ["standard", counts("82 44 18 5 8 5 17 13 19 5 5 8 26 13 13 7 17 10 8 16 10 2 0 0 0 4 4 13 33 11")],
    ["fast", counts("61 18 7 1 4 1 3 8 8 7 1 4 16 8 1 1 8 14 3 0 0 0 5 35 12 1 3 4 3 1")],
    ["econ", counts("16 8 2 2 4 2 4 2 2 2 2 4 4 2 3 2 6 4 2 0 0 0 0 0 0 0 0 1 6 2")],
  ] as const)("%s: no failure, and each rule's number of checks", async (name, checks) => {
    const report = await verifyBundle(await syntheticBundle(name), syntheticSource());
    expect(report.failures).toEqual([]);
    expect(report.checks).toEqual(checks);
  });
});
