// `cbqs proof …` (CIP-4 §5.4, §8.2, Appendix C): `proof state` writes the reference proof of one
// key — against a chain's own root (a fixture's block, replayed; a store's head) or against a state
// dump committed as one batch — and `proof verify` checks a state proof (single-key, §8.2 batch,
// or exclusion) against a trusted root, saying step by step what it checked; `proof tx` / `proof
// receipt` write the §5.4 inclusion proof of one transaction / receipt of a fixture block, and
// `proof verify-bmt` checks one. A verifier's exit 1 is only for a well-formed proof that does not
// verify; anything unusable (a file, a proof document, a --root) is exit 2.
import { bytesEqual, fromHex, toHex } from "../bytes.js";
import { BLAKE3, SHA256 } from "../crypto/hash.js";
import { inFile, inFileSteps, readDocumentSteps, readFixtureSteps, readJson } from "../harness/documents.js";
import { proveAtHeightSteps } from "../harness/prove-at-height.js";
import { InclusionError, proveInclusion, type InclusionKind } from "../harness/inclusion.js";
import { hex } from "../json/fields.js";
import { InputError } from "../json/read.js";
import { echo, MAX_ENVELOPE_BYTES } from "../bounds.js";
import { txHash } from "../chain/envelope.js";
import { Output, writing } from "../json/write.js";
import { finish, stoppable, watchSignals, type Steps } from "../steps.js";
import { createStateCommitment, stateDbConfig } from "../../state/qmdb/index.js";
import { proveKey, verifyStateProofDetailed, type DetailedVerifyResult, type Reconstruction } from "../../state/qmdb/proof.js";
import { MemoryStateStore } from "../../state/store/store.js";
import { STATE_KEY_LENGTH } from "../../state/kv/interface.js";
import { inclusionProofToJson, parseInclusionProof, rebuiltInclusionRoot, receiptLeaf, verifyInclusionProof, type InclusionProof } from "../../state/roots/roots.js";
import { committedReceipt, loadReceiptJson } from "../chain/receipts.js";
import { count } from "../format.js";
import { decimalOption, EXIT_OK, EXIT_REJECT, exitCodes, oneLine, option, outputOption, report, requiredOption, UsageError } from "./common.js";
import type { CommandSpec } from "./define.js";
import { mismatchLines } from "./replay-report.js";
import type { Mismatch } from "../harness/replay.js";
import { openExistingStore, storeUsageError } from "./store.js";
import { writesToStdout } from "../output-file.js";

const HASHERS = { blake3: BLAKE3, sha256: SHA256 } as const;

/**
 * The verifier's steps in words (CIP-4 Appendix C as it applies to the "current" QMDB root). Each
 * digest is named once and shown with its value wherever it appears: the path rebuilds the grafted
 * root (state/qmdb/proof.ts reconstructRangeRoot with the grafting hasher); ops_root is the proof's own
 * field, bound only by the combined root. While the bitmap has no complete chunk nothing is
 * grafted yet, so the two hold the same digest.
 */
export function checkedSteps(r: Reconstruction, stateRoot: Uint8Array): string[] {
  const keys = r.keys.map((k) => `${toHex(k.key)} (location ${k.loc})`).join(", ");
  const partial = r.partial === undefined ? "" : ` ‖ next_bit ${r.partial.nextBit} ‖ partial-chunk digest ${toHex(r.partial.digest)}`;
  const first =
    r.kind === "exclusion"
      ? `no operation from the inactivity floor (location ${r.keys[0]!.loc}) to the last commit is an active Update of key ${toHex(r.keys[0]!.key)}`
      : `the Update operation of ${r.keys.length === 1 ? "key" : `each of ${r.keys.length} keys`} ${keys} has its activity bit set in its bitmap chunk`;
  return [
    first,
    `ops path: the operation${r.kind === "single" ? "" : "s"}, bitmap chunk${r.kind === "single" ? "" : "s"} and ${r.digests} digest${r.digests === 1 ? "" : "s"} rebuild the grafted root ${toHex(r.graftedRoot)}`,
    `combined root: H(ops_root ${toHex(r.opsRoot)} (as the proof states) ‖ grafted root ${toHex(r.graftedRoot)}${partial}) = ${toHex(r.root)}${
      r.root.length === stateRoot.length && toHex(r.root) === toHex(stateRoot) ? " = the given state_root" : `, not the given state_root ${toHex(stateRoot)}`
    }`,
  ];
}

