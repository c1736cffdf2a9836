import { describe, expect, it } from "vitest";
import type { CbqsInstructionV1, UpdateProviderArgsV1 } from "../../src/codec/types.js";
import { maxEndpoints } from "../../src/gas/builder.js";
import { cbqs, genesisConfig, gov, ix, OPEN_ADMISSION, OTHER, OWNER, PROVIDER, pubKey, seed, snapshot, TestChain } from "./harness.js";

const update = (over: Partial<UpdateProviderArgsV1>): CbqsInstructionV1 => ({
  type: "UpdateProvider",
  args: { endpoints: null, signing_key: null, quote_key: null, base_rate_admission: null, metadata_hash: null, ...over },
});
const status = (s: "Active" | "Draining" | "Deregistered"): CbqsInstructionV1 => ({ type: "SetProviderStatus", args: { status: s } });

describe("§4.3/§5 provider instructions", () => {
  it("§5 RegisterProvider creates an Active record for the sender with zero reservations, provider_epoch-free, registered_block = height", () => {
    const t = new TestChain();
    const o = t.ok(cbqs(PROVIDER, ix.registerProvider()), 4n);
    expect(o.events).toEqual([{ emitter: expect.any(Uint8Array), topic: "cbqs.provider.registered", payload: PROVIDER }]);
    const p = t.chain.provider(PROVIDER)!;
    expect(p.status).toBe("Active");
    expect(p.registered_block).toBe(4n);
    expect(p.live_assigned_streams).toBe(0n);
    expect(p.base_rate_reserved.reserved_streams).toBe(0n);
    expect(p.chain_instance_id).toEqual(t.chain.chainInstanceId);
    expect(t.tx(cbqs(PROVIDER, ix.registerProvider())).error!.name).toBe("ProviderAlreadyRegistered");
  });

  it("§4.3 endpoint admission rejects a private address and checks the LIVE endpoint bounds", () => {
    const t = new TestChain();
    const bad = ix.registerProvider();
    if (bad.type !== "RegisterProvider") throw new Error();
    bad.args.endpoints = [{ transport: "Https", uri: "https://10.0.0.1/stream" }];
    expect(t.tx(cbqs(PROVIDER, bad)).error!.name).toBe("EndpointRejected");
    const two = ix.registerProvider();
    if (two.type !== "RegisterProvider") throw new Error();
    two.args.endpoints = [
      { transport: "Https", uri: "https://a.example" },
      { transport: "WebSocketTls", uri: "wss://b.example/s" },
    ];
    t.ok(gov({ type: "SetParam", name: "cbqs.max_provider_endpoints", value: 1n }));
    expect(t.tx(cbqs(PROVIDER, two)).error!.name).toBe("EndpointRejected");
    t.ok(gov({ type: "SetParam", name: "cbqs.max_provider_endpoints", value: 2n }));
    expect(t.tx(cbqs(PROVIDER, two)).status).toBe("ok");
  });

  it("§4.3 rule 1 / §18 admission bound: each URI's byte limit is the LIVE cbqs.max_provider_endpoint_uri_bytes, from genesis and after SetParam/SetParams, in both directions", () => {
    const uri = (bytes: number) => maxEndpoints(1, bytes);
    const register = (bytes: number): CbqsInstructionV1 => {
      const i = ix.registerProvider();
      if (i.type !== "RegisterProvider") throw new Error();
      return { ...i, args: { ...i.args, endpoints: uri(bytes) } };
    };
    const uriRule = (bytes: number) => `§4.3 rule 1: URI is more than ${bytes} bytes`;
    expect(new TextEncoder().encode(uri(101)[0]!.uri)).toHaveLength(101);

    // A genesis value below the §18 default binds RegisterProvider at once.
    const t = new TestChain(genesisConfig({ "cbqs.max_provider_endpoint_uri_bytes": 100n }));
    const refused = t.tx(cbqs(PROVIDER, register(101)));
    expect(refused.error!.name).toBe("EndpointRejected");
    expect(refused.error!.message).toContain(uriRule(100));
    t.ok(cbqs(PROVIDER, register(100)));

    // Raised by governance: a URI the old value refused is admitted.
    expect(t.tx(cbqs(PROVIDER, update({ endpoints: uri(101) }))).error!.message).toContain(uriRule(100));
    t.ok(gov({ type: "SetParam", name: "cbqs.max_provider_endpoint_uri_bytes", value: 101n }));
    t.ok(cbqs(PROVIDER, update({ endpoints: uri(101) })));
    expect(t.chain.provider(PROVIDER)!.endpoints).toEqual(uri(101));
    expect(t.tx(cbqs(PROVIDER, update({ endpoints: uri(102) }))).error!.message).toContain(uriRule(101));

    // Lowered by governance: the next admission refuses what the old value allowed; the record
    // already accepted is not re-examined (§18 "re-examines nothing already accepted").
    t.ok(gov({ type: "SetParams", values: [{ name: "cbqs.max_provider_endpoint_uri_bytes", value: 64n }] }));
    expect(t.chain.params().get("cbqs.max_provider_endpoint_uri_bytes")).toBe(64n);
    expect(t.tx(cbqs(PROVIDER, update({ endpoints: uri(65) }))).error!.message).toContain(uriRule(64));
    expect(t.tx(cbqs(OTHER, register(65))).error!.message).toContain(uriRule(64));
    expect(t.chain.provider(PROVIDER)!.endpoints).toEqual(uri(101));
    t.ok(cbqs(PROVIDER, update({ metadata_hash: new Uint8Array(32).fill(9) })));
    t.ok(cbqs(PROVIDER, update({ endpoints: uri(64) })));
    t.ok(cbqs(OTHER, register(64)));

    // Back at the §18 default (= its Maximum), a 2,048-byte URI is admitted again.
    t.ok(gov({ type: "SetParam", name: "cbqs.max_provider_endpoint_uri_bytes", value: 2_048n }));
    t.ok(cbqs(PROVIDER, update({ endpoints: uri(2_048) })));
  });

  it("§5 UpdateProvider with every field absent is rejected; a key change is prospective (streams keep the snapshot)", () => {
    const t = new TestChain();
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    expect(t.tx(cbqs(PROVIDER, update({}))).error!.name).toBe("NoOpRejected");
    t.ok(cbqs(OWNER, ix.createStream({ initial_escrow: 10n ** 9n })));
    const snap = t.chain.stream(t.streamId())!.provider_signing_key;
    const o = t.ok(cbqs(PROVIDER, update({ signing_key: pubKey(seed(99)) })));
    expect(o.events.map((e) => e.topic)).toEqual(["cbqs.provider.updated"]);
    expect(t.chain.provider(PROVIDER)!.signing_key).toEqual(pubKey(seed(99)));
    expect(t.chain.stream(t.streamId())!.provider_signing_key).toEqual(snap);
    expect(t.tx(cbqs(OWNER, update({ metadata_hash: new Uint8Array(32) }))).error!.name).toBe("ProviderNotFound");
  });

  it("§4.3 accepts_new may be turned off any time, but no cap may drop below its current reservation", () => {
    const t = new TestChain();
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    t.ok(cbqs(OWNER, ix.createStream()));
    const reserved = t.chain.provider(PROVIDER)!.base_rate_reserved;
    expect(reserved.reserved_streams).toBe(1n);
    const low = { ...OPEN_ADMISSION, max_total_retained_bytes: reserved.retained_bytes - 1n };
    expect(t.tx(cbqs(PROVIDER, update({ base_rate_admission: low }))).error!.name).toBe("CapBelowReservation");
    const exact = { ...OPEN_ADMISSION, accepts_new: false, max_active_streams: 1n, max_total_retained_bytes: reserved.retained_bytes };
    expect(t.tx(cbqs(PROVIDER, update({ base_rate_admission: exact }))).status).toBe("ok");
  });

  it("§4.3/§19 SetProviderStatus: same status is a rejected no-op; Deregistered only with live_assigned_streams = 0", () => {
    const t = new TestChain();
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    expect(t.tx(cbqs(PROVIDER, status("Active"))).error!.name).toBe("NoOpRejected");
    t.ok(cbqs(OWNER, ix.createStream()));
    const before = snapshot(t);
    expect(t.tx(cbqs(PROVIDER, status("Deregistered"))).error!.name).toBe("ProviderHasLiveStreams");
    expect(snapshot(t)).toEqual(before);
    const d = t.ok(cbqs(PROVIDER, status("Draining")));
    expect(d.events.map((e) => e.topic)).toEqual(["cbqs.provider.status_changed"]);
    // §4.3 a Draining provider cannot accept new streams
    expect(t.tx(cbqs(OWNER, ix.createStream({ owner_nonce: 1n }))).error!.name).toBe("ProviderNotActive");
    t.ok(cbqs(OWNER, ix.close(t.streamId())));
    expect(t.tx(cbqs(PROVIDER, status("Deregistered"))).status).toBe("ok");
  });

  it("§18.1 SetProviderStatus reads exactly pause + singleton + provider (3) and writes 1", () => {
    const t = new TestChain();
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    const o = t.ok(cbqs(PROVIDER, status("Draining")));
    expect([o.reads, o.writes]).toEqual([3, 1]);
    const r = new TestChain().ok(cbqs(PROVIDER, ix.registerProvider()));
    expect([r.reads, r.writes]).toEqual([28, 1]);
  });
});

