// The one JSON reader of every document `cbqs` reads (docs/reference/formats/fixture.md §0). Strict where
// JSON.parse is lenient, so two implementations cannot read the same bytes two ways:
//   - a key repeated in one object is refused at any depth (JSON.parse keeps the last one),
//     the error naming its JSON path: `$.blocks[3].receipts[0].status: duplicate key`;
//   - numbers are unsigned integers up to 2^53 − 1 written without sign, fraction or exponent
//     (every cbqs format writes larger integers as decimal strings);
//   - strings are strict UTF-8; a lone surrogate escape (\ud800) is refused; a byte-order mark
//     before the document is refused;
//   - nesting is bounded (MAX_JSON_DEPTH) and nothing recurses on it: the parser is a state
//     machine over an explicit stack, fed bytes in chunks of any size;
//   - "__proto__" is an ordinary own key, never a prototype.
// Large documents stream: the caller names arrays (`$.entries`, `$.blocks`) whose elements are
// handed over one at a time as they complete and are not kept, so a 200 MB dump never exists
// as one string or one tree.
import { echo, MAX_DOCUMENT_BYTES, MAX_JSON_DEPTH, MAX_JSON_STRING_BYTES } from "../bounds.js";
import { concatBytes } from "../bytes.js";

export type Json = null | boolean | number | string | Json[] | JsonObject;
export type JsonObject = { [key: string]: Json };

