// The verifier's walk of a bundle (src/broker-kit/verify.ts) in process, on the synthetic chain:
// every height the bundle names read once, in order, a bounded few at once; the stream's class
// from the chain; each artifact type — a receipt carried alone or in any response that carries
// one, a delivery — reaching its part's checks with the place it came from named in the
// evidence; a response checked against the request it answers (B10, B17, B18) when the bundle
// holds it, and noted when it does not.
import { describe, expect, it } from "vitest";
import type { Artifact, ArtifactOf, Bundle } from "../../src/broker-kit/bundle.js";
import type { ChainSource } from "../../src/broker-kit/chain-source.js";
import { RULE_IDS } from "../../src/broker-kit/rules.js";
import { ZERO32 } from "../../src/broker-kit/signer.js";
import { verifyBundle, type BundleReport } from "../../src/broker-kit/verify.js";
import { toHex, utf8 } from "../../src/bytes.js";
import { STREAMS, syntheticBundle, syntheticSource, type Edit } from "./synthetic-chain.js";

const verify = (b: Bundle, source: ChainSource = syntheticSource()): Promise<BundleReport> => verifyBundle(b, source);
const failures = (r: BundleReport): Array<[number, string, string]> => r.failures.map((f) => [f.line, f.rule, f.evidence]);
const onLine = (r: BundleReport, line: number): Array<[string, string]> => r.failures.filter((f) => f.line === line).map((f) => [f.rule, f.evidence]);
const withEdit = (edit: Edit): ChainSource => syntheticSource(edit);

/** The bundle with the artifact on `line` changed in place (a copy) by `change`, or replaced by what it returns. */
function at(b: Bundle, line: number, change: (a: any) => ArtifactOf | void): Bundle {
  return {
    ...b,
    artifacts: b.artifacts.map((a) => {
      if (a.line !== line) return a;
      const copy = structuredClone(a);
      const replaced = change(copy);
      return (replaced === undefined ? copy : { ...replaced, line }) as Artifact;
    }),
  };
}
const without = (b: Bundle, ...lines: number[]): Bundle => ({ ...b, artifacts: b.artifacts.filter((a) => !lines.includes(a.line)) });

describe("the chain reads: every served height once, in order, at most four at once", () => {
  it("a bundle naming heights 8, 7, 5, 4, 3 (artifacts in reverse) is read at 3, 4, 5, 7, 8, four reads in flight at most", async () => {
    const b = await syntheticBundle("standard");
    const base = syntheticSource();
    let inFlight = 0;
    let most = 0;
    const source: ChainSource = {
      name: base.name,
      context: base.context,
      async at(stream, height) {
        inFlight++;
        most = Math.max(most, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 0));
        try {
          return await base.at(stream, height);
        } finally {
          inFlight--;
        }
      },
    };
    const report = await verify({ ...b, artifacts: [...b.artifacts].reverse() }, source);
    expect(base.reads).toEqual([3n, 4n, 5n, 7n, 8n]);
    expect(most).toBe(4);
    expect(report.deliveryClass).toBe("Standard");
  });

  it("heights named in the order 5, 3, 8, 4, 7 are read in ascending order", async () => {
    const b = await syntheticBundle("standard");
    const source = syntheticSource();
    await verify({ ...b, artifacts: [18, 3, 37, 11, 31].map((line) => b.artifacts.find((a) => a.line === line)!) }, source);
    expect(source.reads).toEqual([3n, 4n, 5n, 7n, 8n]);
  });

  it("an empty bundle: nothing read, no class, no failure, every rule counted zero times", async () => {
    const source = syntheticSource();
    const report = await verify({ streamId: STREAMS.standard, artifacts: [] }, source);
    expect(source.reads).toEqual([]);
    expect(report).toEqual({ stream: STREAMS.standard, deliveryClass: null, artifacts: 0, failures: [], checks: Object.fromEntries(RULE_IDS.map((id) => [id, 0])), notes: [] });
  });

  it("with the stream at none of its heights the class is unknown: every served_at fails B2 and the record-id class checks are skipped", async () => {
    const base = syntheticSource();
    const source: ChainSource = { ...base, at: async (stream, height) => ({ kind: "no-stream", blockHash: ((await base.at(stream, height)) as { view: { blockHash: Uint8Array } }).view.blockHash }) };
    const report = await verify(await syntheticBundle("econ"), source);
    expect(report.deliveryClass).toBeNull();
    expect(report.artifacts).toBe(8);
    expect(failures(report)).toEqual([
      [3, "B2", "challenge.served_at: the stream does not exist at height 3"],
      [5, "B2", "opened.served_at: the stream does not exist at height 3"],
      [7, "B2", "response.body.append_receipt.served_at: the stream does not exist at height 3"],
      [9, "B2", "response.body.append_receipt.served_at: the stream does not exist at height 4"],
    ]);
    expect(report.checks.B17).toBe(2);
  });
});

