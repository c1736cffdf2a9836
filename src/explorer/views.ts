// The explorer's pages, one function each, built from the node's read endpoints (docs/guides/run-a-devnet.md
// "The explorer"): the latest blocks, a block with its transactions decoded, a transaction, a
// stream (record, escrow chart, status over time, events), a provider, an account.
import { getJson, seg, type BlockSummary, type HistoryPoint, type Json, type StreamEvent } from "./api.js";
import { escrowChart } from "./chart.js";
import { append, fields, h, link, replace, table, type Child } from "./dom.js";
import { amount, short, time } from "./format.js";

/** What the page shows now, and how it takes the chain's news (src/explorer/main.ts). */
export interface View {
  title: string;
  /** A new block was produced. */
  onBlock?(block: BlockSummary): void;
}

/** The latest blocks listed on the home page. */
export const HOME_BLOCKS = 20;

const hash = (hex: string, route?: string): Child => {
  const text = short(hex);
  const el = route === undefined ? h("span", { class: "hash" }, text) : link(route, text, "hash");
  el.title = hex;
  return el;
};

const accountLink = (address: string): Child => hash(address, `account/${address}`);
const streamLink = (id: string): Child => hash(id, `stream/${id}`);
const blockLink = (height: string): Child => link(`block/${height}`, amount(height));

/** A §19 event's one identifier, linked to its page. */
function eventTarget(e: Json): Child {
  if (typeof e["stream_id"] === "string") return streamLink(e["stream_id"]);
  if (typeof e["provider"] === "string") return hash(e["provider"], `provider/${e["provider"]}`);
  return hash(String(e["payload"] ?? ""));
}

function eventList(events: Json[]): Child {
  if (events.length === 0) return h("span", { class: "muted" }, "none");
  return h("ul", { class: "spans" }, ...events.map((e) => h("li", {}, `${String(e["topic"])} `, eventTarget(e))));
}

// ---- home: the latest blocks, followed live ------------------------------------------------------

function blockRow(b: BlockSummary): HTMLTableRowElement {
  return h("tr", { "data-height": b.height }, h("td", {}, blockLink(b.height)), h("td", {}, hash(b.block_hash, `block/${b.height}`)), h("td", {}, time(b.timestamp)), h("td", {}, String(b.txs)));
}

export async function homeView(main: HTMLElement): Promise<View> {
  const page = await getJson(`/replication?order=desc&limit=${HOME_BLOCKS}`);
  const items = page["items"] as Json[];
  const rows = h("tbody", { id: "blocks" });
  for (const b of items) rows.appendChild(blockRow({ height: String(b["height"]), block_hash: String(b["block_hash"]), timestamp: String(b["timestamp"]), txs: (b["transactions"] as unknown[]).length }));
  replace(
    main,
    h("h1", {}, "Blocks"),
    h("p", { class: "muted" }, "The latest blocks, newest first; a new block appears as soon as the node produces it."),
    h("table", { class: "blocks" }, h("thead", {}, h("tr", {}, h("th", {}, "Height"), h("th", {}, "Hash"), h("th", {}, "Time (UTC)"), h("th", {}, "Txs"))), rows),
  );
  return {
    title: "Blocks",
    onBlock(b) {
      const top = rows.firstElementChild?.getAttribute("data-height");
      if (top !== undefined && top !== null && BigInt(b.height) <= BigInt(top)) return;
      const row = blockRow(b);
      row.classList.add("new");
      rows.prepend(row);
      while (rows.children.length > HOME_BLOCKS) rows.lastElementChild!.remove();
    },
  };
}

// ---- a block ----------------------------------------------------------------------------------------

/** What a transaction does, in a few words, with its decoded form to unfold. */
function txSummary(tx: Json): Child {
  const kind = String(tx["kind"] ?? "undecodable");
  let words: Child = kind;
  if (kind === "transfer") words = h("span", {}, `transfer ${amount(String(tx["amount"]))} to `, accountLink(String(tx["to"])));
  else if (kind === "gov") words = `governance: ${String((tx["action"] as Json | undefined)?.["type"] ?? "?")}`;
  else if (kind === "system") {
    const payload = tx["payload"];
    words = typeof payload === "object" && payload !== null ? String(Object.keys(payload)[0]) : `system call ${String(tx["opcode"])}`;
  }
  return h("div", {}, words, h("details", {}, h("summary", {}, "decoded"), h("pre", {}, JSON.stringify(tx, null, 2))));
}

