// The explorer page served at the node's `/` (docs/guides/run-a-devnet.md "The explorer"). One page, routed by
// the URL's fragment (#/block/5, #/stream/0x…); it follows the chain through GET /subscribe, so a
// new block is listed as soon as the node produces it, and searches with GET /search.
import { ApiError, getJson, seg, type BlockSummary } from "./api.js";
import { h, replace } from "./dom.js";
import { amount } from "./format.js";
import { accountView, blockView, homeView, providerView, streamView, txView, type View } from "./views.js";

const main = document.getElementById("view")!;
const live = document.getElementById("live")!;
let current: View | undefined;
/** The newest block the subscription announced: a page that was loading then is told of it once shown. */
let latest: BlockSummary | undefined;
/** Each navigation's number: a slow page that finishes after a later navigation is not shown. */
let navigation = 0;

const PAGES: Record<string, (main: HTMLElement, id: string) => Promise<View>> = {
  block: blockView,
  tx: txView,
  stream: streamView,
  provider: providerView,
  account: accountView,
};

/** "#/stream/owner%3A0x…" → the stream page of that id; anything else → the latest blocks. */
async function route(): Promise<void> {
  const n = ++navigation;
  const [kind = "", ...rest] = location.hash.replace(/^#\/?/, "").split("/");
  const page = PAGES[kind];
  current = undefined;
  try {
    const id = fragmentId(rest.join("/"));
    const view = page === undefined || id === "" ? await homeView(main) : await page(main, id);
    if (n !== navigation) return;
    current = view;
    if (latest !== undefined) view.onBlock?.(latest);
    document.title = `${view.title} · cbqs explorer`;
  } catch (err) {
    if (n !== navigation) return;
    // Whatever went wrong is shown: the page never stays at "Loading…".
    const said = err instanceof ApiError ? `${err.code}: ${err.message}` : err instanceof Error ? err.message : String(err);
    replace(main, h("h1", {}, "Not shown"), h("p", { class: "error", id: "error" }, said), h("p", {}, h("a", { href: "#/" }, "Back to the latest on the chain")));
    document.title = "Not shown · cbqs explorer";
  }
}

/** The id part of a fragment, %-decoded; a malformed escape (a hand-edited link) is said, not thrown as a URIError. */
function fragmentId(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new Error(`the link's id ${JSON.stringify(text.slice(0, 80))} is not valid %-encoding`);
  }
}

/** GET /search says what the text names; the page of that goes in the URL's fragment. */
async function search(q: string): Promise<void> {
  try {
    const found = await getJson(`/search?q=${seg(q)}`);
    location.hash = `#/${String(found["kind"])}/${seg(String(found["id"]))}`;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    replace(main, h("h1", {}, "Search"), h("p", { class: "error", id: "error" }, `Nothing found for ${JSON.stringify(q)}: ${err.message}`));
  }
}

/** The chain's news from GET /subscribe: a new block, or a rewind/gap after which the page is read again. */
function follow(): void {
  const events = new EventSource("/subscribe");
  events.addEventListener("open", () => live.classList.add("on"));
  events.addEventListener("error", () => {
    live.classList.remove("on");
    live.textContent = "reconnecting…";
  });
  events.addEventListener("block", (e) => {
    const b = JSON.parse((e as MessageEvent<string>).data) as BlockSummary;
    live.textContent = `head ${amount(b.height)}`;
    latest = b;
    current?.onBlock?.(b);
  });
  // After a rewind or a gap, what is shown may be another chain's, or incomplete: read it again.
  const reset = (e: Event) => {
    const data = JSON.parse((e as MessageEvent<string>).data) as { height: string };
    live.textContent = `head ${amount(data.height)}`;
    latest = undefined;
    void route();
  };
  events.addEventListener("rewind", reset);
  events.addEventListener("gap", reset);
}

document.getElementById("search")!.addEventListener("submit", (e) => {
  e.preventDefault();
  const q = (document.getElementById("q") as HTMLInputElement).value.trim();
  if (q !== "") void search(q);
});
window.addEventListener("hashchange", () => void route());
void route();
follow();
