// Shared by RegisterProvider and UpdateProvider: §4.3 consensus endpoint admission against the
// LIVE bounds.
import { admitEndpoints } from "../src/admission/endpoint.js";
import type { ProviderEndpointV1 } from "../src/codec/types.js";
import type { GovernanceBounds } from "../src/engine/context.js";
import { reject } from "../src/engine/errors.js";

export function admitProviderEndpoints(endpoints: readonly ProviderEndpointV1[], bounds: GovernanceBounds): void {
  const result = admitEndpoints(endpoints, {
    maxEndpoints: Number(bounds.get("cbqs.max_provider_endpoints")),
    maxUriBytes: Number(bounds.get("cbqs.max_provider_endpoint_uri_bytes")),
  });
  if (!result.ok) reject("EndpointRejected", `endpoint ${result.index}: §4.3 rule ${result.rule}: ${result.reason}`);
}