/** Malformed JSON, or JSON that breaks a rule above: `path` is where, `reason` what. */
export class JsonError extends Error {
  override name = "JsonError";
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${shortPath(path)}: ${reason}`);
  }
}

/** Content after a complete document: a JSON-lines file read as one document, among others. */
export class TrailingContentError extends JsonError {
  override name = "TrailingContentError";
}

/** A path fit for one error line: a very deep one keeps its start and its end. */
export function shortPath(path: string): string {
  return path.length <= 160 ? path : `${path.slice(0, 60)}…${path.slice(-80)}`;
}

export interface ParseOptions {
  maxDepth?: number;
  maxBytes?: number;
  maxStringBytes?: number;
  /**
   * Values (scalars, arrays and objects, each member's value counted once) the document may hold.
   * A reader of someone else's answer sets it from the answer's size (valuesFor): a text of tiny
   * values (`[[],[],…]`) costs some 25 bytes of heap per byte read, a real answer far less.
   */
  maxValues?: number;
  /**
   * Arrays, by JSON path ("$.entries", "$.blocks"), whose elements go to the callback one at a
   * time as each completes. The callback returns true when it took the element (it is then not
   * kept: the array in the result stays empty), false to keep it in the array. `root` is the
   * document read so far (the members before this array: a loader checks `format` there).
   */
  streams?: Record<string, StreamCallback>;
}

export type StreamCallback = (element: Json, index: number, root: JsonObject | Json[]) => boolean;

const enum Expect {
  Value,
  ValueOrEnd, // after "["
  KeyOrEnd, // after "{"
  Key, // after "," in an object
  Colon,
  CommaOrEnd,
  Done,
}

interface Frame {
  array: boolean;
  /** The object or array being built (an array is left empty when its elements stream). */
  container: Json[] | JsonObject;
  /** Object: the key whose value comes next. Array: the next element's index. */
  key: string;
  index: number;
  stream: StreamCallback | undefined;
}

/** A token cut by the end of a chunk, completed by the next one. */
type Partial =
  | { kind: "string"; parts: Uint8Array[]; bytes: number; escaped: boolean; high: boolean; escapePending: boolean }
  | { kind: "number"; text: string; length: number }
  | { kind: "literal"; text: string };

const LATIN1 = new TextDecoder("latin1");
// ignoreBOM: a U+FEFF inside a string is part of it (stripping it would make two spellings of one string).
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The JSON path of an object member or array element. */
export function childPath(path: string, key: string | number): string {
  if (typeof key === "number") return `${path}[${key}]`;
  return IDENTIFIER.test(key) && key.length <= 120 ? `${path}.${key}` : `${path}[${JSON.stringify(echo(key, 120))}]`;
}

/** Shows one input byte in an error line. */
function showByte(b: number): string {
  return b >= 0x21 && b <= 0x7e ? `'${String.fromCharCode(b)}'` : `byte 0x${b.toString(16).padStart(2, "0")}`;
}

export class JsonParser {
  private readonly stack: Frame[] = [];
  private expect = Expect.Value;
  private root: Json | undefined;
  private partial: Partial | null = null;
  private offset = 0; // bytes consumed before the current chunk
  private readonly maxDepth: number;
  private readonly maxBytes: number;
  private readonly maxStringBytes: number;
  private readonly maxValues: number;
  private values = 0;
  private readonly streams: Record<string, StreamCallback>;
  private readonly hasStreams: boolean;

  constructor(options: ParseOptions = {}) {
    this.maxDepth = options.maxDepth ?? MAX_JSON_DEPTH;
    this.maxBytes = options.maxBytes ?? MAX_DOCUMENT_BYTES;
    this.maxStringBytes = options.maxStringBytes ?? MAX_JSON_STRING_BYTES;
    this.maxValues = options.maxValues ?? Infinity;
    this.streams = options.streams ?? {};
    this.hasStreams = Object.keys(this.streams).length > 0;
  }

  /**
   * The path of the value being read (for errors and for matching streams): every open container,
   * and the innermost one's current member only while its value is being read.
   */
  path(): string {
    let p = "$";
    const last = this.stack.length - 1;
    this.stack.forEach((f, i) => {
      const inMember = i < last || (f.array ? this.expect === Expect.Value || this.expect === Expect.ValueOrEnd : this.expect === Expect.Colon || this.expect === Expect.Value);
      if (inMember) p = childPath(p, f.array ? f.index : f.key);
    });
    return p;
  }

  private fail(reason: string, at?: number): never {
    throw new JsonError(this.path(), at === undefined ? reason : `${reason} at byte ${at}`);
  }

  /** Text that is not JSON at all (as opposed to JSON that breaks one of the rules above). */
  private syntax(reason: string, at?: number): never {
    return this.fail(`not valid JSON: ${reason}`, at);
  }

  feed(chunk: Uint8Array): void {
    if (this.offset + chunk.length > this.maxBytes) {
      throw new JsonError("$", `the document exceeds the ${this.maxBytes}-byte bound`);
    }
    const buf = chunk;
    const n = buf.length;
    let i = 0;
    if (this.offset === 0 && n >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) {
      throw new JsonError("$", "not valid JSON: a byte-order mark (\ufeff, U+FEFF) before the document (RFC 8259 §8.1)");
    }
    if (this.partial !== null) i = this.resume(buf, 0);
    while (i < n) {
      const c = buf[i]!;
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) {
        i++;
        continue;
      }
      const at = this.offset + i;
      if (c === 0x22) {
        if (this.expect !== Expect.Value && this.expect !== Expect.ValueOrEnd && this.expect !== Expect.KeyOrEnd && this.expect !== Expect.Key) {
          this.unexpected(c, at);
        }
        this.partial = { kind: "string", parts: [], bytes: 0, escaped: false, high: false, escapePending: false };
        i = this.scanString(buf, i + 1);
        continue;
      }
      if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
        this.valueStart(c, at);
        this.partial = { kind: "number", text: "", length: 0 };
        i = this.scanNumber(buf, i);
        continue;
      }
      if (c >= 0x61 && c <= 0x7a) {
        this.valueStart(c, at);
        this.partial = { kind: "literal", text: "" };
        i = this.scanLiteral(buf, i);
        continue;
      }
      switch (c) {
        case 0x7b: // {
          this.valueStart(c, at);
          this.push(false, {} as JsonObject, at);
          this.expect = Expect.KeyOrEnd;
          break;
        case 0x5b: // [
          this.valueStart(c, at);
          this.push(true, [], at);
          this.expect = Expect.ValueOrEnd;
          break;
        case 0x7d: // }
          if (this.expect !== Expect.KeyOrEnd && this.expect !== Expect.CommaOrEnd) this.unexpected(c, at);
          if (this.stack[this.stack.length - 1]!.array) this.unexpected(c, at);
          this.pop();
          break;
        case 0x5d: // ]
          if (this.expect !== Expect.ValueOrEnd && this.expect !== Expect.CommaOrEnd) this.unexpected(c, at);
          if (!this.stack[this.stack.length - 1]!.array) this.unexpected(c, at);
          this.pop();
          break;
        case 0x2c: // ,
          if (this.expect !== Expect.CommaOrEnd) this.unexpected(c, at);
          this.expect = this.stack[this.stack.length - 1]!.array ? Expect.Value : Expect.Key;
          break;
        case 0x3a: // :
          if (this.expect !== Expect.Colon) this.unexpected(c, at);
          this.expect = Expect.Value;
          break;
        default:
          this.unexpected(c, at);
      }
      i++;
    }
    this.offset += n;
  }

  /** The document's value; an incomplete document is an error. */
  end(): Json {
    if (this.partial !== null) {
      if (this.partial.kind === "string") this.syntax("unexpected end of input inside a string");
      const p = this.partial;
      this.partial = null;
      if (p.kind === "number") this.finishNumber(p, this.offset);
      else this.finishLiteral(p.text, this.offset);
    }
    if (this.expect !== Expect.Done) {
      this.syntax(this.root === undefined && this.stack.length === 0 && this.offset === 0 ? "empty document" : "unexpected end of input");
    }
    return this.root!;
  }

  private unexpected(c: number, at: number): never {
    if (this.expect === Expect.Done) throw new TrailingContentError("$", `not valid JSON: unexpected ${showByte(c)} after the document's value at byte ${at}`);
    const wanted: Record<Expect, string> = {
      [Expect.Value]: "a value",
      [Expect.ValueOrEnd]: "a value or ']'",
      [Expect.KeyOrEnd]: "a key or '}'",
      [Expect.Key]: "a key",
      [Expect.Colon]: "':'",
      [Expect.CommaOrEnd]: "',' or the end of the " + (this.stack[this.stack.length - 1]?.array ? "array" : "object"),
      [Expect.Done]: "",
    };
    return this.syntax(`expected ${wanted[this.expect]}, found ${showByte(c)}`, at);
  }

  private valueStart(c: number, at: number): void {
    if (this.expect !== Expect.Value && this.expect !== Expect.ValueOrEnd) this.unexpected(c, at);
  }

  private push(array: boolean, container: Json[] | JsonObject, at: number): void {
    if (this.stack.length >= this.maxDepth) this.fail(`nesting deeper than ${this.maxDepth} levels`, at);
    const stream = array && this.hasStreams ? this.streams[this.path()] : undefined;
    this.stack.push({ array, container, key: "", index: 0, stream });
  }

  private pop(): void {
    const f = this.stack.pop()!;
    this.value(f.container);
  }

  /** A complete value: the root, an array element, or an object member. */
  private value(v: Json): void {
    if (++this.values > this.maxValues) throw new JsonError("$", `more values than a document of its size may hold (at most ${this.maxValues})`);
    const top = this.stack[this.stack.length - 1];
    if (top === undefined) {
      this.root = v;
      this.expect = Expect.Done;
      return;
    }
    if (top.array) {
      if (top.stream === undefined || !top.stream(v, top.index, this.stack[0]!.container)) (top.container as Json[]).push(v);
      top.index++;
    } else if (top.key === "__proto__") {
      Object.defineProperty(top.container, "__proto__", { value: v, writable: true, enumerable: true, configurable: true });
    } else {
      (top.container as JsonObject)[top.key] = v;
    }
    this.expect = Expect.CommaOrEnd;
  }

  private string(s: string, at: number): void {
    if (this.expect === Expect.KeyOrEnd || this.expect === Expect.Key) {
      const top = this.stack[this.stack.length - 1]!;
      top.key = s;
      this.expect = Expect.Colon;
      if (Object.hasOwn(top.container, s)) this.fail("duplicate key (a key may appear only once in an object)", at);
    } else {
      this.value(s);
    }
  }

  private resume(buf: Uint8Array, i: number): number {
    const p = this.partial!;
    if (p.kind === "string") {
      if (p.escapePending) {
        p.escapePending = false;
        i++;
      }
      return this.scanString(buf, i, true);
    }
    return p.kind === "number" ? this.scanNumber(buf, i) : this.scanLiteral(buf, i);
  }

  /** Scans string content from `i` (after the opening quote, or resuming); returns the next index. */
  private scanString(buf: Uint8Array, i: number, resuming = false): number {
    const p = this.partial as Extract<Partial, { kind: "string" }>;
    const start = resuming ? 0 : i;
    const n = buf.length;
    for (let j = i; j < n; j++) {
      const b = buf[j]!;
      if (b === 0x22) {
        const raw = p.parts.length === 0 ? buf.subarray(start, j) : concatBytes(...p.parts, buf.subarray(start, j));
        this.partial = null;
        this.string(this.decodeString(raw, p, this.offset + j), this.offset + j);
        return j + 1;
      }
      if (b === 0x5c) {
        p.escaped = true;
        if (j + 1 === n) {
          p.escapePending = true;
          break;
        }
        j++;
      } else if (b < 0x20) {
        this.syntax(`control character 0x${b.toString(16).padStart(2, "0")} in a string (escape it)`, this.offset + j);
      } else if (b >= 0x80) {
        p.high = true;
      }
    }
    p.bytes += n - start;
    if (p.bytes > this.maxStringBytes) this.fail(`a string longer than the ${this.maxStringBytes}-byte bound`);
    // A copy: the caller may reuse the chunk's memory for the next read.
    p.parts.push(Uint8Array.prototype.slice.call(buf, start, n));
    return n;
  }

  private decodeString(raw: Uint8Array, p: { escaped: boolean; high: boolean }, at: number): string {
    let s: string;
    if (!p.high) s = LATIN1.decode(raw);
    else {
      try {
        s = UTF8.decode(raw);
      } catch {
        return this.syntax("invalid UTF-8 in a string", at);
      }
    }
    return p.escaped ? this.unescape(s, at) : s;
  }

  private unescape(s: string, at: number): string {
    let out = "";
    let from = 0;
    for (let k = s.indexOf("\\"); k !== -1; k = s.indexOf("\\", from)) {
      out += s.slice(from, k);
      const e = s[k + 1];
      switch (e) {
        case '"':
        case "\\":
        case "/":
          out += e;
          from = k + 2;
          break;
        case "b":
          out += "\b";
          from = k + 2;
          break;
        case "f":
          out += "\f";
          from = k + 2;
          break;
        case "n":
          out += "\n";
          from = k + 2;
          break;
        case "r":
          out += "\r";
          from = k + 2;
          break;
        case "t":
          out += "\t";
          from = k + 2;
          break;
        case "u": {
          const unit = hex4(s, k + 2);
          if (unit < 0) this.syntax("invalid \\u escape in a string", at);
          from = k + 6;
          if (unit >= 0xd800 && unit <= 0xdbff) {
            const low = s[from] === "\\" && s[from + 1] === "u" ? hex4(s, from + 2) : -1;
            if (low < 0xdc00 || low > 0xdfff) this.fail(`lone surrogate \\u${unit.toString(16)} in a string`, at);
            out += String.fromCharCode(unit, low);
            from += 6;
          } else if (unit >= 0xdc00 && unit <= 0xdfff) {
            this.fail(`lone surrogate \\u${unit.toString(16)} in a string`, at);
          } else {
            out += String.fromCharCode(unit);
          }
          break;
        }
        default:
          this.syntax(`invalid escape \\${echo(e ?? "", 1)} in a string`, at);
      }
    }
    return out + s.slice(from);
  }

  private scanNumber(buf: Uint8Array, i: number): number {
    const p = this.partial as Extract<Partial, { kind: "number" }>;
    const n = buf.length;
    let j = i;
    while (j < n) {
      const b = buf[j]!;
      if ((b >= 0x30 && b <= 0x39) || b === 0x2d || b === 0x2b || b === 0x2e || b === 0x45 || b === 0x65) j++;
      else break;
    }
    // Bounded: a 100,000-digit number is not accumulated past what its error line can show.
    if (p.text.length < 64) p.text += LATIN1.decode(buf.subarray(i, Math.min(j, i + 64 - p.text.length)));
    p.length += j - i;
    if (j === n) return n;
    this.partial = null;
    this.finishNumber(p, this.offset + j);
    return j;
  }

  private finishNumber(p: { text: string; length: number }, at: number): void {
    const { text } = p;
    if (p.length <= 16 && /^(0|[1-9][0-9]*)$/.test(text)) {
      const v = Number(text);
      if (Number.isSafeInteger(v)) {
        this.value(v);
        return;
      }
    }
    // The text is kept only to 64 characters (scanNumber), so the length said is the counted one, not echo()'s.
    const shown = p.length <= 24 ? text : `${text.slice(0, 24)}… (${p.length} characters)`;
    if (p.length <= 64 && !/^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/.test(text)) this.syntax(`invalid number ${shown}`, at);
    this.fail(
      `number ${shown} is not an unsigned integer up to 2^53 - 1 written without sign, fraction or exponent ` +
        "(cbqs documents write larger integers as decimal strings)",
      at,
    );
  }

  private scanLiteral(buf: Uint8Array, i: number): number {
    const p = this.partial as Extract<Partial, { kind: "literal" }>;
    const n = buf.length;
    let j = i;
    while (j < n && buf[j]! >= 0x61 && buf[j]! <= 0x7a && p.text.length + (j - i) < 8) j++;
    p.text += LATIN1.decode(buf.subarray(i, j));
    if (j === n) return n;
    this.partial = null;
    this.finishLiteral(p.text, this.offset + j);
    return j;
  }

  private finishLiteral(text: string, at: number): void {
    if (text === "true") this.value(true);
    else if (text === "false") this.value(false);
    else if (text === "null") this.value(null);
    else this.syntax(`invalid literal ${echo(text, 8)} (true, false or null)`, at);
  }
}

function hex4(s: string, at: number): number {
  const h = s.slice(at, at + 4);
  return /^[0-9a-fA-F]{4}$/.test(h) ? parseInt(h, 16) : -1;
}

/** Parses one complete JSON text (a string, or its UTF-8 bytes). */
/**
 * The maxValues of an answer of `bytes` bytes from someone else: one value per 16 bytes, at least
 * 4,096. Our own documents hold one value per 24 bytes or more (a receipt's fields, a post-state's
 * decoded views: 29–36), so no real answer reaches it; the heap a text of tiny values can take is
 * then a few times its size, not 25.
 */
export function valuesFor(bytes: number): number {
  return Math.max(4096, Math.floor(bytes / 16));
}

export function parseJson(text: string | Uint8Array, options: ParseOptions = {}): Json {
  const parser = new JsonParser(options);
  parser.feed(typeof text === "string" ? Buffer.from(text, "utf8") : text);
  return parser.end();
}