/** What a verified proof establishes, in words: the key's value, its absence, or how many keys. */
function provedText(r: Reconstruction, proof: unknown): string {
  if (r.kind === "exclusion") return `key ${toHex(r.keys[0]!.key)} has no value at this root`;
  if (r.kind === "batch") return `the values of ${count(r.keys.length, "key")} at this root (listed in the proof)`;
  const value = (proof as { value?: unknown }).value;
  return `key ${toHex(r.keys[0]!.key)} = ${typeof value === "string" ? value : "?"}`;
}

const APPENDIX_C_NOTE =
  'note: the ops_root alone is not the state_root: the "current" QMDB root combines it with the grafted root (CIP-4 Appendix C gap, D-0015)';

interface VerifyOpts {
  root: string;
  hasher: string;
  json?: boolean;
}

/** A state proof's verdict against `root`: the proof document's proof, and what its verifier reconstructed. */
interface ProofVerdict {
  result: DetailedVerifyResult;
  proof: unknown;
  root: Uint8Array;
}

export const commands: Readonly<Record<string, CommandSpec>> = {
  verify: {
    description: "verify a CIP-4 state proof (Appendix C, a §8.2 batch proof, or an exclusion proof) against a state root",
    arguments: [["<proof.json>", "proof file (proof state), or a node's /proof/account|actor|storage|multi answer as saved"]],
    options: () => [
      requiredOption("--root <hex>", "trusted state root, 0x-prefixed 32-byte hex"),
      option("--hasher <name>", "hash function of the database: blake3 (Cowboy state) or sha256", "blake3"),
      option("--json", "print the result as JSON"),
    ],
    exits: exitCodes("the proof verifies", "a well-formed proof that does not verify", "unreadable file, malformed proof document, bad --root or --hasher"),
    action: (file: string, opts: VerifyOpts) => {
      const hasher = HASHERS[opts.hasher as keyof typeof HASHERS];
      if (hasher === undefined) throw new UsageError(`--hasher must be blake3 or sha256 (got ${echo(opts.hasher)})`);
      const verdict = verifyProofFile(file, fromHex(opts.root, 32, "--root"), hasher);
      report(opts.json === true, proofVerdictText(verdict), proofVerdictJson(verdict));
      process.exitCode = verdict.result.valid ? EXIT_OK : EXIT_REJECT;
    },
  },

  state: {
    description:
      "write the CIP-4 Appendix C proof of one key and print the root it verifies against: of a chain's block " +
      "(<fixture> --height h: replayed, every root checked; --db: a store's head), or of a state dump committed as one batch (like t8n's pre-state)",
    arguments: [["[file]", "a cbqs-fixture/v1 (.json or .json.gz, with --height) or a cbqs-state-dump/v1 file (t8n --output.alloc, state dump -o)"]],
    options: () => [
      requiredOption("--key <hex>", "state key, 0x-prefixed 54-byte hex (absent key: an exclusion proof)"),
      option("--height <h>", "with a fixture: prove at its last block at or below this height, against that block's state_root"),
      option("--db <dir>", "prove against the head of this store (no file)"),
      outputOption("-o, --output <file>", "proof file; - is stdout (then the root goes to stderr)", "-"),
    ],
    rules: [
      { oneOf: ["[file]", "--db"], message: "give either a file or --db <dir>" },
      { conflicts: ["--height", "--db"], message: "--height needs a fixture; --db proves at the store's head" },
    ],
    exits: exitCodes(
      "the proof is written and the root printed",
      "a fixture does not replay to its own expected values up to the height (no proof written)",
      "unreadable or malformed input, bad --key or --height, a store in use or empty, unwritable output",
      "no proof is written",
    ),
    action: async (file: string | undefined, opts: { key: string; height?: string; db?: string; output: string }) => {
      const key = fromHex(opts.key, STATE_KEY_LENGTH, "--key");
      const height = opts.height === undefined ? undefined : decimalOption("--height", opts.height);
      const proved = opts.db !== undefined ? proveAtStoreHead(opts.db, key) : await proveInFile(file!, key, height);
      if ("mismatch" in proved) {
        process.stderr.write(mismatchLines(file!, proved.mismatch).join("\n") + "\n");
        process.exitCode = EXIT_REJECT;
        return;
      }
      writeJson(opts.output, proved.proof);
      const toStdout = writesToStdout(opts.output); // -o - or -o /dev/stdout: the same, stdout holds the proof alone
      (toStdout ? process.stderr : process.stdout).write(`${toStdout ? "state root: " : ""}${toHex(proved.root)}\n`);
      process.exitCode = EXIT_OK;
    },
  },

  tx: proveInclusionSpec("tx"),
  receipt: proveInclusionSpec("receipt"),

  "verify-bmt": {
    description: "verify a CIP-4 §5.4 transaction or receipt inclusion proof (JSON) against a tx_root or receipt_root",
    arguments: [["<proof>", "proof file (proof tx / proof receipt)"]],
    options: () => [requiredOption("--root <hex>", "trusted tx_root or receipt_root, 0x-prefixed 32-byte hex"), option("--json", "print the result as JSON")],
    exits: exitCodes("the proof verifies", "a well-formed proof that does not verify", "unreadable or malformed proof document, bad --root"),
    action: (file: string, opts: { root: string; json?: boolean }) => {
      const verdict = verifyBmtFile(file, fromHex(opts.root, 32, "--root"));
      report(opts.json === true, bmtVerdictText(verdict), bmtVerdictJson(verdict));
      process.exitCode = verdict.valid ? EXIT_OK : EXIT_REJECT;
    },
  },
};

