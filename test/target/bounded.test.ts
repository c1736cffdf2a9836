// What is read from an implementation under test is bounded (src/target/bounded.ts), checked on
// the pieces themselves: answer lines are split in one pass over the bytes and refused past their
// bound before the line ends; output files are opened without blocking, read only when they are
// regular files, and never past their bound.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { MAX_ANSWER_BYTES } from "../../src/bounds.js";
import { LineSplitter } from "../../src/lines.js";
import { AnswerLines, lastLine, readOutputFile, said, TargetError } from "../../src/target/bounded.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "cbqs-bounded-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const text = (bytes: Uint8Array | null) => (bytes === null ? null : Buffer.from(bytes).toString("utf8"));

describe("answer lines of a t8n server", () => {
  it("are split in one pass: a 32 MiB line in 64 KiB chunks is searched once per byte and joined once", () => {
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    const chunks = 512;
    const scanned = { bytes: 0 };
    const indexOf = vi.spyOn(Buffer.prototype, "indexOf").mockImplementation(function (this: Buffer, value, from) {
      scanned.bytes += this.length - Number(from ?? 0);
      return Uint8Array.prototype.indexOf.call(this, value as number, from as number);
    });
    const concat = vi.spyOn(Buffer, "concat");
    try {
      const lines = new AnswerLines();
      for (let i = 0; i < chunks; i++) lines.push(chunk);
      expect(lines.next()).toBeNull();
      lines.push(Buffer.from("b\n"));
      const line = lines.next()!;
      expect(line.length).toBe(chunks * chunk.length + 1);
      expect(line[0]).toBe(0x61);
      expect(line[line.length - 1]).toBe(0x62);
      // Every byte looked at once (a scan of the whole held line per chunk would be ~256 times as many).
      expect(scanned.bytes).toBe(chunks * chunk.length + 2);
      expect(concat).toHaveBeenCalledTimes(1);
    } finally {
      indexOf.mockRestore();
      concat.mockRestore();
    }
  });

  it("come out in order, several per chunk or one across chunks, a CR kept", () => {
    const lines = new AnswerLines();
    lines.push(Buffer.from('{"id":1}\n{"id"'));
    lines.push(Buffer.from(':2}\r\n\n{"id":3}'));
    expect([lines.next(), lines.next(), lines.next(), lines.next()].map(text)).toEqual(['{"id":1}', '{"id":2}\r', "", null]);
    lines.push(Buffer.from("\n"));
    expect(text(lines.next())).toBe('{"id":3}');
  });

  it(`past ${MAX_ANSWER_BYTES} bytes without a newline is refused at once, before the line ends`, () => {
    const mib = Buffer.alloc(1024 * 1024, 0x20);
    const lines = new AnswerLines();
    for (let i = 0; i < MAX_ANSWER_BYTES / mib.length; i++) lines.push(mib);
    expect(() => lines.push(Buffer.from("x"))).toThrow(new TargetError(`wrote an answer line of more than ${MAX_ANSWER_BYTES} bytes (${MAX_ANSWER_BYTES + 1} so far) — above the bound on what is read from a target`));
  });

  it("a line of exactly the bound is read; one byte more is not", () => {
    const exact = new LineSplitter(4);
    expect(exact.push(Buffer.from("abcd\nabcde\n")).map((l) => (l.kind === "line" ? text(l.bytes) : l))).toEqual(["abcd", { kind: "too_long", bytes: 5 }]);
    expect(exact.end()).toBeNull();
    expect(exact.push(Buffer.from("ab"))).toEqual([]);
    expect(exact.pending).toBe(2);
    expect(text((exact.end() as { bytes: Uint8Array }).bytes)).toBe("ab");
  });
});

describe("output files of a per-call t8n", () => {
  const path = (name: string) => join(dir, name);

  it("a regular file is read whole; a missing one is null, not an error", () => {
    writeFileSync(path("result.json"), '{"format":"cbqs-t8n-result/v1"}\n');
    expect(text(readOutputFile(path("result.json"), "--output.result"))).toBe('{"format":"cbqs-t8n-result/v1"}\n');
    expect(readOutputFile(path("absent.json"), "--output.result")).toBeNull();
  });

  it("a FIFO is refused without waiting for a writer", () => {
    execFileSync("mkfifo", [path("fifo")]);
    expect(() => readOutputFile(path("fifo"), "--output.result")).toThrow(new TargetError("--output.result is a FIFO, not a regular file"));
  });

  it("a link to an endless device is followed and refused; a directory is refused", () => {
    symlinkSync("/dev/zero", path("zero"));
    expect(() => readOutputFile(path("zero"), "--output.alloc")).toThrow(new TargetError("--output.alloc is a character device, not a regular file"));
    mkdirSync(path("folder"));
    expect(() => readOutputFile(path("folder"), "--output.alloc")).toThrow(new TargetError("--output.alloc is a directory, not a regular file"));
  });

  it("a file larger than the bound is refused by its size, before a byte is read", () => {
    writeFileSync(path("big.json"), "");
    truncateSync(path("big.json"), 700 * 1000 * 1000);
    expect(() => readOutputFile(path("big.json"), "--output.result")).toThrow(new TargetError(`--output.result has 700000000 bytes, above the ${MAX_ANSWER_BYTES}-byte bound on what is read from a target`));
  });

  it("a file that holds more than its size said is read only up to the bound (a /proc file says 0 bytes)", () => {
    expect(() => readOutputFile("/proc/self/status", "--output.result", 100)).toThrow(new TargetError("--output.result has more than 100 bytes, above the 100-byte bound on what is read from a target"));
    expect(text(readOutputFile("/proc/self/status", "--output.result", 1 << 20))).toMatch(/^Name:/);
  });

  it("a file that cannot be opened is named with the reason", () => {
    writeFileSync(path("plain"), "{}");
    expect(() => readOutputFile(path("plain/result.json"), "--output.result")).toThrow(new TargetError("--output.result cannot be opened: a parent of it is not a directory (ENOTDIR)"));
  });
});

describe("a target's own words in an error line", () => {
  it("are one line, cut to the CLI's echo bound with their length said", () => {
    expect(said("a\n  b\tc ")).toBe("a b c");
    const long = "x".repeat(1_000_000);
    expect(said(long)).toBe(`${"x".repeat(200)}… (1000000 characters)`);
    expect(lastLine(`first\n${long}\n\n`)).toBe(`${"x".repeat(200)}… (1000000 characters)`);
    expect(lastLine("")).toBe("");
  });
});
