// `cbqs codec decode|encode|types|derive`: the canonical CBQS codec (CIP-39 §14) on the command line.
// Bad input (odd hex, wrong lengths, unknown types, trailing bytes, …) is one error line, exit 2.
import { echo } from "../bounds.js";
import { Option, type Command } from "commander";
import { HexError, fromHex, toHex } from "../bytes.js";
import {
  CODEC_NAMES,
  chainInstanceId,
  codecByName,
  codecs,
  decode,
  encode,
  fromJson,
  genesisBaseRateSchedule,
  keyStreamId,
  laneId,
  scheduleDigest,
  signingKeyId,
  streamId,
  toJson,
  type Codec,
} from "../codec/index.js";
import { inFile } from "../harness/documents.js";
import { parseJsonInput, readJsonFile } from "../json/read.js";
import { exitCodes, jsonReplacer, option, requiredOption, UsageError } from "./common.js";
import type { CommandSpec } from "./define.js";
import { readGenesisFile } from "./node.js";

function codecFor(typeName: string): Codec<unknown> {
  const codec = codecByName(typeName);
  if (!codec) throw new UsageError(`unknown type "${echo(typeName)}" (see \`cbqs types\`)`);
  return codec;
}

function hexArg(text: string, what: string, length?: number): Uint8Array {
  try {
    return fromHex(text, length, what);
  } catch (err) {
    if (err instanceof HexError) throw new UsageError(err.message);
    throw err;
  }
}

const U64_MAX = (1n << 64n) - 1n;

// Decimal digits of any length, as in JSON (scenario-format §1): "007" is 7; the range is checked after.
function u64Arg(text: string, what: string): bigint {
  if (!/^[0-9]+$/.test(text)) throw new UsageError(`${what}: expected a u64 decimal integer, got "${echo(text)}"`);
  const value = BigInt(text);
  if (value > U64_MAX) throw new UsageError(`${what}: ${echo(text)} exceeds the u64 maximum ${U64_MAX}`);
  return value;
}

function required<V>(value: V | undefined, flag: string): V {
  if (value === undefined) throw new UsageError(`missing ${flag}`);
  return value;
}

/**
 * `use` applied to a JSON argument — inline text, or `@file.json` (the strict reader either way) —
 * so that a value the command refuses is reported against its source: the file, or <json>.
 */
export function withJsonArg<T>(arg: string, use: (value: unknown) => T): T {
  const file = arg.startsWith("@") ? arg.slice(1) : undefined;
  return inFile(file ?? "<json>", () => use(file === undefined ? parseJsonInput(arg, "<json>") : readJsonFile(file)));
}

/** `cbqs codec decode <TypeName> <hex>`: canonical JSON of the strictly decoded value. */
export function decodeCommand(typeName: string, hexText: string, json: boolean): string {
  const codec = codecFor(typeName);
  const value = toJson(codec, decode(codec, hexArg(hexText, "hex input")));
  return json ? JSON.stringify({ type: typeName, value }) : JSON.stringify(value, null, 2);
}

/** `cbqs codec encode <TypeName> <json|@file>`: the canonical bytes as 0x-hex. */
export function encodeCommand(typeName: string, arg: string, json: boolean): string {
  const codec = codecFor(typeName);
  const bytes = withJsonArg(arg, (value) => encode(codec, fromJson(codec, value)));
  return json ? JSON.stringify({ type: typeName, hex: toHex(bytes), length: bytes.length }) : toHex(bytes);
}

export interface DeriveOptions {
  chainId?: string;
  chainInstance?: string;
  owner?: string;
  nonce?: string;
  streamId?: string;
  laneNonce?: string;
  genesis?: string;
  ed25519?: string;
}

/** `cbqs codec derive <what>`: one derived identifier (§3, §4.1, §4.5, §8, §9.1). */
export function deriveCommand(what: string, o: DeriveOptions, json: boolean): string {
  let value: Uint8Array;
  const extra: Record<string, unknown> = {};
  switch (what) {
    case "stream-id":
      value = streamId(
        u64Arg(required(o.chainId, "--chain-id"), "--chain-id"),
        hexArg(required(o.chainInstance, "--chain-instance"), "--chain-instance", 32),
        hexArg(required(o.owner, "--owner"), "--owner", 20),
        u64Arg(required(o.nonce, "--nonce"), "--nonce"),
      );
      break;
    case "key-stream-id":
      value = keyStreamId(hexArg(required(o.streamId, "--stream-id"), "--stream-id", 32));
      break;
    case "lane-id":
      value = laneId(
        hexArg(required(o.streamId, "--stream-id"), "--stream-id", 32),
        hexArg(required(o.laneNonce, "--lane-nonce"), "--lane-nonce", 32),
      );
      break;
    case "chain-instance-id": {
      // The exact bytes of the genesis text (§3), unpacked if gzip; a fixture or scenario is refused, as by node --genesis.
      value = chainInstanceId(readGenesisFile(required(o.genesis, "--genesis")));
      break;
    }
    case "signing-key-id":
      value = signingKeyId({ algorithm: "Ed25519", key: hexArg(required(o.ed25519, "--ed25519"), "--ed25519", 32) });
      break;
    case "schedule-digest": {
      const schedule = genesisBaseRateSchedule();
      value = scheduleDigest(schedule);
      extra.schedule = toJson(codecs.BaseRateScheduleV1, schedule);
      break;
    }
    default:
      throw new UsageError(`unknown derivation "${echo(what)}"`);
  }
  return json ? JSON.stringify({ derive: what, value: toHex(value), ...extra }, jsonReplacer) : toHex(value);
}

