// The consumer-group checks (src/broker-kit/check-groups.ts; CIP-39 §11.2, §13.1, §14.2) in
// process, on the kit's standard bundle signed on the synthetic chain (its group G: created on
// line 13, a lease and ack, a lease, reject and redrive, updated on 33, anchored on 35, deleted
// on 39) or a script of the test's own: each group's chain from its genesis or an anchor to its
// deletion (B20), cycle and lease ids derived and leases named as issued (B21), the §13.1
// configuration inequalities each at its boundary (B22), group mutations economically available.
import { describe, expect, it } from "vitest";
import type { Bundle } from "../../src/broker-kit/bundle.js";
import { verbBits } from "../../src/broker-kit/check-sessions.js";
import { KIT_KEYS, KIT_START_MS } from "../../src/broker-kit/kit.js";
import { label32, ZERO32 } from "../../src/broker-kit/signer.js";
import { verifyBundle, type BundleReport } from "../../src/broker-kit/verify.js";
import { toHex, utf8 } from "../../src/bytes.js";
import { bundleOf, servedAt, signerFor, STREAMS, syntheticBundle, syntheticSource, type Edit } from "./synthetic-chain.js";

const failures = (r: BundleReport): Array<[number, string, string]> => r.failures.map((f) => [f.line, f.rule, f.evidence]);
const verify = (b: Bundle, edit?: Edit): Promise<BundleReport> => verifyBundle(b, syntheticSource(edit));

function at(b: Bundle, line: number, change: (value: any) => void): Bundle {
  return { ...b, artifacts: b.artifacts.map((a) => (a.line === line ? (() => { const c = structuredClone(a); change(c.value); return c; })() : a)) };
}
const without = (b: Bundle, ...lines: number[]): Bundle => ({ ...b, artifacts: b.artifacts.filter((a) => !lines.includes(a.line)) });
const only = (b: Bundle, ...lines: number[]): Bundle => ({ ...b, artifacts: lines.map((l) => b.artifacts.find((a) => a.line === l)!) });
const GROUP = `group ${toHex(label32("group/standard/g")).slice(0, 18)}… on lane ${toHex(ZERO32).slice(0, 18)}…`;

