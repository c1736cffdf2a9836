// `cbqs t8n-adapter "<command>"`: the cbqs-t8n-server/v1 protocol (src/harness/t8n-server.ts)
// in front of a per-call t8n command (docs/reference/formats/fixture.md §4), so an implementation that only has
// the per-call form can be driven as a server. Each apply is one invocation, run exactly as
// `cbqs fuzz` runs it (src/target/target.ts); a session keeps the post-state file the command
// wrote and hands it back as the next block's --input.alloc, so the command commits each
// block's pre-state as one batch: the hello line says session_state_root "per_block".
import { CommandTarget } from "./command-target.js";
import { TargetError, type TargetOutput } from "./target.js";
import { RequestError, type AllocInput, type BlockInput, type T8nBackend } from "../harness/t8n-server.js";

/** A session: the text of the state the next block starts from. */
interface AdapterSession {
  alloc: string;
}

export class CommandBackend implements T8nBackend<AdapterSession> {
  readonly sessionStateRoot = "per_block";
  readonly implementation: string;
  private readonly target: CommandTarget;

  constructor(command: string, timeoutMs: number) {
    this.implementation = `cbqs t8n-adapter ${JSON.stringify(command)}`;
    this.target = new CommandTarget(command, timeoutMs);
  }

  private async run(alloc: string, block: BlockInput): Promise<TargetOutput> {
    try {
      return await this.target.runTexts({ alloc, txs: JSON.stringify(block.sent.txs), env: JSON.stringify(block.sent.env) });
    } catch (err) {
      if (err instanceof TargetError) throw new RequestError("t8n_failed", `the t8n command ${err.message}`);
      throw err;
    }
  }

  async apply(alloc: AllocInput, block: BlockInput, wantPostState: boolean): Promise<{ result: unknown; post_state?: unknown }> {
    const out = await this.run(JSON.stringify(alloc.sent), block);
    return { result: out.result, ...(wantPostState ? { post_state: out.alloc } : {}) };
  }

  /** Runs nothing: the alloc (checked by the protocol) is the first block's --input.alloc. */
  open(alloc: AllocInput): Promise<AdapterSession> {
    return Promise.resolve({ alloc: JSON.stringify(alloc.sent) });
  }

  async applyBlock(session: AdapterSession, block: BlockInput): Promise<unknown> {
    const out = await this.run(session.alloc, block);
    session.alloc = out.allocText;
    return out.result;
  }

  postState(session: AdapterSession): Promise<unknown> {
    return Promise.resolve(JSON.parse(session.alloc) as unknown);
  }

  /** Removes the temporary directory (and stops a command still running). */
  /** A stop signal: the invocation under way is ended now, its request answered t8n_failed. */
  stop(signal: string): void {
    this.target.stop(`the adapter received ${signal}`);
  }

  close(): void {
    this.target.close();
  }
}