function writeJson(path: string, value: unknown): void {
  writing(new Output(path), (out) => out.write(JSON.stringify(value, null, 2) + "\n"));
}

/** A proof file (or a node's proof answer) checked against `root`; a malformed proof is unusable input naming the file. */
function verifyProofFile(file: string, root: Uint8Array, hasher: (typeof HASHERS)[keyof typeof HASHERS]): ProofVerdict {
  const doc = readJson(file);
  notAProof(file, doc);
  const { proof, base, answer } = proofOf(doc);
  let result = verifyStateProofDetailed(proof, root, stateDbConfig(hasher));
  if (!result.valid && result.malformed) throw new InputError(file, base + result.path.slice(1), result.problem);
  // A node's single-key answer names the key it was asked for: it must be the proven one.
  const asked = answer?.["key"];
  const provenKey = (proof as { key?: unknown }).key;
  if (result.valid && typeof asked === "string" && asked !== provenKey) {
    result = { valid: false, malformed: false, reconstruction: result.reconstruction, reason: `the answer's key ${echo(asked, 120)} is not the proven key ${echo(String(provenKey), 120)}` };
  }
  return { result, proof, root };
}

function reconstructionOf(v: ProofVerdict): Reconstruction | undefined {
  return "reconstruction" in v.result ? v.result.reconstruction : undefined;
}

