// The `cbqs decode|encode|derive|types` command functions (called directly, no build needed).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { decodeCommand, deriveCommand, encodeCommand, typesCommand } from "../../src/cli/codec.js";
import { UsageError } from "../../src/cli/common.js";
import { InputError } from "../../src/json/read.js";
import { DecodeError } from "../../src/codec/index.js";

const k = (hex: string): string => "0x" + Buffer.from(keccak_256(Buffer.from(hex, "hex"))).toString("hex");
const ascii = (s: string): string => Buffer.from(s).toString("hex");

describe("cbqs codec CLI", () => {
  it("§5: encode then decode an instruction round-trips through canonical JSON", () => {
    const hex = encodeCommand("CbqsInstructionV1", '{"TopUpStream":{"stream_id":"0x' + "ab".repeat(32) + '","amount":"5"}}', false);
    expect(hex).toBe("0x0106" + "ab".repeat(32) + "0".repeat(31) + "5");
    expect(JSON.parse(decodeCommand("CbqsInstructionV1", hex, false))).toEqual({
      TopUpStream: { stream_id: "0x" + "ab".repeat(32), amount: "5" },
    });
    expect(JSON.parse(decodeCommand("CbqsInstructionV1", hex, true)).type).toBe("CbqsInstructionV1");
    expect(JSON.parse(encodeCommand("SetProviderStatusArgsV1", '{"status":"Active"}', true))).toEqual({
      type: "SetProviderStatusArgsV1", hex: "0x01", length: 1,
    });
  });

  it("encode accepts @file.json", () => {
    const dir = mkdtempSync(join(tmpdir(), "cbqs-codec-"));
    const file = join(dir, "v.json");
    writeFileSync(file, '{"status":"Deregistered"}');
    expect(encodeCommand("SetProviderStatusArgsV1", "@" + file, false)).toBe("0x03");
  });

  it("bad input is a UsageError / DecodeError / InputError (one line, exit 2 in src/cli.ts)", () => {
    expect(() => decodeCommand("Nope", "0x00", false)).toThrow(UsageError);
    expect(() => decodeCommand("CbqsInstructionV1", "0x010", false)).toThrow(UsageError);
    expect(() => decodeCommand("CbqsInstructionV1", "010300", false)).toThrow(UsageError);
    expect(() => decodeCommand("SetProviderStatusArgsV1", "0x0100", false)).toThrow(/TrailingBytes at offset 1/);
    const err = (() => {
      try {
        decodeCommand("CbqsInstructionV1", "0x0103", false);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(DecodeError);
    expect((err as DecodeError).message).toMatch(/offset 2 \(args\.status\)/);
    expect(() => encodeCommand("SetProviderStatusArgsV1", "{", false)).toThrow(InputError);
    expect(() => encodeCommand("SetProviderStatusArgsV1", '{"status":"Active","status":"Paused"}', false)).toThrow(/<json>: \$\.status: duplicate key/);
    // A value the type does not allow is reported against its source (<json>, or the @file), like malformed JSON.
    expect(() => encodeCommand("SetProviderStatusArgsV1", '{"status":"Paused"}', false)).toThrow(InputError);
    expect(() => encodeCommand("SetProviderStatusArgsV1", '{"status":"Paused"}', false)).toThrow(/^<json>: \$\.status: expected one of "Active"/);
    expect(() => encodeCommand("CloseStreamArgsV1", '{"stream_id":"0x01"}', false)).toThrow(/^<json>: \$\.stream_id: /);
  });

  it("§4.1/§8/§9.1: derive stream-id, key-stream-id, lane-id, signing-key-id", () => {
    const ci = "c1".repeat(32);
    expect(deriveCommand("stream-id", { chainId: "7", chainInstance: "0x" + ci, owner: "0x" + "11".repeat(20), nonce: "3" }, false)).toBe(
      k(ascii("cbqs/stream-id/v1") + "0000000000000007" + ci + "11".repeat(20) + "0000000000000003"),
    );
    expect(deriveCommand("key-stream-id", { streamId: "0x" + "51".repeat(32) }, false)).toBe(k(ascii("cbqs/key-stream-id/v1") + "51".repeat(32)));
    expect(deriveCommand("lane-id", { streamId: "0x" + "51".repeat(32), laneNonce: "0x" + "4e".repeat(32) }, false)).toBe(
      k(ascii("cbqs/lane-id/v1") + "51".repeat(32) + "4e".repeat(32)),
    );
    expect(deriveCommand("signing-key-id", { ed25519: "0x" + "b2".repeat(32) }, false)).toBe(k(ascii("cbqs/signing-key-id/v1") + "01" + "b2".repeat(32)));
    expect(() => deriveCommand("stream-id", { chainId: "7" }, false)).toThrow(/missing --chain-instance/);
    expect(() => deriveCommand("stream-id", { chainId: "18446744073709551616", chainInstance: "0x" + ci, owner: "0x" + "11".repeat(20), nonce: "3" }, false)).toThrow(UsageError);
    expect(() => deriveCommand("key-stream-id", { streamId: "0x51" }, false)).toThrow(UsageError);
    expect(() => deriveCommand("nope", {}, false)).toThrow(UsageError);
  });

  it("§3: derive chain-instance-id hashes the exact genesis file bytes", () => {
    const dir = mkdtempSync(join(tmpdir(), "cbqs-codec-"));
    const file = join(dir, "genesis.json");
    const text = '{ "chain_id": "7" }\r\n';
    writeFileSync(file, text);
    expect(deriveCommand("chain-instance-id", { genesis: file }, false)).toBe(k(ascii("cowboy-chain-identity-v1:") + ascii(text)));
  });

  it("§4.5: derive schedule-digest is the genesis default schedule digest; --json includes the schedule", () => {
    const out = JSON.parse(deriveCommand("schedule-digest", {}, true));
    expect(out.schedule.standard.throughput_unit_rate_per_block).toBe("13300");
    const hex = encodeCommand("BaseRateScheduleV1", JSON.stringify(out.schedule), false);
    expect(out.value).toBe(k(ascii("cbqs/base-rate-schedule/v1") + hex.slice(2)));
  });

  it("the CLI tour's decode/encode/derive examples print what the spec gives (§14, §4.1)", () => {
    const ci = "c1".repeat(32);
    expect(JSON.parse(decodeCommand("CbqsInstructionV1", "0x0108" + "51".repeat(32), false))).toEqual({
      CloseStream: { stream_id: "0x" + "51".repeat(32) },
    });
    expect(encodeCommand("CbqsSigningContextV1", `{"version":"1","chain_id":"7","chain_instance_id":"0x${ci}"}`, false)).toBe(
      "0x01" + "0000000000000007" + ci,
    );
    expect(deriveCommand("stream-id", { chainId: "7", chainInstance: "0x" + ci, owner: "0x" + "11".repeat(20), nonce: "1" }, false)).toBe(
      k(ascii("cbqs/stream-id/v1") + "0000000000000007" + ci + "11".repeat(20) + "0000000000000001"),
    );
  });

  it("types lists every codec type name", () => {
    expect(typesCommand(false).split("\n")).toContain("StreamRecordV1");
    expect(JSON.parse(typesCommand(true))).toContain("CbqsInstructionV1");
  });
});
