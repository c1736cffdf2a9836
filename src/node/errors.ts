// What a request can be refused with (docs/guides/run-a-devnet.md "Errors"): an HTTP status, a stable
// machine-readable code and a one-line message, as `{"error": {"code", "message"}}`. Answers
// that depend on the chain (a stream absent at a height) also name the block they were read at.
// Anything that is not a RequestError is internal: an opaque 500 with an id (CIP-4 §6.4, §10).

export class RequestError extends Error {
  override name = "RequestError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Extra top-level fields of the answer (the read point of a not-found answer). */
    readonly extra: Record<string, unknown> = {},
    /** Extra response headers (Retry-After, Allow). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

export const badRequest = (code: string, message: string): RequestError => new RequestError(400, code, message);
export const notFound = (code: string, message: string, extra: Record<string, unknown> = {}): RequestError =>
  new RequestError(404, code, message, extra);

export function errorBody(code: string, message: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { error: { code, message }, ...extra };
}