/** The verdict line, then what was checked and proved, indented. */
function proofVerdictText(v: ProofVerdict): string {
  const r = reconstructionOf(v);
  const steps = r === undefined ? [] : checkedSteps(r, v.root);
  const proved = v.result.valid && r !== undefined ? [`  proved: ${provedText(r, v.proof)}`] : [];
  return [v.result.valid ? "valid" : `invalid: ${v.result.reason}`, ...steps.map((s) => `  checked: ${s}`), ...proved, ...(r ? [`  ${APPENDIX_C_NOTE}`] : [])].join("\n");
}

function proofVerdictJson(v: ProofVerdict): unknown {
  const r = reconstructionOf(v);
  return {
    valid: v.result.valid,
    ...(v.result.valid ? {} : { reason: v.result.reason }),
    ...(r === undefined
      ? {}
      : {
          kind: r.kind,
          keys: r.keys.map((k) => ({ key: toHex(k.key), loc: String(k.loc) })),
          checked: {
            grafted_root: toHex(r.graftedRoot),
            ops_root: toHex(r.opsRoot),
            partial: r.partial === undefined ? null : { next_bit: String(r.partial.nextBit), digest: toHex(r.partial.digest) },
            combined_root: toHex(r.root),
            state_root: toHex(v.root),
          },
          steps: checkedSteps(r, v.root),
        }),
  };
}

/**
 * A chain fixture or a state dump given where a proof was expected: said in words, with the
 * command that makes a proof from it, rather than as the proof's first missing field.
 */
function notAProof(file: string, doc: unknown): void {
  const format = typeof doc === "object" && doc !== null ? (doc as { format?: unknown }).format : undefined;
  if (format === "cbqs-fixture/v1") {
    throw new UsageError(`${file}: this is a fixture (cbqs-fixture/v1), not a proof: make a proof from it with cbqs prove-state ${file} --height <h> --key <hex> -o proof.json`);
  }
  if (format === "cbqs-state-dump/v1") {
    throw new UsageError(`${file}: this is a state dump (cbqs-state-dump/v1), not a proof: make a proof from it with cbqs prove-state ${file} --key <hex> -o proof.json`);
  }
}

/** `proof state <file>`: of a fixture at --height (replayed; a mismatch on the way instead), or of a dump committed as one batch. */
async function proveInFile(file: string, key: Uint8Array, height: bigint | undefined): Promise<{ root: Uint8Array; proof: unknown } | { mismatch: Mismatch }> {
  watchSignals();
  const doc = await stoppable(readDocumentSteps(file, ["fixture", "dump"]));
  if (doc.kind === "fixture") {
    if (height === undefined) throw new UsageError(`${file}: a fixture needs --height (the block whose state_root to prove against)`);
    return stoppable(inFileSteps(file, proveAtHeightSteps(doc.fixture, height, key)));
  }
  if (height !== undefined) throw new UsageError(`${file}: --height needs a fixture; a state dump has one state`);
  if (doc.kind !== "dump") throw new Error("unreachable");
  const result = await stoppable(proveStateKeySteps(doc.entries, key));
  if (doc.stateRoot !== undefined && !bytesEqual(doc.stateRoot, result.root)) {
    process.stderr.write(
      `note: ${file} names state_root ${toHex(doc.stateRoot)}; this proof is against ${toHex(result.root)}, its entries committed as one batch ` +
        "(docs/fixtures.md §4). For a proof against a chain's own root use <fixture> --height <h> or --db <dir>.\n",
    );
  }
  return result;
}

function proveAtStoreHead(dir: string, key: Uint8Array): { root: Uint8Array; proof: unknown } {
  const db = openExistingStore(dir);
  try {
    const head = db.head();
    if (head === undefined) throw new UsageError(`--db ${dir}: the store holds no chain yet`);
    return { root: head.state_root, proof: db.proveKey(key) };
  } catch (err) {
    throw storeUsageError(dir, err) ?? err;
  } finally {
    db.close();
  }
}

