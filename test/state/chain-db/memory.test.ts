// The in-memory ChainDb against the storage contract (the persistent one runs the same suite).
import { MemoryChainDb } from "../../../state/chain-db/memory.js";
import { describeChainDb } from "./conformance.js";

describeChainDb("MemoryChainDb", (retainBlocks) => new MemoryChainDb(retainBlocks));