describe("B20 (§11.2, §14.2): each group's receipt chain", () => {
  it("a group's first receipt is its GroupCreate, off its group genesis", async () => {
    const report = await verify(without(await syntheticBundle("standard"), 13));
    expect(failures(report).filter(([, rule]) => rule === "B20")).toEqual([
      [14, "B20", `delivery.delivery_state_receipt.previous_group_receipt is 0xa2321a8228eb4e97be7717f21852f017c64540815f21a43ceae3ec1f686c328d; ${GROUP} starts at its group genesis 0xa99ed52dcbcfdd8d145e647a6bab9aade67dba7cc492191622e1366c0a624fac`],
      [14, "B20", `delivery.delivery_state_receipt: ${GROUP}'s first receipt is a LeaseIssue, not its GroupCreate`],
    ]);
  });

  it("a delivery-state receipt carried twice (a response, then a DeliveryStateUpdateV1) is one receipt, checked once", async () => {
    const b = await syntheticBundle("standard");
    const ack = b.artifacts.find((a) => a.line === 16)!.value as any;
    const again = { line: 16.5, type: "DeliveryStateUpdateV1", value: { state: ack.body.body.state, receipt: ack.body.body.receipt } } as any;
    const twice = { ...b, artifacts: b.artifacts.flatMap((a) => (a.line === 16 ? [a, again] : [a])) };
    const [one, two] = [await verify(b), await verify(twice)];
    expect(failures(two)).toEqual([]);
    expect(two.checks).toEqual(one.checks);
  });

  it("a delivery-state receipt names the bundle's stream (B1), under the place it came from", async () => {
    const b = await syntheticBundle("standard", { fault: { target: "delivery-receipt", index: 0, edit: (r: { stream_id: Uint8Array }) => void (r.stream_id = STREAMS.fast) } });
    expect(failures(await verify(b)).filter(([, rule]) => rule === "B1")).toEqual([
      [13, "B1", `response.body.receipt.stream_id is ${toHex(STREAMS.fast)}, not the bundle's stream ${toHex(STREAMS.standard)}`],
    ]);
  });

  it("after its GroupDelete a group takes no receipt, and the evidence names its first deletion", async () => {
    const b = await syntheticBundle("standard", {
      extra: {
        at: "end",
        run: async (k) => {
          const v8 = await k.view(8n);
          k.signer.deleteGroup(k.sessions["s2"]!, v8, k.groups["G"]!);
          k.signer.createGroup(k.sessions["s2"]!, v8, ZERO32, "standard/g", { type: "Head" }, k.groups["G"]);
        },
      },
    });
    expect(failures(await verify(b))).toEqual([
      [43, "B20", `response.body.receipt: a GroupDelete of ${GROUP} after its GroupDelete on line 39: the (stream, lane, group) tuple is never reused (§11.2)`],
      [45, "B20", `response.body.receipt: a GroupCreate of ${GROUP} after its GroupDelete on line 39: the (stream, lane, group) tuple is never reused (§11.2)`],
    ]);
  });

  it("a chain may start at a group anchor: its first receipt is the one the anchor names; named its GroupDelete, a GroupCreate after is refused", async () => {
    const b = await syntheticBundle("standard", {
      extra: {
        at: "end",
        run: async (k) => {
          const v8 = await k.view(8n);
          const g = k.groups["G"]!;
          k.signer.groupAnchor(v8, g, g.receipts.at(-1)!);
          k.signer.createGroup(k.sessions["s2"]!, v8, ZERO32, "standard/g", { type: "Head" }, g);
        },
      },
    });
    expect(failures(await verify(only(b, 42, 39, 44)))).toEqual([
      [44, "B20", `response.body.receipt: a GroupCreate of ${GROUP} after its GroupDelete on line 39: the (stream, lane, group) tuple is never reused (§11.2)`],
    ]);
  });

  it("of several group anchors before the group's first receipt, the chain starts at the last", async () => {
    const b = await syntheticBundle("standard", {
      extra: {
        at: "end",
        run: async (k) => void k.signer.groupAnchor(await k.view(8n), k.groups["G"]!, k.groups["G"]!.receipts[6]!),
      },
    });
    // Anchors on lines 35 (naming the lease on 14) and 42 (naming the update on 33), then the update and the deletion.
    const report = await verify(only(b, 35, 42, 33, 39));
    expect(failures(report)).toEqual([]);
    // The update starts the chain (one B20 check), the deletion follows it (two).
    expect(report.checks.B20).toBe(3);
  });
});

/** A group script of the test's own on the standard stream: a record leased, rejected, redriven, leased again on its successor cycle and acked. */
function redriveAndLeaseAgain(): Bundle {
  const s = signerFor("standard");
  const v = servedAt(4n);
  const grant = s.grant({ holderSeed: KIT_KEYS.holder.seed, label: "groups/own", verbs: verbBits("APPEND", "ACKNOWLEDGE", "GROUP_ADMIN", "REDRIVE"), authorizationGeneration: 1n, notBeforeMs: KIT_START_MS - 1_000n, expiresAtMs: KIT_START_MS + 3_600_000n });
  const session = s.openSession(grant, KIT_KEYS.holder.seed, servedAt(3n), "groups/own");
  const record = s.append(session, v, { lane: ZERO32, payload: utf8("r0"), label: "groups/r0" });
  const g = s.createGroup(session, v, ZERO32, "groups/g", { type: "Head" });
  const first = s.deliverLease(v, g, record, KIT_KEYS.holder.seed, { subscription: "groups/g" });
  s.reject(session, v, first, "poison");
  const successor = s.redrive(session, v, first);
  const again = s.deliverLease(v, g, record, KIT_KEYS.holder.seed, { cycle: successor, attempt: 1, subscription: "groups/g" });
  s.ack(session, v, again);
  return bundleOf(STREAMS.standard, s.artifacts);
}

describe("B26 (§15): a group anchor names a receipt of its group's chain", () => {
  it("its first receipt, the GroupCreate, is one", async () => {
    const b = await syntheticBundle("standard", { extra: { at: "end", run: async (k) => void k.signer.groupAnchor(await k.view(8n), k.groups["G"]!, k.groups["G"]!.receipts[0]!) } });
    expect(failures(await verify(b))).toEqual([]);
  });
});

