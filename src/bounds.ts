// Every bound on what a command reads, in one place (docs/reference/formats/fixture.md "Bounds"). Each is
// enforced at the earliest point a command can see it — the scenario parser refuses a block of
// more transactions than a fixture may hold, so `run` and `fill` never produce what `replay`
// refuses — and every length is checked before anything is allocated for it. A leaf module:
// state/ may import it like src/bytes.ts.

/** Transactions in one block (fixtures, scenarios, t8n `txs`). */
export const MAX_BLOCK_TRANSACTIONS = 65_536;
/** A system transaction's payload; the largest valid CBQS instruction is far smaller (docs/reference/formats/transaction.md). */
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
/**
 * One JSON document read from a plain file, which is parsed in chunks and never held whole: its
 * large arrays (a dump's entries, a fixture's blocks) are loaded element by element and bounded by
 * count, so this bound only has to admit the largest valid document — a dump of MAX_DUMP_ENTRIES
 * entries with decoded views is about 8 GB (470 bytes per account entry).
 */
export const MAX_DOCUMENT_BYTES = 8 * 1024 * 1024 * 1024;
/** A document held whole in memory: a gzip file is unpacked into one buffer; a node's answer is buffered. */
export const MAX_BUFFERED_DOCUMENT_BYTES = 512 * 1024 * 1024;
/** One JSON string (the largest this project writes, an envelope in hex, is about 2 MB; a JS string holds at most 2^29 characters). */
export const MAX_JSON_STRING_BYTES = 256 * 1024 * 1024;
/** Nesting of a JSON document: our deepest format (a scenario's signed instruction) uses about 15. */
export const MAX_JSON_DEPTH = 64;
/** Characters of input an error line may echo (a 100,000-digit number is shown cut, with its length). */
export const MAX_ECHO_CHARS = 200;
/** A whole `cbqs: error: …` line: every message echoes at most MAX_ECHO_CHARS of input; this is the backstop. */
export const MAX_ERROR_LINE = 600;
/** One request line of the cbqs-t8n-server/v1 protocol by default (a pre-state of ~150,000 entries fits); `--max-line-bytes` changes it. */
export const DEFAULT_T8N_LINE_BYTES = 64 * 1024 * 1024;
/**
 * A document another program hands us to hold whole and parse: a node's answer (src/client/), an
 * implementation's answer line or output file (`consume`, `fuzz`, `t8n-adapter`). It is parsed
 * with at most one value per 16 bytes (src/json/parse.ts valuesFor), so the heap it can take stays
 * a few times its size. 64 MiB holds a feed page of the largest blocks (about 25 MB) and the
 * post-state of some 140,000 entries with decoded views (the long chain's has a few thousand);
 * a larger state is for per-call `cbqs t8n`, which streams it.
 */
export const MAX_ANSWER_BYTES = 64 * 1024 * 1024;
/** Steps of one cbqs-trace/v1 line, and its hash-preimage lengths. */
export const MAX_TRACE_STEPS = 1 << 24;

/** `text` cut to `max` characters with the total length said, for error lines that echo input. */
export function echo(text: string, max = MAX_ECHO_CHARS): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} characters)`;
}