/** `proof tx` and `proof receipt`: the inclusion proof of one transaction or receipt of a fixture block. */
function proveInclusionSpec(kind: InclusionKind): CommandSpec {
  const what = kind === "tx" ? "transaction" : "receipt";
  return {
    description: `write the CIP-4 §5.4 inclusion proof of one ${what} of a fixture block (checked by proof verify-bmt against its ${kind}_root)`,
    arguments: [["<fixture>", "fixture file (.json or .json.gz)"]],
    options: () => [
      requiredOption("--block <n>", "height of the block"),
      requiredOption("--index <i>", `position of the ${what} in the block`),
      outputOption("-o, --output <file>", "proof file; - is stdout (with a file, the proven root is printed)", "-"),
    ],
    exits: exitCodes(
      "the proof is written",
      `the fixture's ${kind}_root is not the root of its own ${kind === "tx" ? "transactions" : "receipts"} (no proof written)`,
      "unreadable or malformed fixture, no such block or index, unwritable output",
      "while the fixture is read, no proof is written",
    ),
    action: async (file: string, opts: { block: string; index: string; output: string }) => {
      watchSignals();
      const height = decimalOption("--block", opts.block);
      const index = decimalOption("--index", opts.index);
      const fixture = await stoppable(readFixtureSteps(file));
      let proof: ReturnType<typeof proveInclusion>;
      try {
        proof = proveInclusion(fixture, kind, height, index);
      } catch (err) {
        if (!(err instanceof InclusionError)) throw err;
        if (!err.mismatch) throw new UsageError(`${file}: ${err.message}`);
        process.stderr.write(`cbqs: ${oneLine(`${file}: ${err.message}`)}\n`);
        process.exitCode = EXIT_REJECT;
        return;
      }
      const json = inclusionProofToJson(proof);
      writeJson(opts.output, json);
      if (!writesToStdout(opts.output)) process.stdout.write(`${json.root}\n`);
      process.exitCode = EXIT_OK;
    },
  };
}

/**
 * The leaf a node's inclusion-proof answer claims: its `transaction` (the leaf is its tx hash,
 * CIP-4 §5.2) or its `receipt` (the leaf is the hash of the committed receipt, §5.3 — status,
 * error code, meters and events; the receipt's tx_hash is not in it).
 */
function answerLeafCheck(answer: Record<string, unknown>, leaf: Uint8Array): { ok: boolean; checked: string; note?: string } | undefined {
  if (answer["transaction"] !== undefined) {
    const ok = bytesEqual(txHash(hex(answer["transaction"], "$.transaction", undefined, MAX_ENVELOPE_BYTES)), leaf);
    return { ok, checked: `the answer's transaction ${ok ? "hashes" : "does not hash"} to the proven leaf` };
  }
  if (answer["receipt"] !== undefined) {
    const { receipt } = loadReceiptJson(answer["receipt"], "$.receipt");
    const ok = bytesEqual(receiptLeaf(committedReceipt(receipt)), leaf);
    return {
      ok,
      checked: `the answer's receipt (status, error code, cycles, cells, events) ${ok ? "hashes" : "does not hash"} to the proven leaf`,
      note: "the receipt's tx_hash is not part of its leaf (CIP-4 §5.3): prove the transaction at the same index (/proof/tx) to bind it",
    };
  }
  return undefined;
}

/**
 * A proof document, or a node's proof answer (docs/guides/run-a-devnet.md: the read point, then `proof`), whose
 * `proof` member is the proof; `base` is the proof's JSON path for error messages.
 */
function proofOf(json: unknown): { proof: unknown; base: string; answer?: Record<string, unknown> } {
  if (typeof json === "object" && json !== null && !Array.isArray(json)) {
    const o = json as Record<string, unknown>;
    if ("proof" in o && "state_root" in o && "block_hash" in o) return { proof: o["proof"], base: "$.proof", answer: o };
  }
  return { proof: json, base: "$" };
}

