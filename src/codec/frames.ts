// §13.2 transport frames: the authenticated request, the session handshake objects, the client
// and server frames (version 1, a one-byte tag, the variant body; at most
// cbqs.max_wire_frame_bytes) and the long-poll batch of length-prefixed server frames.
import { bytesEqual } from "../bytes.js";
import {
  Reader,
  Writer,
  providerEpochV1,
  sizeLimited,
  struct,
  taggedUnion,
  u64,
  vec,
  versioned,
  type Codec,
  type VariantDef,
} from "./core.js";
import { BrokerEpochTransitionV1 } from "./broker.js";
import { cbqs_request_body_hash_v1 } from "./derive.js";
import { EncodeError } from "./errors.js";
import { CbqsRequestBodyV1 } from "./requests.js";
import {
  CbqsErrorV1,
  CbqsResponseV1,
  CheckpointFrameV1,
  DeliveryStateUpdateV1,
  GroupStateUpdateV1,
  MAX_WIRE_FRAME_BYTES,
  RecordDeliveryV1,
} from "./results.js";
import { Bytes32, CbqsSigningContextV1, FinalizedViewV1, RequestProofV1, SessionProofV1, StreamGrantV1 } from "./schema.js";
import type * as W from "./wire-types.js";

/** §18 codec bound cbqs.max_server_frames_per_batch. */
export const MAX_SERVER_FRAMES_PER_BATCH = 256;
/** The largest long-poll batch: its count, then every frame at the frame bound (D-0156). */
export const MAX_SERVER_FRAME_BATCH_BYTES = 4 + MAX_SERVER_FRAMES_PER_BATCH * (4 + MAX_WIRE_FRAME_BYTES);

export const AuthenticatedRequestV1 = struct<W.AuthenticatedRequestV1>(
  "AuthenticatedRequestV1",
  { request_id: Bytes32, proof: RequestProofV1, body: CbqsRequestBodyV1 },
  {
    // §13.1: "Decode MUST reject the request before dispatch" on either mismatch.
    check: (a) => {
      if (a.proof.method !== a.body.type) return { field: "proof", reason: `proof.method ${a.proof.method} differs from the body's tag ${a.body.type} (§13.1)` };
      if (!bytesEqual(a.proof.body_hash, cbqs_request_body_hash_v1(a.body))) {
        return { field: "proof", reason: "proof.body_hash is not cbqs_request_body_hash_v1(body) (§13.1)" };
      }
      return null;
    },
    arbitrary: (_fc, base) =>
      base.map((a) => ({ ...a, proof: { ...a.proof, method: a.body.type, body_hash: cbqs_request_body_hash_v1(a.body) } })),
  },
);

export const OpenSessionRequestV1 = struct<W.OpenSessionRequestV1>(
  "OpenSessionRequestV1",
  { request_id: Bytes32, stream_id: Bytes32, grant: StreamGrantV1 },
  {
    check: (o) => (bytesEqual(o.stream_id, o.grant.stream_id) ? null : { field: "stream_id", reason: "OpenSession.stream_id must equal grant.stream_id (§13.2)" }),
    arbitrary: (_fc, base) => base.map((o) => ({ ...o, stream_id: o.grant.stream_id.slice() })),
  },
);

export const CompleteSessionRequestV1 = struct<W.CompleteSessionRequestV1>("CompleteSessionRequestV1", {
  request_id: Bytes32,
  proof: SessionProofV1,
});

const body = (tag: number, codec: Codec<any>): VariantDef => ({ tag, kind: "newtype", field: "body", codec });

/** §13.2 client frame: version 1, tag 1..3, the body; one WebSocket message or HTTPS request body. */
export const CbqsClientFrameV1 = sizeLimited(
  versioned(
    "CbqsClientFrameV1",
    taggedUnion<W.CbqsClientFrameV1>("CbqsClientFrameV1", {
      OpenSession: body(1, OpenSessionRequestV1),
      CompleteSession: body(2, CompleteSessionRequestV1),
      Request: body(3, AuthenticatedRequestV1),
    }),
  ),
  MAX_WIRE_FRAME_BYTES,
  "a client frame",
);