export function typesCommand(json: boolean): string {
  return json ? JSON.stringify(CODEC_NAMES) : CODEC_NAMES.join("\n");
}

const print = (text: string): void => {
  process.stdout.write(text + "\n");
};

const DERIVED = exitCodes("derived", "(not used)", "a missing or malformed option");

/** A `codec derive` subcommand: `--json`, then its required options (each one of deriveCommand's inputs). */
function deriveSpec(name: string, description: string, flags: ReadonlyArray<readonly [string, string]>, configure?: (command: Command) => void): CommandSpec {
  return {
    description,
    options: () => [option("--json", "one-line machine output"), ...flags.map(([flag, help]) => requiredOption(flag, help))],
    exits: DERIVED,
    ...(configure === undefined ? {} : { configure }),
    action: (opts: DeriveOptions & { json?: boolean }) => print(deriveCommand(name, opts, !!opts.json)),
  };
}

export const commands: Readonly<Record<string, CommandSpec>> = {
  decode: {
    description: "strictly decode canonical CBQS bytes (CIP-39 §14) and print canonical JSON",
    arguments: [["<type>"], ["<hex>"]],
    options: () => [option("--json", "one-line machine output")],
    exits: exitCodes("decoded", "(not used)", "unknown type, bad hex, bytes that are not the type's one canonical encoding"),
    action: (type: string, hex: string, opts: { json?: boolean }) => print(decodeCommand(type, hex, !!opts.json)),
  },

  encode: {
    description: "encode a JSON value (inline or @file.json) to canonical CBQS bytes as 0x-hex",
    arguments: [["<type>"], ["<json>"]],
    options: () => [option("--json", "one-line machine output")],
    exits: exitCodes("encoded", "(not used)", "unknown type, malformed JSON, a value the type does not allow"),
    action: (type: string, json: string, opts: { json?: boolean }) => print(encodeCommand(type, json, !!opts.json)),
  },

  types: {
    description: "list the type names `cbqs codec decode` and `cbqs codec encode` accept",
    options: () => [option("--json", "JSON array output")],
    exits: exitCodes("listed", "(not used)", "an unknown option"),
    action: (opts: { json?: boolean }) => print(typesCommand(!!opts.json)),
  },

  "stream-id": deriveSpec("stream-id", "§4.1 main stream id", [
    ["--chain-id <n>", "numeric chain id (u64)"],
    ["--chain-instance <hex>", "chain_instance_id (32 bytes)"],
    ["--owner <hex>", "owner address (20 bytes)"],
    ["--nonce <n>", "owner nonce (u64)"],
  ]),
  "key-stream-id": deriveSpec("key-stream-id", "§4.1 key stream id of a main stream", [["--stream-id <hex>", "main stream id"]]),
  "lane-id": deriveSpec("lane-id", "§8 lane id", [
    ["--stream-id <hex>", "stream id"],
    ["--lane-nonce <hex>", "lane nonce (32 bytes)"],
  ]),
  "chain-instance-id": deriveSpec(
    "chain-instance-id",
    "§3 chain instance id: the fingerprint of a genesis file's bytes, hashed as they are (not re-serialized)",
    [["--genesis <file>", "genesis file, as node --genesis takes it (cbqs fixture genesis writes a fixture's or scenario's)"]],
    // The option's earlier name, still accepted: set before commander checks the required --genesis.
    (command) => {
      command.addOption(new Option("--genesis-file <file>").hideHelp()).on("option:genesis-file", (file: string) => command.setOptionValueWithSource("genesis", file, "cli"));
    },
  ),
  "signing-key-id": deriveSpec("signing-key-id", "§9.1 signing key id of an Ed25519 public key", [["--ed25519 <hex>", "public key (32 bytes)"]]),
  "schedule-digest": deriveSpec("schedule-digest", "§4.5 schedule digest of the genesis default schedule", []),
};
