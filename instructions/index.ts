// SYS_CBQS dispatch by action tag (CIP-39 §5): one handler per instruction.
import type { CbqsInstructionV1 } from "../src/codec/types.js";
import type { TxContext } from "../src/engine/context.js";
import { activateKeyGeneration } from "./activate-key-generation.js";
import { closeStream } from "./close-stream.js";
import { createStream } from "./create-stream.js";
import { registerProvider } from "./register-provider.js";
import { setProviderStatus } from "./set-provider-status.js";
import { settleStreamRent } from "./settle-stream-rent.js";
import { topUpStream } from "./top-up-stream.js";
import { updateProvider } from "./update-provider.js";
import { updateStream } from "./update-stream.js";

export function runInstruction(ctx: TxContext, instruction: CbqsInstructionV1): void {
  switch (instruction.type) {
    case "RegisterProvider": // tag 1
      return registerProvider(ctx, instruction.args);
    case "UpdateProvider": // tag 2
      return updateProvider(ctx, instruction.args);
    case "SetProviderStatus": // tag 3
      return setProviderStatus(ctx, instruction.args);
    case "CreateStream": // tag 4
      return createStream(ctx, instruction.args);
    case "UpdateStream": // tag 5
      return updateStream(ctx, instruction.args);
    case "TopUpStream": // tag 6
      return topUpStream(ctx, instruction.args);
    case "SettleStreamRent": // tag 7
      return settleStreamRent(ctx, instruction.args);
    case "CloseStream": // tag 8
      return closeStream(ctx, instruction.args);
    case "ActivateKeyGeneration": // tag 9
      return activateKeyGeneration(ctx, instruction.args);
  }
}