export const SessionChallengeV1 = struct<W.SessionChallengeV1>("SessionChallengeV1", {
  request_id: Bytes32,
  context: CbqsSigningContextV1,
  served_at: FinalizedViewV1,
  stream_id: Bytes32,
  grant_id: Bytes32,
  provider_epoch: providerEpochV1,
  session_id: Bytes32,
  challenge: Bytes32,
  expires_at_ms: u64,
});

export const SessionOpenedV1 = struct<W.SessionOpenedV1>("SessionOpenedV1", {
  request_id: Bytes32,
  context: CbqsSigningContextV1,
  served_at: FinalizedViewV1,
  stream_id: Bytes32,
  grant_id: Bytes32,
  provider_epoch: providerEpochV1,
  session_id: Bytes32,
  expires_at_ms: u64,
});

/** §13.2 server frame: version 1, tag 1..9, the body; at most cbqs.max_wire_frame_bytes. */
export const CbqsServerFrameV1 = sizeLimited(
  versioned(
    "CbqsServerFrameV1",
    taggedUnion<W.CbqsServerFrameV1>("CbqsServerFrameV1", {
      SessionChallenge: body(1, SessionChallengeV1),
      SessionOpened: body(2, SessionOpenedV1),
      Response: body(3, CbqsResponseV1),
      Delivery: body(4, RecordDeliveryV1),
      Checkpoint: body(5, CheckpointFrameV1),
      BrokerEpochTransition: body(6, BrokerEpochTransitionV1),
      Error: body(7, CbqsErrorV1),
      DeliveryState: body(8, DeliveryStateUpdateV1),
      GroupState: body(9, GroupStateUpdateV1),
    }),
  ),
  MAX_WIRE_FRAME_BYTES,
  "a server frame",
);

/**
 * `u32 byte_length || value`, the length at most `maxBytes` and checked before the value is read;
 * the value must fill exactly that many bytes.
 */
function lengthPrefixed<T>(codec: Codec<T>, maxBytes: number, what: string): Codec<T> {
  return {
    ...codec,
    minSize: 4 + codec.minSize,
    write(w, v, path) {
      const inner = new Writer(w.paths);
      codec.write(inner, v, path);
      const bytes = inner.finish();
      if (bytes.length > maxBytes) throw new EncodeError(path, `${what} exceeds ${maxBytes} bytes`);
      w.uint(BigInt(bytes.length), 4);
      w.bytes(bytes);
    },
    read(r, path) {
      const at = r.pos;
      const n = r.small(4, path);
      if (n > maxBytes) r.fail("BoundExceeded", path, `${what} length ${n} exceeds ${maxBytes}`, at);
      r.need(n, path);
      const start = r.pos;
      const view = new Reader(r.bytes.subarray(0, start + n), r.paths);
      view.pos = start;
      const v = codec.read(view, path);
      if (view.pos !== start + n) r.fail("InvalidValue", path, `${what} length ${n} is not its canonical length ${view.pos - start}`, at);
      r.pos = view.pos;
      return v;
    },
  };
}

/** §13.2 long-poll response: `u32 frame_count`, then `u32 frame_byte_length || frame` per frame. */
export const CbqsServerFrameBatchV1 = sizeLimited(
  struct<W.CbqsServerFrameBatchV1>("CbqsServerFrameBatchV1", {
    frames: vec(lengthPrefixed(CbqsServerFrameV1, MAX_WIRE_FRAME_BYTES, "frame_byte_length"), { maxCount: MAX_SERVER_FRAMES_PER_BATCH }),
  }),
  MAX_SERVER_FRAME_BATCH_BYTES,
  "a server frame batch",
);
