// The read views of src/engine/chain.ts (accounts(), streams(), providers()) list only their own
// records. Cowboy state holds other prefixes with the same key layouts (Actor, ActorKvCount… are
// address-keyed like Account; Library and ActorLibPin are address ‖ slot like ActorStorage), and
// a pre-state from elsewhere (t8n, Chain.resume) may carry them: a view that went by the layout
// alone would list them, or throw decoding them.
import { describe, expect, it } from "vitest";
import { concatBytes, utf8 } from "../../src/bytes.js";
import { encode } from "../../src/codec/core.js";
import * as S from "../../src/codec/schema.js";
import { REGISTRY_ADDRESS } from "../../src/engine/layout.js";
import { actorKey, actorKvCountKey, actorLibPinKey, libraryKey } from "../../state/kv/keys.js";
import { encodeStateValue } from "../../state/kv/value.js";
import { cbqs, ix, OWNER, PROVIDER, TestChain, writeOutOfBand } from "./harness.js";

describe("Chain read views list only their own prefix", () => {
  it("accounts() skips address-keyed records of other prefixes (Actor, ActorKvCount), even when their value decodes as an account", () => {
    const t = new TestChain();
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    const before = t.chain.accounts();
    expect(before.length).toBeGreaterThan(0);
    const stranger = new Uint8Array(20).fill(0x33);
    writeOutOfBand(t, actorKey(stranger), encodeStateValue({ kind: "Account", nonce: 7n, balance: 9n }));
    writeOutOfBand(t, actorKvCountKey(OWNER), encodeStateValue({ kind: "Account", nonce: 1n, balance: 1n }));
    expect(t.chain.accounts()).toEqual(before);
    expect(t.chain.account(stranger)).toEqual({ nonce: 0n, balance: 0n });
  });

  it("streams() and providers() skip registry-shaped Library and ActorLibPin slots under 0x17", () => {
    const t = new TestChain();
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    t.ok(cbqs(OWNER, ix.createStream({ initial_escrow: 1_000_000n })));
    const streams = t.chain.streams();
    const providers = t.chain.providers();
    expect(streams.map((s) => s.stream_id)).toEqual([t.streamId()]);
    expect(providers.map((p) => p.provider)).toEqual([PROVIDER]);
    const slot = (bytes: Uint8Array) => encodeStateValue({ kind: "StorageSlot", bytes });
    const otherId = new Uint8Array(32).fill(0x44);
    const otherProvider = new Uint8Array(20).fill(0x55);
    writeOutOfBand(t, libraryKey(REGISTRY_ADDRESS, otherId), slot(encode(S.StreamRecordV1, { ...streams[0]!, stream_id: otherId })));
    writeOutOfBand(t, actorLibPinKey(REGISTRY_ADDRESS, otherId), slot(encode(S.StreamRecordV1, { ...streams[0]!, stream_id: otherId })));
    writeOutOfBand(
      t,
      libraryKey(REGISTRY_ADDRESS, concatBytes(utf8("P"), otherProvider)),
      slot(encode(S.ProviderRecordV1, { ...providers[0]!, provider: otherProvider })),
    );
    expect(t.chain.streams()).toEqual(streams);
    expect(t.chain.providers()).toEqual(providers);
  });
});