describe("a response against the request it answers (§7, §10)", () => {
  it("a response whose request is not in the bundle: its receipt is checked, the grant and append behind it are not, and a note says so", async () => {
    const report = await verify(without(await syntheticBundle("econ"), 6, 8));
    expect(failures(report)).toEqual([]);
    expect(report.notes).toEqual([
      "the response on line 7 answers no request in the bundle: its receipts are checked, the grant behind it is not",
      "the response on line 9 answers no request in the bundle: its receipts are checked, the grant behind it is not",
    ]);
    expect([report.checks.B15, report.checks.B10, report.checks.B17, report.checks.B18]).toEqual([3, 0, 4, 0]);
  });

  it("responses whose requests the bundle holds are not noted: the reference bundle's one note is the manifests'", async () => {
    expect((await verify(await syntheticBundle("standard"))).notes).toEqual(["snapshot manifests: application_signature and snapshot_hash are application state, not checked (§15)"]);
  });

  it("B17: an append answered with a record id of the other class is refused", async () => {
    const b = at(await syntheticBundle("econ"), 7, (a) => void (a.value.body.body.record_id = { type: "Fast", provider_epoch: 0n, broker_epoch: 0n, sequence: 0n }));
    expect(failures(await verify(b))).toEqual([[7, "B17", "the append's record id is a Fast id on a Standard stream"]]);
  });

  it("B10 at its boundary: a payload of max_message_bytes passes; one byte over is refused naming the stream's and the grant's limits", async () => {
    const b = await syntheticBundle("econ"); // two appends of 6 bytes, a grant of 1,024
    expect(failures(await verify(b, withEdit((s) => void (s.config.max_message_bytes = 6))))).toEqual([]);
    expect(failures(await verify(b, withEdit((s) => void (s.config.max_message_bytes = 5))))).toEqual([
      [7, "B10", "the append's payload is 6 bytes, above min(the stream's max_message_bytes 5 at height 3, the grant's 1024)"],
      [9, "B10", "the append's payload is 6 bytes, above min(the stream's max_message_bytes 5 at height 4, the grant's 1024)"],
    ]);
  });

  it("B10 with the session's grant not in the bundle: the stream's limit alone", async () => {
    const b = without(await syntheticBundle("econ"), 2);
    const report = await verify(b, withEdit((s) => void (s.config.max_message_bytes = 5)));
    expect(failures(report).filter(([, rule]) => rule === "B10")).toEqual([
      [7, "B10", "the append's payload is 6 bytes, above min(the stream's max_message_bytes 5 at height 3)"],
      [9, "B10", "the append's payload is 6 bytes, above min(the stream's max_message_bytes 5 at height 4)"],
    ]);
    expect(new Set(report.failures.map((f) => f.rule))).toEqual(new Set(["B5", "B10"]));
  });

  it("B18 (§10): one nonzero nonce byte is refused on an unencrypted stream; an encrypted stream takes any nonce", async () => {
    const nonce = new Uint8Array(24);
    nonce[23] = 1;
    const b = await syntheticBundle("econ", { fault: { target: "append-body", index: 1, edit: (body) => void (body.nonce = nonce) } });
    expect(failures(await verify(b))).toEqual([[9, "B18", "the append carries a nonzero nonce on an unencrypted stream (§10: zero for unencrypted streams)"]]);
    expect(failures(await verify(b, withEdit((s) => void (s.encrypted = true))))).toEqual([]);
  });

  it("B18: an append's generation against the stream's at the receipt's view", async () => {
    const b = await syntheticBundle("econ");
    expect(failures(await verify(b, withEdit((s, h) => void (s.encryption_generation = h >= 4n ? 1n : 0n))))).toEqual([
      [9, "B18", "the append declares encryption_generation 0; the stream's at height 4 is 1"],
    ]);
  });

  it("B19 (§8): a client append to a lane after its close is refused, naming the close", async () => {
    const b = await syntheticBundle("standard", { extra: { at: "end", run: async (k) => void k.signer.append(k.sessions["s2"]!, await k.view(8n), { lane: k.lanes["L1"]!, payload: utf8("late"), label: "standard/late" }) } });
    const closed = (b.artifacts.find((a) => a.line === 25)!.value as any).body.lane.lane_id as Uint8Array;
    expect(failures(await verify(b))).toEqual([[43, "B19", `response.body.append_receipt: an append to lane ${toHex(closed)}, closed on line 25`]]);
  });

  it("a delivery-state receipt in a Nack or Extend response is checked as in an Ack's: the chain and counts unchanged", async () => {
    const b = await syntheticBundle("standard");
    const reference = await verify(b);
    for (const type of ["Nack", "Extend"]) {
      const report = await verify(at(b, 16, (a) => void (a.value.body.type = type)));
      expect([type, failures(report), report.checks]).toEqual([type, [], reference.checks]);
    }
  });
});

