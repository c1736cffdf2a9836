// Text echoed from input into a report — a fixture's file name, a difference quoting a value the
// fixture holds, a command's stderr — may contain anything. These functions make it safe for the
// formats: XML 1.0 forbids most control characters outright (one makes the whole file unreadable
// to a JUnit parser), HTML treats them as parse errors, and markup characters must never become
// markup (a file named `a<script>.json` is text, not a script).

/**
 * Characters shown as escapes rather than written: C0 controls other than tab, LF and CR; DEL and
 * the C1 controls; the noncharacters U+FFFE and U+FFFF; an unpaired surrogate (not encodable as
 * UTF-8). XML 1.0 allows none of the C0 ones nor the last two kinds; the rest are allowed but
 * invisible, shown the way the CLI's error lines show them.
 */
const UNSHOWABLE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * `text` with every unshowable character as `\xNN` or `\uNNNN` (the CLI's spelling). Above U+00FF
 * the only unshowable units are surrogates and U+FFFE/U+FFFF, so their hex has four digits as it is.
 */
export function visible(text: string): string {
  return text.replace(UNSHOWABLE, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16)}`;
  });
}

const XML_TEXT: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;" };
/** In an attribute a parser turns tab, LF and CR into spaces unless they are character references. */
const XML_ATTRIBUTE: Record<string, string> = { ...XML_TEXT, '"': "&quot;", "\t": "&#9;", "\n": "&#10;", "\r": "&#13;" };

/** Character data of an XML element. */
export function xmlText(text: string): string {
  return visible(text).replace(/[&<>]/g, (c) => XML_TEXT[c]!);
}

/** An XML attribute value, for a `"`-quoted attribute. */
export function xmlAttribute(text: string): string {
  return visible(text).replace(/[&<>"\t\n\r]/g, (c) => XML_ATTRIBUTE[c]!);
}

const HTML: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** HTML text or a quoted attribute value. */
export function html(text: string): string {
  return visible(text).replace(/[&<>"']/g, (c) => HTML[c]!);
}

/** One word for a POSIX shell: as it is when it has nothing a shell would read, else single-quoted. */
export function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:=@%+,-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