describe("§4.3/§5 provider refusals name what failed", () => {
  it("§4.3 each cap that would drop below its reservation is named, with both numbers; each at exactly its reservation is accepted", () => {
    const t = new TestChain();
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    t.ok(cbqs(OWNER, ix.createStream()));
    const r = t.chain.provider(PROVIDER)!.base_rate_reserved;
    const caps = [
      ["max_active_streams", r.reserved_streams],
      ["max_total_retained_bytes", r.retained_bytes],
      ["max_total_append_bytes_per_sec", r.append_bytes_per_sec],
      ["max_total_delivered_bytes_per_sec", r.delivered_bytes_per_sec],
    ] as const;
    for (const [name, reserved] of caps) {
      const before = snapshot(t);
      const e = t.tx(cbqs(PROVIDER, update({ base_rate_admission: { ...OPEN_ADMISSION, [name]: reserved - 1n } }))).error;
      expect([e?.name, e?.message]).toEqual(["CapBelowReservation", `${name} ${reserved - 1n} is below the current reservation ${reserved}`]);
      expect(snapshot(t)).toEqual(before);
    }
    const exact = Object.fromEntries(caps.map(([name, reserved]) => [name, reserved]));
    t.ok(cbqs(PROVIDER, update({ base_rate_admission: { ...OPEN_ADMISSION, ...exact } })));
  });

  it("§5 SetProviderStatus from an account with no provider record is ProviderNotFound, saying so", () => {
    const t = new TestChain();
    const e = t.tx(cbqs(OWNER, status("Draining"))).error;
    expect([e?.name, e?.message]).toEqual(["ProviderNotFound", "the sender has no provider record"]);
  });
});