function receiptCell(r: Json): Child {
  const error = r["error"] as Json | null;
  if (error === null) return h("span", { class: "ok" }, "ok");
  return h("span", { class: "bad", title: String(error["message"] ?? "") }, `rejected: ${String(error["name"])}`);
}

export async function blockView(main: HTMLElement, id: string): Promise<View> {
  const b = await getJson(`/block/${seg(id)}`);
  const txs = b["transactions"] as Json[];
  const height = String(b["height"]);
  replace(
    main,
    h("h1", {}, `Block ${amount(height)}`),
    fields([
      ["height", height],
      ["block hash", h("span", { class: "hash" }, String(b["block_hash"]))],
      ["parent hash", height === "0" ? h("span", { class: "hash" }, String(b["parent_hash"])) : link(`block/${String(b["parent_hash"])}`, String(b["parent_hash"]), "hash")],
      ["timestamp", `${time(String(b["timestamp"]))} (${String(b["timestamp"])})`],
      ["state root", h("span", { class: "hash" }, String(b["state_root"]))],
      ["tx root", h("span", { class: "hash" }, String(b["tx_root"]))],
      ["receipt root", h("span", { class: "hash" }, String(b["receipt_root"]))],
      ["logs root", h("span", { class: "hash" }, String(b["logs_root"]))],
      ["effective rent height", String(b["effective_rent_height"])],
      ["transactions", String(txs.length)],
    ]),
    h("h2", {}, "Transactions"),
    txs.length === 0
      ? h("p", { class: "muted" }, "No transactions.")
      : table(
          ["#", "Tx hash", "From", "Instruction", "Receipt", "Events"],
          txs.map((t) => {
            const tx = t["transaction"] as Json;
            return [String(t["index"]), hash(String(t["tx_hash"]), `tx/${String(t["tx_hash"])}`), accountLink(String(tx["from"])), txSummary(tx), receiptCell(t["receipt"] as Json), eventList(t["events"] as Json[])];
          }),
          "txs",
        ),
  );
  return { title: `Block ${height}` };
}

// ---- a transaction ----------------------------------------------------------------------------------

export async function txView(main: HTMLElement, id: string): Promise<View> {
  const t = await getJson(`/tx/${seg(id)}`);
  const status = String(t["status"]);
  const rows: Array<[string, Child]> = [
    ["tx hash", h("span", { class: "hash" }, String(t["tx_hash"]))],
    ["status", status],
  ];
  // A dropped transaction is known by its hash and reason only.
  if (typeof t["from"] === "string") rows.push(["from", accountLink(t["from"])], ["nonce", String(t["nonce"])]);
  if (status === "included") {
    rows.push(["block", blockLink(String(t["height"]))], ["index", String(t["index"])], ["kind", String(t["kind"])], ["receipt", receiptCell(t["receipt"] as Json)], ["events", eventList(t["events"] as Json[])]);
  } else if (status === "pending") rows.push(["place in the pool", String(t["position"])]);
  else if (status === "dropped") rows.push(["dropped at", blockLink(String(t["dropped_at"]))], ["reason", String(t["reason"])]);
  replace(main, h("h1", {}, "Transaction"), fields(rows));
  return { title: "Transaction" };
}

// ---- a stream ---------------------------------------------------------------------------------------

/** Runs of the same status over the history's points: "Active: blocks 3–120". */
function statusSpans(points: HistoryPoint[]): Child {
  const spans: Array<{ status: string; from: string; to: string }> = [];
  for (const p of points) {
    const status = p.status ?? "absent";
    const last = spans[spans.length - 1];
    if (last !== undefined && last.status === status) last.to = p.height;
    else spans.push({ status, from: p.height, to: p.height });
  }
  return h("ul", { class: "spans", id: "status-spans" }, ...spans.map((s) => h("li", {}, `${s.status}: blocks ${amount(s.from)}–${amount(s.to)}`)));
}