describe("a receipt carried alone, and a delivery", () => {
  it("an AppendReceiptV1 alone is checked and chained as in its response, its faults under `receipt`", async () => {
    const b = await syntheticBundle("standard");
    const receipt = (a: any) => ({ type: "AppendReceiptV1", value: a.value.body.body.append_receipt }) as ArtifactOf;
    const report = await verify(at(b, 7, receipt));
    expect(failures(report)).toEqual([]);
    expect([report.checks.B15, report.checks.B16]).toEqual([13, 7]);
    const far = await verify(at(b, 7, (a) => ({ type: "AppendReceiptV1", value: { ...a.value.body.body.append_receipt, served_at: { ...a.value.body.body.append_receipt.served_at, height: 9n } } })));
    expect(onLine(far, 7)).toEqual([["B2", "receipt.served_at names height 9, at which this chain has no block"]]);
  });

  it("a DeliveryStateUpdateV1 is checked with its state (B21), a GroupStateUpdateV1 with its configuration (B22), their faults under `receipt`", async () => {
    const b = await syntheticBundle("standard");
    const reference = await verify(b);
    const state = (a: any) => ({ type: "DeliveryStateUpdateV1", value: { state: a.value.body.body.state, receipt: a.value.body.body.receipt } }) as ArtifactOf;
    const config = (a: any) => ({ type: "GroupStateUpdateV1", value: { config: a.value.body.body.config, receipt: a.value.body.body.receipt } }) as ArtifactOf;
    const alone = await verify(at(at(b, 16, state), 33, config));
    expect(failures(alone)).toEqual([]);
    expect([alone.checks.B20, alone.checks.B21, alone.checks.B22]).toEqual([reference.checks.B20, reference.checks.B21, reference.checks.B22]);
    const wide = await verify(at(b, 33, (a) => {
      const c = config(a);
      (c.value as any).config.max_visibility_ms = 120_000n;
      return c;
    }));
    expect(failures(wide)).toEqual([[33, "B22", "receipt: the group configuration breaks §13.1: max_visibility_ms 120000 exceeds the stream's max_visibility_ms 60000 at height 7"]]);
    const cycle = await verify(at(b, 16, (a) => {
      const s = state(a);
      (s.value as any).state.delivery_cycle_id = ZERO32;
      return s;
    }));
    expect(onLine(cycle, 16)).toEqual([
      ["B21", "receipt: delivery_cycle_id 0x0000000000000000000000000000000000000000000000000000000000000000 is neither record 0's initial cycle 0x2dabce0391623e8feed55a794ba7e649da9fb1be179d0fe520e8201554e7a392 nor a successor a redrive created"],
      ["B21", "receipt: lease_id 0x48d1b87f911d42906a292ca122287a77a2cae8c46422140b52517e9ffa8d551c is no lease issued earlier for record 0, this cycle and attempt 1"],
    ]);
  });

  it("a delivery's header names the bundle's stream (B1); a receipt it carries that the bundle has not shown yet is checked under `delivery.append_receipt`", async () => {
    const b = await syntheticBundle("standard");
    const other = await verify(at(b, 14, (a) => void (a.value.header.stream_id = STREAMS.fast)));
    expect(failures(other)).toEqual([[14, "B1", `delivery.header.stream_id is ${toHex(STREAMS.fast)}, not the bundle's stream ${toHex(STREAMS.standard)}`]]);
    const far = await verify(at(b, 14, (a) => void (a.value.append_receipt.served_at = { ...a.value.append_receipt.served_at, height: 9n })));
    expect(onLine(far, 14).filter(([rule]) => rule === "B2")).toEqual([["B2", "delivery.append_receipt.served_at names height 9, at which this chain has no block"]]);
  });

  it("B24: a durable watermark is checked in a delivery and in a fast append's response, each named", async () => {
    const b = await syntheticBundle("fast");
    const wrong = (a: any, w: any) => void (w.last_durable_sequence = 5n);
    const report = await verify(at(at(b, 13, (a) => wrong(a, a.value.durable_watermark)), 8, (a) => wrong(a, a.value.body.body.durable_watermark)));
    expect(failures(report)).toEqual([
      [8, "B24", "response.body.durable_watermark: the anchor is checkpoint_genesis but last_durable_sequence is 5"],
      [13, "B24", "delivery.durable_watermark: the anchor is checkpoint_genesis but last_durable_sequence is 5"],
    ]);
  });
});
