// Every bound on what a command reads, in one place (docs/fixtures.md "Bounds"). Each is
// enforced at the earliest point a command can see it — the scenario parser refuses a block of
// more transactions than a fixture may hold, so `run` and `fill` never produce what `replay`
// refuses — and every length is checked before anything is allocated for it. A leaf module:
// state/ may import it like src/bytes.ts.

/** Transactions in one block (fixtures, scenarios, t8n `txs`). */
export const MAX_BLOCK_TRANSACTIONS = 65_536;
/** A system transaction's payload; the largest valid CBQS instruction is far smaller (docs/transactions.md). */
export const MAX_SYSTEM_PAYLOAD_BYTES = 1_048_576;
/** A governance parameter name, and SetParams entries (§18 has 44 rows). */
export const MAX_PARAM_NAME_BYTES = 128;
export const MAX_SET_PARAMS_ENTRIES = 64;
/** A whole transaction envelope, checked before it is decoded. */
export const MAX_ENVELOPE_BYTES = MAX_SYSTEM_PAYLOAD_BYTES + 1_024;
/** Events of one receipt (CIP-4 §4.3 ActorEventList maximum). */
export const MAX_RECEIPT_EVENTS = 1_000;
/** Entries of one state dump or t8n alloc (about 100 times the long chain's final state). */
export const MAX_DUMP_ENTRIES = 16_777_216;
/** Keys of one batch state proof (CIP-4 §5.4, §8.2). */
export const MAX_PROOF_KEYS = 256;
/** Operations an exclusion proof may list. */
export const MAX_EXCLUSION_PROOF_OPS = 4_194_304;
/** One JSON document (fixture, dump, scenario, proof, …) after gunzip: the long chain is about 60 MB. */
export const MAX_DOCUMENT_BYTES = 512 * 1024 * 1024;
/** Nesting of a JSON document: our deepest format (a scenario's signed instruction) uses about 15. */
export const MAX_JSON_DEPTH = 64;
/** Characters of input an error line may echo (a 100,000-digit number is shown cut, with its length). */
export const MAX_ECHO_CHARS = 200;

/** `text` cut to `max` characters with the total length said, for error lines that echo input. */
export function echo(text: string, max = MAX_ECHO_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`;
}
