// Building the page's elements. Text always goes in as text (textContent), never as markup: ids,
// topics and error messages come from the node and are shown, never interpreted.

export type Child = Node | string | null | undefined | false;

/** An element with attributes (a `class`, `href`, `data-*`, …) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) el.setAttribute(name, value);
  append(el, ...children);
  return el;
}

export function append(parent: Node, ...children: Child[]): void {
  for (const c of children) if (c !== null && c !== undefined && c !== false) parent.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
}

/** A link inside the page (`#/block/5`). */
export const link = (route: string, text: string, cls = ""): HTMLAnchorElement => h("a", { href: `#/${route}`, ...(cls === "" ? {} : { class: cls }) }, text);

/** A two-column table of named values (`cls` adds a class: "summary" for a page's lead). */
export function fields(rows: Array<[string, Child]>, cls = ""): HTMLTableElement {
  return h("table", { class: cls === "" ? "fields" : `fields ${cls}` }, h("tbody", {}, ...rows.map(([name, value]) => h("tr", {}, h("th", {}, name), h("td", {}, value)))));
}

/** A table with a header row; each row a list of cells. */
export function table(headers: string[], rows: Child[][], cls = ""): HTMLTableElement {
  return h(
    "table",
    cls === "" ? {} : { class: cls },
    h("thead", {}, h("tr", {}, ...headers.map((x) => h("th", {}, x)))),
    h("tbody", {}, ...rows.map((cells) => h("tr", {}, ...cells.map((c) => h("td", {}, c))))),
  );
}

/** Replaces the contents of `el`. */
export function replace(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  append(el, ...children);
}
