// The node's read endpoints, as the page calls them (docs/guides/run-a-devnet.md "Endpoints"): same origin,
// JSON answers, `{"error": {"code", "message"}}` on refusal.

export type Json = Record<string, unknown>;

/** A refusal by the node (its code and message), or a network failure (code "network"). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export async function getJson(path: string): Promise<Json> {
  let res: Response;
  try {
    res = await fetch(path, { headers: { accept: "application/json" } });
  } catch (err) {
    throw new ApiError(0, "network", `the node did not answer (${(err as Error).message})`);
  }
  const body = (await res.json().catch(() => null)) as Json | null;
  if (res.ok && body !== null) return body;
  const error = (body?.["error"] ?? {}) as { code?: string; message?: string };
  throw new ApiError(res.status, error.code ?? `http_${res.status}`, error.message ?? `HTTP ${res.status}`);
}

/** A path segment: ids, hashes and stream keys ("owner:0x…/nonce:1") are percent-encoded. */
export const seg = (text: string): string => encodeURIComponent(text);

/** The typed pieces of answers the page reads. */
export interface BlockSummary {
  height: string;
  block_hash: string;
  timestamp: string;
  txs: number;
}

export interface HistoryPoint {
  height: string;
  status: string | null;
  escrow_balance?: string;
  settled_escrow?: string | null;
}

export interface StreamEvent {
  height: string;
  tx_hash: string;
  topic: string;
}