describe("B21 (§13.1): cycle and lease ids", () => {
  it("a cycle a redrive created is known from then on: its lease and ack pass", async () => {
    const b = redriveAndLeaseAgain();
    expect(b.artifacts.map((a) => a.type).slice(-3)).toEqual(["RecordDeliveryV1", "AuthenticatedRequestV1", "CbqsResponseV1"]);
    expect(failures(await verify(b))).toEqual([]);
    // The ack naming the record's first cycle, on which the lease was not issued.
    const firstCycle = (b.artifacts.find((a) => a.type === "RecordDeliveryV1")!.value as any).lease.reference.delivery_cycle_id as Uint8Array;
    const last = b.artifacts.at(-1)!.line;
    const report = await verify(at(b, last, (v) => void (v.body.body.state.delivery_cycle_id = firstCycle)));
    expect(failures(report).map(([line, rule, evidence]) => [line - last, rule, evidence.replace(/0x[0-9a-f]{64}/, "L")])).toEqual([[0, "B21", "response.body.receipt: lease_id L is no lease issued earlier for record 0, this cycle and attempt 1"]]);
  });

  it("an ack names a lease issued earlier for its record, cycle and attempt", async () => {
    const b = await syntheticBundle("standard");
    const attempt = await verify(at(b, 16, (v) => void (v.body.body.state.attempt = 2)));
    expect(failures(attempt)).toEqual([[16, "B21", "response.body.receipt: lease_id 0x48d1b87f911d42906a292ca122287a77a2cae8c46422140b52517e9ffa8d551c is no lease issued earlier for record 0, this cycle and attempt 2"]]);
    const record = await verify(at(b, 16, (v) => void (v.body.body.state.record_id = { provider_epoch: 0n, sequence: 2n })));
    expect(failures(record)).toEqual([
      [16, "B21", "response.body.receipt: delivery_cycle_id 0x2dabce0391623e8feed55a794ba7e649da9fb1be179d0fe520e8201554e7a392 is neither record 2's initial cycle 0x89f2b65782c0d2eefa144b5bc3a76d1c8171e260e40f86122eb92054adb660aa nor a successor a redrive created"],
      [16, "B21", "response.body.receipt: lease_id 0x48d1b87f911d42906a292ca122287a77a2cae8c46422140b52517e9ffa8d551c is no lease issued earlier for record 2, this cycle and attempt 1"],
    ]);
    const unissued = await verify(at(b, 16, (v) => void (v.body.body.state.lease_id = label32("never-issued"))));
    expect(failures(unissued)).toEqual([[16, "B21", `response.body.receipt: lease_id ${toHex(label32("never-issued"))} is no lease issued earlier for record 0, this cycle and attempt 1`]]);
  });

  it("on a chain started at an anchor, cycles and leases from before the anchor are not judged", async () => {
    const b = await syntheticBundle("standard", { extra: { at: "end", run: async (k) => void k.signer.groupAnchor(await k.view(8n), k.groups["G"]!, k.groups["G"]!.receipts[2]!) } });
    // From the ack on line 16: the lease on 19, the reject on 21, the redrive on 23.
    const cut = at(only(b, 42, 16, 19, 21, 23), 19, (v) => void (v.append_receipt = null));
    expect(failures(await verify(cut))).toEqual([]);
    expect(failures(await verify(at(cut, 21, (v) => void (v.body.body.state.delivery_cycle_id = ZERO32))))).toEqual([]);
  });
});