function recordValue(name: string, value: unknown): Child {
  if (typeof value === "string" && /^0x[0-9a-f]{40}$/.test(value) && (name === "owner" || name === "provider")) {
    return name === "provider" ? hash(value, `provider/${value}`) : accountLink(value);
  }
  if (typeof value === "string" && /^0x[0-9a-f]{64}$/.test(value) && name.endsWith("stream_id") && name !== "stream_id") return streamLink(value);
  if (typeof value === "string") return /^[0-9]+$/.test(value) ? amount(value) : h("span", { class: "hash" }, value);
  return h("pre", {}, JSON.stringify(value, null, 2));
}

/** A record in the codec's JSON mapping, field by field. */
const recordFields = (record: Json): HTMLTableElement => fields(Object.entries(record).map(([name, value]) => [name, recordValue(name, value)]));

function eventRows(events: StreamEvent[]): Child[][] {
  return events.map((e) => [blockLink(e.height), e.topic, hash(e.tx_hash, `tx/${e.tx_hash}`)]);
}

export async function streamView(main: HTMLElement, id: string): Promise<View> {
  const [answer, history, events] = await Promise.all([getJson(`/cbqs/stream/${seg(id)}`), getJson(`/cbqs/stream/${seg(id)}/history`), getJson(`/cbqs/stream/${seg(id)}/events`)]);
  const record = answer["stream"] as Json;
  const points = history["points"] as HistoryPoint[];
  const eventBody = h("tbody", {}, ...eventRows(events["events"] as StreamEvent[]).map((cells) => h("tr", {}, ...cells.map((c) => h("td", {}, c)))));
  const more = h("button", { type: "button" }, "Older events");
  let next = events["next"] as string | null;
  more.hidden = next === null;
  more.addEventListener("click", () => {
    void getJson(`/cbqs/stream/${seg(id)}/events?until=${next}`).then((page) => {
      for (const cells of eventRows(page["events"] as StreamEvent[])) eventBody.appendChild(h("tr", {}, ...cells.map((c) => h("td", {}, c))));
      next = page["next"] as string | null;
      more.hidden = next === null;
    });
  });
  replace(
    main,
    h("h1", {}, "Stream ", h("span", { class: "hash" }, String(record["stream_id"]))),
    h("p", { class: "muted" }, `At block ${amount(String(answer["height"]))}.`),
    recordFields(record),
    h("h2", {}, "Escrow over blocks"),
    h("p", { class: "muted" }, `Blocks ${amount(String(history["from"]))} to ${amount(String(history["to"]))}: those whose state the node retains (--retain-blocks).`),
  );
  escrowChart(main, points);
  append(
    main,
    h("h2", {}, "Status over time"),
    statusSpans(points),
    h("h2", {}, "Events"),
    h("table", { class: "events" }, h("thead", {}, h("tr", {}, h("th", {}, "Block"), h("th", {}, "Topic"), h("th", {}, "Transaction"))), eventBody),
    more,
  );
  return { title: `Stream ${short(String(record["stream_id"]))}` };
}

// ---- a provider, an account ---------------------------------------------------------------------------

export async function providerView(main: HTMLElement, address: string): Promise<View> {
  const answer = await getJson(`/cbqs/provider/${seg(address)}`);
  const record = answer["provider"] as Json;
  replace(
    main,
    h("h1", {}, "Provider ", h("span", { class: "hash" }, String(record["provider"] ?? address))),
    h("p", { class: "muted" }, `At block ${amount(String(answer["height"]))}. Its account: `, accountLink(String(record["provider"] ?? address))),
    recordFields(record),
  );
  return { title: "Provider" };
}

export async function accountView(main: HTMLElement, address: string): Promise<View> {
  const a = await getJson(`/account/${seg(address)}`);
  replace(
    main,
    h("h1", {}, "Account ", h("span", { class: "hash" }, String(a["address"]))),
    h("p", { class: "muted" }, `At block ${amount(String(a["height"]))}.`),
    fields([
      ["balance (nano-CBY)", amount(String(a["balance"]))],
      ["nonce", String(a["nonce"])],
      ["queued transactions", String(a["pending"] ?? 0)],
      ["next nonce", String(a["next_nonce"] ?? a["nonce"])],
    ]),
  );
  return { title: "Account" };
}
