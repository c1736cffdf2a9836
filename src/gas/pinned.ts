// The SHA-256 of gas-vectors/cip-39-gas-vectors-v1.json, pinned on purpose: this is our own
// published artifact (the upstream CIP-39 file, 8bfaf1d4…, is not published anywhere we can read,
// so ours is not it and hashes differently). Any change to a metered cost, a reservation, a
// canonical plan or a vector's pre-state changes this digest; `cbqs check gas-vectors verify` fails until
// the change is deliberate and this constant is updated with it. The run document's
// `gas_vectors_sha256` field reports this value.
export const GAS_VECTORS_SHA256 = "a1dcc1c69638e4e7e6479ef3a9b6803b5d236142ff119e7e23590a8e35c25251";