describe("B22 (§13.1): the group configuration against the stream's at the receipt's view", () => {
  // The group created on line 13, at height 4: the stream's max_visibility_ms 60,000 and retention_ms 3,600,000.
  const create = 13;
  const cases: Array<[string, bigint | number, bigint | number, string]> = [
    ["visibility_timeout_ms", 1n, 0n, "visibility_timeout_ms is 0"],
    ["visibility_timeout_ms", 60_000n, 60_001n, "visibility_timeout_ms 60001 exceeds max_visibility_ms 60000"],
    ["max_visibility_ms", 60_000n, 60_001n, "max_visibility_ms 60001 exceeds the stream's max_visibility_ms 60000 at height 4"],
    ["max_attempts", 1, 0, "max_attempts 0 is outside 1..=100"],
    ["max_attempts", 100, 101, "max_attempts 101 is outside 1..=100"],
    ["max_in_flight", 1, 0, "max_in_flight is 0"],
    ["record_deadline_ms", 1n, 0n, "record_deadline_ms is 0"],
    ["dead_letter_ttl_ms", 3_600_000n, 3_600_001n, "dead_letter_ttl_ms 3600001 exceeds the stream's retention_ms 3600000"],
  ];
  it.each(cases)("%s: %s passes, %s is refused", async (field, good, bad, evidence) => {
    const b = await syntheticBundle("standard");
    const set = (value: bigint | number) => at(b, create, (v) => void (v.body.body.config[field] = value));
    expect(failures(await verify(set(good)))).toEqual([]);
    expect(failures(await verify(set(bad)))).toEqual([[create, "B22", `response.body.receipt: the group configuration breaks §13.1: ${evidence}`]]);
  });

  it("retention_pin_until_ms: up to committed_at_ms + retention_ms passes, one more is refused", async () => {
    const b = await syntheticBundle("standard");
    const committed = (b.artifacts.find((a) => a.line === create)!.value as any).body.body.receipt.committed_at_ms as bigint;
    const pin = (value: bigint) => at(b, create, (v) => void (v.body.body.config.retention_pin_until_ms = value));
    expect(failures(await verify(pin(committed + 3_600_000n)))).toEqual([]);
    expect(failures(await verify(pin(committed + 3_600_001n)))).toEqual([
      [create, "B22", `response.body.receipt: the group configuration breaks §13.1: retention_pin_until_ms ${committed + 3_600_001n} is beyond committed_at_ms ${committed} + retention_ms 3600000`],
    ]);
  });

  it("the first broken inequality is named, in §13.1's order", async () => {
    const b = at(await syntheticBundle("standard"), create, (v) => void Object.assign(v.body.body.config, { max_in_flight: 0, record_deadline_ms: 0n }));
    expect(failures(await verify(b))).toEqual([[create, "B22", "response.body.receipt: the group configuration breaks §13.1: max_in_flight is 0"]]);
  });
});

describe("B29, B30 (§6.1): group mutations are served only while the stream is available", () => {
  it("on a Suspended stream the GroupCreate, GroupUpdate, GroupDelete and Redrive receipts are refused; leases, acks and rejects are not mutations", async () => {
    const report = await verify(await syntheticBundle("standard"), (s) => void (s.status = "Suspended"));
    const suspended = (what: string, h: bigint) => `the ${what} receipt served at height ${h}, where the stream is Suspended: a broker serves no mutation then (§6.1)`;
    expect(failures(report).filter(([line, rule]) => rule === "B30" && [13, 14, 16, 19, 21, 23, 33, 39].includes(line))).toEqual([
      [13, "B30", suspended("GroupCreate", 4n)],
      [23, "B30", suspended("Redrive", 5n)],
      [33, "B30", suspended("GroupUpdate", 7n)],
      [39, "B30", suspended("GroupDelete", 8n)],
    ]);
  });
});

describe("B28 (§14): each group's receipts are one chain of views", () => {
  it("a group receipt from a view older than a watched change on its own chain is refused, naming the group's chain", async () => {
    const b = await syntheticBundle("standard", {
      extra: {
        at: "end",
        run: async (k) => {
          const g2 = k.signer.createGroup(k.sessions["s2"]!, await k.view(8n), ZERO32, "standard/g2", { type: "Head" });
          k.signer.updateGroup(k.sessions["s2"]!, await k.view(7n), g2, { visibility_timeout_ms: 20_000n });
        },
      },
    });
    const report = await verify(b, (s, h) => void (s.encryption_generation = h >= 8n ? 1n : 0n));
    const g2 = toHex(label32("group/standard/g2")).slice(0, 18);
    expect(failures(report).filter(([, rule]) => rule === "B28")).toEqual([
      [45, "B28", `served at height 7, older than height 8 of the group ${g2}… receipt on line 43, by which encryption_generation had changed (0 → 1): the broker had observed the change`],
    ]);
  });
});
