// The devnet genesis of `cbqs node` (docs/guides/run-a-devnet.md "Dev accounts"): the default genesis config
// (src/harness/genesis.ts) with N funded dev accounts added, each with a published Ed25519 key.
// The chain never derives an address from a key (an envelope names its sender and carries no
// signature: docs/reference/formats/transaction.md), so the address rule below is this devnet's own convention,
// chosen so that a key and its account are one thing for SDK authors: the key signs what the
// scenario format signs (quotes, receipts, provider and admin keys), the address sends.
//
//   seed_i    = SHA-256(UTF-8 "cbqs-devnet-v1:" ‖ DEVNET_MNEMONIC ‖ ":" ‖ decimal i)
//   public_i  = the RFC 8032 Ed25519 public key of seed_i
//   address_i = the last 20 bytes of keccak256(public_i)   (Ethereum-style, over the Ed25519 key)
//
// Everything is public: these keys guard nothing and must never hold value on a real chain.
import { bytesEqual, toHex, utf8 } from "../bytes.js";
import { ed25519PublicKeyFromSeed } from "../crypto/ed25519.js";
import { keccak256, sha256 } from "../crypto/hash.js";
import type { JsonObject } from "../json/parse.js";
import { canonicalJson } from "../scenario/genesis.js";
import { DEFAULT_GENESIS } from "./genesis.js";

/** Anvil's and Hardhat's well-known test phrase: recognisably a throwaway, and documented everywhere. */
export const DEVNET_MNEMONIC = "test test test test test test test test test test test junk";
export const DEVNET_SEED_DOMAIN = "cbqs-devnet-v1:";
export const DEFAULT_DEV_ACCOUNTS = 10;
/** Large enough for any test suite, small enough that the banner and the genesis stay readable. */
export const MAX_DEV_ACCOUNTS = 1_000;
/** Each dev account's balance by default: the default genesis accounts' 10^18 (CIP-39 nano-CBY). */
export const DEFAULT_DEV_BALANCE = 1_000_000_000_000_000_000n;

export interface DevAccount {
  index: number;
  /** "dev0", "dev1", … : what `cbqs tx --node` and the node's paths take for the account. */
  name: string;
  seed: Uint8Array;
  publicKey: Uint8Array;
  address: Uint8Array;
}

const cache = new Map<number, DevAccount>();

export function devAccount(index: number): DevAccount {
  if (!Number.isSafeInteger(index) || index < 0 || index >= MAX_DEV_ACCOUNTS) throw new RangeError(`dev account index ${index} is outside [0, ${MAX_DEV_ACCOUNTS})`);
  let account = cache.get(index);
  if (account === undefined) {
    const seed = sha256(utf8(`${DEVNET_SEED_DOMAIN}${DEVNET_MNEMONIC}:${index}`));
    const publicKey = ed25519PublicKeyFromSeed(seed);
    account = { index, name: `dev${index}`, seed, publicKey, address: keccak256(publicKey).slice(12) };
    cache.set(index, account);
  }
  return account;
}

export function devAccounts(count: number): DevAccount[] {
  return Array.from({ length: count }, (_, i) => devAccount(i));
}

/** "dev7" → 7; anything else (including "dev07", whose spelling is not the account's name) → undefined. */
export function devAccountIndex(name: string): number | undefined {
  const m = /^dev(0|[1-9][0-9]{0,3})$/.exec(name);
  if (m === null) return undefined;
  const i = Number(m[1]);
  return i < MAX_DEV_ACCOUNTS ? i : undefined;
}

/**
 * The default genesis config with `count` dev accounts holding `balance` each; nothing else
 * differs, so `count` 0 is exactly DEFAULT_GENESIS (and its chain instance).
 */
export function devnetGenesis(count: number, balance: bigint = DEFAULT_DEV_BALANCE): JsonObject {
  const accounts = { ...(DEFAULT_GENESIS["accounts"] as JsonObject) };
  for (const a of devAccounts(count)) accounts[toHex(a.address)] = { balance: balance.toString() };
  return { ...DEFAULT_GENESIS, accounts };
}

/** The devnet genesis source: its canonical JSON (CIP-39 §3, D-0069 "Canonical genesis serialization"). */
export function devnetGenesisSource(count: number, balance: bigint = DEFAULT_DEV_BALANCE): Uint8Array {
  return utf8(canonicalJson(devnetGenesis(count, balance)));
}

/**
 * The dev accounts of a genesis, when its source is byte for byte a devnet genesis (of any count
 * and balance); else none. Recognised by the bytes, not by the addresses alone, so a hand-written
 * genesis that happens to fund dev0 is not announced as a devnet.
 */
export function devnetOf(source: Uint8Array, accounts: ReadonlyArray<{ address: Uint8Array; balance: bigint }>): Devnet | undefined {
  if (!recognised.has(source)) recognised.set(source, recognise(source, accounts));
  return recognised.get(source);
}

export interface Devnet {
  accounts: DevAccount[];
  balance: bigint;
}

/** By the source's identity: a node asks on every request naming a dev account, and the answer never changes. */
const recognised = new WeakMap<Uint8Array, Devnet | undefined>();

function recognise(source: Uint8Array, accounts: ReadonlyArray<{ address: Uint8Array; balance: bigint }>): Devnet | undefined {
  const funded = new Map(accounts.map((a) => [toHex(a.address), a.balance]));
  let count = 0;
  while (count < MAX_DEV_ACCOUNTS && funded.has(toHex(devAccount(count).address))) count++;
  if (count === 0) return undefined;
  const balance = funded.get(toHex(devAccount(0).address))!;
  if (!bytesEqual(source, devnetGenesisSource(count, balance))) return undefined;
  return { accounts: devAccounts(count), balance };
}
