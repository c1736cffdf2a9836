// The SHA-256 of fixtures/broker/cip-39-helper-vectors-v1.json, pinned on purpose: the vectors are
// ours (computed by this implementation from the CIP-39 §12.2 definitions, not published by the
// spec's authors), so a change to any helper output changes this digest and
// test/codec/helper-vectors.test.ts fails until the change is deliberate and this constant is
// updated with the regenerated file (node dist/scripts/gen-helper-vectors.js).
export const HELPER_VECTORS_SHA256 = "48534654f8fdd78d5e7eeae419151e48cfff978aa3ebbfc5c7eb8b547b6b9e7f";
