// `cbqs check endpoint`: CIP-39 §4.3 consensus admission of one provider endpoint URI.
import { echo } from "../bounds.js";
import { admitEndpointUri } from "../admission/endpoint.js";
import type { ProviderEndpointTransportV1 } from "../codec/types.js";
import { paramRow } from "../params.js";
import { EXIT_OK, EXIT_REJECT, exitCodes, option, report, requiredOption, UsageError } from "./common.js";
import type { CommandSpec } from "./define.js";

const TRANSPORTS: readonly ProviderEndpointTransportV1[] = ["WebSocketTls", "Https"];

export const commands: Readonly<Record<string, CommandSpec>> = {
  endpoint: {
    description: "admit or reject one provider endpoint URI under CIP-39 §4.3 (default URI bound)",
    arguments: [["<uri>", "the endpoint URI exactly as it would be registered"]],
    options: () => [requiredOption("--transport <transport>", "WebSocketTls or Https"), option("--json", "print the result as JSON")],
    exits: exitCodes("accepted", "rejected (the §4.3 rule number and reason are printed)", "unknown transport"),
    action: (uri: string, opts: { transport: string; json?: boolean }) => {
      const transport = TRANSPORTS.find((t) => t === opts.transport);
      if (transport === undefined) {
        throw new UsageError(`unknown transport "${echo(opts.transport)}" (expected WebSocketTls or Https)`);
      }
      const maxUriBytes = Number(paramRow("cbqs.max_provider_endpoint_uri_bytes")!.default);
      const result = admitEndpointUri(transport, uri, maxUriBytes);
      report(opts.json === true, result.ok ? "accept" : `reject: rule ${result.rule}: ${result.reason}`, result);
      process.exitCode = result.ok ? EXIT_OK : EXIT_REJECT;
    },
  },
};
