// Helpers of the LMDB environment tests (env.test.ts, env-failures.test.ts).
import { expect } from "vitest";
import { Env } from "../../../state/lmdb/env.js";
import { StoreError } from "../../../state/lmdb/errors.js";

/** The message of the StoreError `open` throws (it must throw one). */
export function refusal(open: () => unknown): string {
  try {
    open();
  } catch (err) {
    expect(err).toBeInstanceOf(StoreError);
    expect((err as Error).name).toBe("StoreError"); // what the CLI's one-line errors and logs show
    return (err as Error).message;
  }
  throw new Error("opened");
}

/** A store with one value written, closed. */
export function written(dir: string): string {
  const env = Env.open(dir);
  env.transaction(() => env.table("t").putSync(Buffer.from("k"), Buffer.from("v")));
  env.close();
  return dir;
}
