// Splitting a byte stream into LF-terminated lines of bounded length, in time linear in the bytes
// read: each chunk is searched once for its newlines and a line's pieces are joined once, when it
// ends. Both sides of the cbqs-t8n-server/v1 protocol use it: the server for request lines
// (src/harness/t8n-server.ts), the client for answer lines (src/target/server-target.ts).

export type Line = { kind: "line"; bytes: Uint8Array } | { kind: "too_long"; bytes: number };

/**
 * Lines of at most `max` bytes (the LF not counted; a CR before it is kept). A longer line is not
 * buffered: its bytes are counted and dropped up to its LF, and it comes out as `too_long`.
 */
export class LineSplitter {
  private parts: Uint8Array[] = [];
  private held = 0;
  /** Bytes of a line already over the bound (being discarded), or -1. */
  private dropping = -1;

  constructor(readonly max: number) {}

  /** The lines `chunk` completes, in order; its unterminated tail is held for the next chunk. */
  push(chunk: Uint8Array): Line[] {
    const done: Line[] = [];
    let from = 0;
    for (let nl = chunk.indexOf(10, from); nl >= 0; nl = chunk.indexOf(10, from)) {
      this.take(chunk.subarray(from, nl));
      from = nl + 1;
      done.push(this.cut());
    }
    this.take(chunk.subarray(from));
    return done;
  }

  /** The unterminated last line at the end of the stream, if any. */
  end(): Line | null {
    return this.held > 0 || this.dropping >= 0 ? this.cut() : null;
  }

  /** Bytes held of the line in progress (or counted, when it is being dropped). */
  get pending(): number {
    return this.dropping >= 0 ? this.dropping : this.held;
  }

  private take(piece: Uint8Array): void {
    if (this.dropping >= 0) this.dropping += piece.length;
    else if (this.held + piece.length > this.max) {
      this.dropping = this.held + piece.length;
      this.parts = [];
      this.held = 0;
    } else if (piece.length > 0) {
      this.parts.push(piece);
      this.held += piece.length;
    }
  }

  private cut(): Line {
    const line: Line = this.dropping >= 0 ? { kind: "too_long", bytes: this.dropping } : { kind: "line", bytes: Buffer.concat(this.parts, this.held) };
    this.parts = [];
    this.held = 0;
    this.dropping = -1;
    return line;
  }
}
