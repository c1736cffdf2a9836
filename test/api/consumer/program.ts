// A strict program using every entry point, compiled in a consumer project against the packed
// declarations by test/api/package.test.ts (under moduleResolution node16 and bundler).
import { createChain, TransactionRefused, type MinedBlock, type BlockRecord } from "cbqs-emulator";
import { accountKey, verifyStateProof, type StateProof, type ExclusionProof } from "cbqs-emulator/state";
import { codecs, encode, decode } from "cbqs-emulator/codec";
import { keccak256, ed25519VerifyStrict } from "cbqs-emulator/crypto";
import { createClient, ClientError, type Client } from "cbqs-emulator/client";

const chain = createChain();
const mined: MinedBlock = chain.mine();
const head: BlockRecord = chain.head();
const height: bigint = mined.block.height + head.height;
const proof: StateProof | ExclusionProof = chain.prove(accountKey(new Uint8Array(20)));
const valid: boolean = verifyStateProof(proof, head.state_root).valid;
const bytes: Uint8Array = encode(codecs.ProviderEndpointV1, { transport: "WebSocketTls", uri: "wss://cbqs.example/x" });
const uri: string = decode(codecs.ProviderEndpointV1, bytes).uri;
const digest: Uint8Array = keccak256(bytes);
const verdict: boolean = ed25519VerifyStrict(new Uint8Array(32), digest, new Uint8Array(64));
try {
  chain.send(new Uint8Array(1));
} catch (err) {
  if (err instanceof TransactionRefused) console.log(err.code);
}
const client: Client = createClient("http://127.0.0.1:9");
console.log(height, valid, uri, verdict, client.url, ClientError.name);

// A chain id is a bigint: the declarations say so, and the check refuses the program that forgets.
// @ts-expect-error TS2322: bigint is not assignable to string
export const id: string = chain.chainId;