/** An inclusion proof's verdict against `root`: whether it holds (and why not), and what was checked. */
interface BmtVerdict {
  proof: InclusionProof;
  root: Uint8Array;
  rebuilds: boolean;
  valid: boolean;
  reason: string;
  leafCheck: { ok: boolean; checked: string; note?: string } | undefined;
}

/** A proof file (or a node's /proof/tx or /proof/receipt answer) checked against `root`. */
function verifyBmtFile(file: string, root: Uint8Array): BmtVerdict {
  const { proof: json, base, answer } = proofOf(readJson(file));
  const proof = inFile(file, () => {
    try {
      return parseInclusionProof(json);
    } catch (err) {
      throw new InputError(file, base, (err as Error).message);
    }
  });
  const rebuilds = verifyInclusionProof(proof, root);
  // A node's answer carries what it proves: it must be the leaf.
  const leafCheck = answer === undefined ? undefined : inFile(file, () => answerLeafCheck(answer, proof.leafHash));
  if (!rebuilds) return { proof, root, rebuilds, valid: false, reason: "the leaf and siblings do not rebuild the given root", leafCheck };
  if (leafCheck !== undefined && !leafCheck.ok) return { proof, root, rebuilds, valid: false, reason: leafCheck.checked, leafCheck };
  return { proof, root, rebuilds, valid: true, reason: "", leafCheck };
}

/** The verdict line, naming the failed check as proof verify's does ("invalid: <reason>"), then what was checked; on a failure, what the path rebuilds instead. */
function bmtVerdictText(v: BmtVerdict): string {
  const { proof, root, rebuilds, leafCheck } = v;
  const rebuilt = rebuiltInclusionRoot(proof);
  const instead = rebuilt === null ? "they are not a path of a tree of that many leaves" : `they rebuild ${toHex(rebuilt)}`;
  const path = `  checked: leaf ${toHex(proof.leafHash)} (index ${proof.leafIndex} of ${count(proof.leafCount, "leaf", "leaves")}) and ${count(proof.siblings.length, "sibling")} ${rebuilds ? "rebuild the root" : "do not rebuild the root"} ${toHex(root)}${rebuilds ? "" : `: ${instead}`}`;
  return [v.valid ? "valid" : `invalid: ${v.reason}`, path, ...(leafCheck === undefined ? [] : [`  checked: ${leafCheck.checked}`]), ...(leafCheck?.note === undefined ? [] : [`  note: ${leafCheck.note}`])].join("\n");
}

function bmtVerdictJson(v: BmtVerdict): unknown {
  const rebuilt = rebuiltInclusionRoot(v.proof);
  return {
    valid: v.valid,
    ...(v.valid ? {} : { reason: v.reason, rebuilt: rebuilt === null ? null : toHex(rebuilt) }),
    leaf_hash: toHex(v.proof.leafHash),
    leaf_index: String(v.proof.leafIndex),
    leaf_count: String(v.proof.leafCount),
    root: toHex(v.root),
  };
}

/**
 * The dump's entries committed as ONE batch into a fresh Cowboy state database (QMDB "current",
 * Blake3): the same convention as t8n's pre-state (docs/reference/formats/fixture.md §4), so the root equals a
 * chain's state_root only where the chain reached that state in one batch too (genesis).
 */
export function proveStateKey(entries: Iterable<readonly [Uint8Array, Uint8Array]>, key: Uint8Array): { root: Uint8Array; proof: ReturnType<typeof proveKey> } {
  return finish(proveStateKeySteps(entries, key));
}

/** proveStateKey unit by unit (src/steps.ts): a unit is a slice of the entries, or the commit. */
function* proveStateKeySteps(entries: Iterable<readonly [Uint8Array, Uint8Array]>, key: Uint8Array): Steps<{ root: Uint8Array; proof: ReturnType<typeof proveKey> }> {
  const commitment = createStateCommitment();
  const store = yield* MemoryStateStore.fromEntriesSteps(entries, 0n, commitment);
  return { root: store.root(), proof: proveKey(commitment.db, key) };
}
