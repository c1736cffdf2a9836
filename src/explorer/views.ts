// The explorer's pages, one function each, built from the node's read endpoints (docs/node.md
// "The explorer"): the latest blocks, transactions and streams; a block with its transactions
// decoded; a transaction; a stream (record, escrow chart, status over time, events); a provider;
// an account. Each page leads with its summary — what a person came to see — and the details
// follow. Amounts carry their unit and dev accounts are named (GET /devnet/names).
import { getJson, seg, type BlockSummary, type HistoryPoint, type Json, type StreamEvent } from "./api.js";
import { escrowChart } from "./chart.js";
import { append, fields, h, link, replace, table, type Child } from "./dom.js";
import { amount, cby, funding, short, time } from "./format.js";
import { loadNames, nameOf } from "./names.js";

/** What the page shows now, and how it takes the chain's news (src/explorer/main.ts). */
export interface View {
  title: string;
  /** A new block was produced. */
  onBlock?(block: BlockSummary): void;
}

/** The latest blocks listed on the home page. */
export const HOME_BLOCKS = 20;
/** The latest transactions and streams listed on the home page. */
export const HOME_LATEST = 10;

const hash = (hex: string, route?: string): Child => {
  const text = short(hex);
  const el = route === undefined ? h("span", { class: "hash" }, text) : link(route, text, "hash");
  el.title = hex;
  return el;
};

/** An address by its dev account's name where it has one ("dev0", the address in its title), else shortened. */
function named(address: string, route: string): Child {
  const name = nameOf(address);
  if (name === undefined) return hash(address, route);
  const el = link(route, name, "name");
  el.title = address;
  return el;
}

/** An address in a summary: its name and the whole address. */
function namedInFull(address: string, route: string): Child {
  const name = nameOf(address);
  if (name === undefined) return link(route, address, "hash");
  return h("span", {}, link(route, name, "name"), " ", h("span", { class: "hash muted" }, address));
}

const accountLink = (address: string): Child => named(address, `account/${address}`);
const providerLink = (address: string): Child => named(address, `provider/${address}`);
const streamLink = (id: string): Child => hash(id, `stream/${id}`);
const blockLink = (height: string): Child => link(`block/${height}`, amount(height));

/** A status as a coloured badge (Active, Suspended, ok, rejected, …). */
const badge = (text: string): HTMLSpanElement => h("span", { class: `badge ${text.toLowerCase()}` }, text);

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

// ---- home: the latest blocks, transactions and streams, followed live ------------------------------

function blockRow(b: BlockSummary): HTMLTableRowElement {
  return h("tr", { "data-height": b.height }, h("td", {}, blockLink(b.height)), h("td", {}, hash(b.block_hash, `block/${b.height}`)), h("td", {}, time(b.timestamp)), h("td", {}, String(b.txs)));
}

/** The outcome of a transaction: ok, or rejected with the error's name (its message in the title). */
function outcome(status: string, error: string | null, message = ""): Child {
  if (status === "ok") return h("span", { class: "ok" }, "ok");
  return h("span", { class: "bad", title: message }, `rejected: ${error ?? "?"}`);
}

function latestTxRows(txs: Json[]): Child[][] {
  return txs.map((t) => {
    const tx = t["transaction"] as Json;
    return [blockLink(String(t["height"])), hash(String(t["tx_hash"]), `tx/${String(t["tx_hash"])}`), accountLink(String(tx["from"] ?? "")), txWords(tx), outcome(String(t["status"]), t["error"] as string | null), cby(String(t["fee"]))];
  });
}

function latestStreamRows(streams: Json[]): Child[][] {
  return streams.map((s) =>
    s["status"] === null
      ? [streamLink(String(s["stream_id"])), "", "", "absent", "", "", blockLink(String(s["created_at"]))]
      : [streamLink(String(s["stream_id"])), accountLink(String(s["owner"])), providerLink(String(s["provider"])), badge(String(s["status"])), cby(String(s["escrow_balance"])), `${cby(String(s["rate_per_block"]))} / block`, blockLink(String(s["created_at"]))],
  );
}

const TX_HEADERS = ["Block", "Tx hash", "From", "What", "Outcome", "Fee"];
const STREAM_HEADERS = ["Stream", "Owner", "Provider", "Status", "Escrow", "Rate", "Created at"];

export async function homeView(main: HTMLElement): Promise<View> {
  const [page, latest] = await Promise.all([getJson(`/replication?order=desc&limit=${HOME_BLOCKS}`), getJson(`/latest?limit=${HOME_LATEST}`), loadNames()]);
  const items = page["items"] as Json[];
  const rows = h("tbody", { id: "blocks" });
  for (const b of items) rows.appendChild(blockRow({ height: String(b["height"]), block_hash: String(b["block_hash"]), timestamp: String(b["timestamp"]), txs: (b["transactions"] as unknown[]).length }));
  const txs = h("div", { id: "latest-txs" });
  const streams = h("div", { id: "latest-streams" });
  const showLatest = (answer: Json) => {
    const t = answer["transactions"] as Json[];
    const s = answer["streams"] as Json[];
    replace(txs, t.length === 0 ? h("p", { class: "muted" }, "No transactions yet.") : table(TX_HEADERS, latestTxRows(t), "txs"));
    replace(streams, s.length === 0 ? h("p", { class: "muted" }, "No streams yet.") : table(STREAM_HEADERS, latestStreamRows(s), "streams"));
  };
  showLatest(latest);
  replace(
    main,
    h("h1", {}, "Latest on the chain"),
    h("div", { class: "columns" },
      h("section", {},
        h("h2", {}, "Blocks"),
        h("table", { class: "blocks" }, h("thead", {}, h("tr", {}, h("th", {}, "Height"), h("th", {}, "Hash"), h("th", {}, "Time (UTC)"), h("th", {}, "Txs"))), rows),
        h("p", { class: "muted" }, "Newest first; a new block appears as soon as the node produces it."),
      ),
      h("section", {}, h("h2", {}, "Transactions"), txs),
    ),
    h("h2", {}, "Streams"),
    h("p", { class: "muted" }, "The newest streams, as they stand at the head."),
    streams,
  );
  return {
    title: "Latest",
    onBlock(b) {
      const top = rows.firstElementChild?.getAttribute("data-height");
      if (top !== undefined && top !== null && BigInt(b.height) <= BigInt(top)) return;
      const row = blockRow(b);
      row.classList.add("new");
      rows.prepend(row);
      while (rows.children.length > HOME_BLOCKS) rows.lastElementChild!.remove();
      // A block with transactions changes the latest transactions and may change the streams.
      if (b.txs > 0) void getJson(`/latest?limit=${HOME_LATEST}`).then(showLatest, () => undefined);
    },
  };
}

// ---- a block ----------------------------------------------------------------------------------------

/** What a transaction does, in a few words. */
function txWords(tx: Json): Child {
  const kind = String(tx["kind"] ?? "undecodable");
  if (kind === "transfer") return h("span", {}, `transfer ${cby(String(tx["amount"]))} to `, accountLink(String(tx["to"])));
  if (kind === "gov") return `governance: ${String((tx["action"] as Json | undefined)?.["type"] ?? "?")}`;
  if (kind === "system") {
    const payload = tx["payload"];
    return typeof payload === "object" && payload !== null ? String(Object.keys(payload)[0]) : `system call ${String(tx["opcode"])}`;
  }
  return kind;
}

/** The words, with the decoded form to unfold. */
const txSummary = (tx: Json): Child => h("div", {}, txWords(tx), h("details", {}, h("summary", {}, "decoded"), h("pre", {}, JSON.stringify(tx, null, 2))));

function receiptCell(r: Json): Child {
  const error = r["error"] as Json | null;
  return outcome(String(r["status"]), error === null ? null : String(error["name"]), error === null ? "" : String(error["message"] ?? ""));
}

const sum = (values: string[]): string => values.reduce((t, v) => t + BigInt(v), 0n).toString();

export async function blockView(main: HTMLElement, id: string): Promise<View> {
  const [b] = await Promise.all([getJson(`/block/${seg(id)}`), loadNames()]);
  const txs = b["transactions"] as Json[];
  const height = String(b["height"]);
  const receipts = txs.map((t) => t["receipt"] as Json);
  const ok = receipts.filter((r) => r["status"] === "ok").length;
  const prev = b["previous_height"] as string | null;
  const next = b["next_height"] as string | null;
  replace(
    main,
    h(
      "nav",
      { class: "pager" },
      prev === null ? h("span", { class: "muted" }, "← no earlier block") : link(`block/${prev}`, `← block ${amount(prev)}`, "prev"),
      next === null ? h("span", { class: "muted" }, "the newest block →") : link(`block/${next}`, `block ${amount(next)} →`, "next"),
    ),
    h("h1", {}, `Block ${amount(height)}`),
    fields([
      ["time (UTC)", time(String(b["timestamp"]))],
      ["transactions", txs.length === 0 ? "none" : h("span", {}, `${txs.length}: `, h("span", { class: "ok" }, `${ok} ok`), ", ", h("span", { class: ok === txs.length ? "muted" : "bad" }, `${txs.length - ok} rejected`))],
      ["cycles", amount(sum(receipts.map((r) => String(r["cycles"]))))],
      ["cells", amount(sum(receipts.map((r) => String(r["cells"]))))],
      ["fees", cby(sum(txs.map((t) => String(t["fee"]))))],
    ], "summary"),
    h("h2", {}, "Transactions"),
    txs.length === 0
      ? h("p", { class: "muted" }, "No transactions.")
      : table(
          ["#", "Tx hash", "From", "What", "Outcome", "Cycles", "Cells", "Fee", "Events"],
          txs.map((t) => {
            const tx = t["transaction"] as Json;
            const r = t["receipt"] as Json;
            return [String(t["index"]), hash(String(t["tx_hash"]), `tx/${String(t["tx_hash"])}`), accountLink(String(tx["from"])), txSummary(tx), receiptCell(r), amount(String(r["cycles"])), amount(String(r["cells"])), cby(String(t["fee"])), eventList(t["events"] as Json[])];
          }),
          "txs",
        ),
    h("h2", {}, "Header"),
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
    ]),
  );
  return { title: `Block ${height}` };
}

// ---- a transaction ----------------------------------------------------------------------------------

export async function txView(main: HTMLElement, id: string): Promise<View> {
  const [t] = await Promise.all([getJson(`/tx/${seg(id)}`), loadNames()]);
  const status = String(t["status"]);
  const rows: Array<[string, Child]> = [
    ["tx hash", h("span", { class: "hash" }, String(t["tx_hash"]))],
    ["status", badge(status)],
  ];
  // A dropped transaction is known by its hash and reason only.
  if (typeof t["from"] === "string") rows.push(["from", accountLink(t["from"])], ["nonce", String(t["nonce"])]);
  if (status === "included") {
    rows.push(["block", blockLink(String(t["height"]))], ["index", String(t["index"])], ["kind", String(t["kind"])], ["outcome", receiptCell(t["receipt"] as Json)], ["cycles", amount(String((t["receipt"] as Json)["cycles"]))], ["cells", amount(String((t["receipt"] as Json)["cells"]))], ["events", eventList(t["events"] as Json[])]);
  } else if (status === "pending") rows.push(["place in the pool", String(t["position"])]);
  else if (status === "dropped") rows.push(["dropped at", blockLink(String(t["dropped_at"]))], ["reason", String(t["reason"])]);
  replace(main, h("h1", {}, "Transaction"), fields(rows, "summary"));
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

/** The records' fields that hold an amount of nano-CBY (CIP-39 §4.1); a field named `…_block` holds a block height. */
const AMOUNT_FIELDS = new Set(["escrow_balance", "rate_per_block"]);

/** One field of a record, shown by what it is: a named address, a linked stream or block, an amount with its unit, a nested record as a table of its own. */
function recordValue(name: string, value: unknown): Child {
  if (value === null) return h("span", { class: "muted" }, "none");
  if (typeof value === "string" && /^0x[0-9a-f]{40}$/.test(value)) return name === "provider" ? providerLink(value) : accountLink(value);
  if (typeof value === "string" && /^0x[0-9a-f]{64}$/.test(value) && name.endsWith("stream_id") && name !== "stream_id") return streamLink(value);
  if (typeof value === "string" && /^[0-9]+$/.test(value)) {
    if (AMOUNT_FIELDS.has(name)) return cby(value);
    return name.endsWith("_block") ? blockLink(value) : amount(value);
  }
  if (typeof value === "string") return /^0x/.test(value) ? h("span", { class: "hash" }, value) : value;
  if (typeof value === "boolean" || typeof value === "number") return String(value);
  if (Array.isArray(value)) return value.length === 0 ? h("span", { class: "muted" }, "none") : h("ol", { class: "values" }, ...value.map((v) => h("li", {}, recordValue(name, v))));
  if (typeof value === "object") return recordFields(value as Json, "nested");
  return String(value);
}

/** A record in the codec's JSON mapping, field by field; nested records as nested tables. */
function recordFields(record: Json, cls = ""): HTMLTableElement {
  return fields(
    Object.entries(record).map(([name, value]) => [name.replaceAll("_", " "), recordValue(name, value)]),
    cls,
  );
}

/** How long the escrow lasts, in words, with the blocks linked (CIP-39 §6.1, src/explorer/format.ts). */
function fundingCell(record: Json, head: string): Child {
  const f = funding(record);
  if (f.kind === "until") {
    const ahead = BigInt(f.block) - BigInt(head);
    const when = ahead >= 0n ? `${amount(ahead.toString())} blocks after the head` : `${amount((-ahead).toString())} blocks before the head: rent is owed, and the next settlement suspends it`;
    return h("span", { class: ahead >= 0n ? "" : "bad" }, "block ", blockLink(f.block), h("span", { class: ahead >= 0n ? "muted" : "" }, ` (${when})`));
  }
  if (f.kind === "unbounded") return "indefinitely (rate 0)";
  if (f.kind === "suspended") return h("span", { class: "bad" }, "unfunded since block ", blockLink(f.since), "; data kept until block ", blockLink(f.graceUntil));
  return h("span", { class: "muted" }, "no longer (the stream has ended)");
}

function eventRows(events: StreamEvent[]): Child[][] {
  return events.map((e) => [blockLink(e.height), e.topic, hash(e.tx_hash, `tx/${e.tx_hash}`)]);
}

export async function streamView(main: HTMLElement, id: string): Promise<View> {
  const [answer, history, events] = await Promise.all([getJson(`/cbqs/stream/${seg(id)}`), getJson(`/cbqs/stream/${seg(id)}/history`), getJson(`/cbqs/stream/${seg(id)}/events`), loadNames()]);
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
  const status = String(record["status"]);
  replace(
    main,
    h("h1", {}, "Stream ", h("span", { class: "hash" }, short(String(record["stream_id"]))), " ", badge(status)),
    fields(
      [
        ["status", badge(status)],
        ["escrow", cby(String(record["escrow_balance"]))],
        ["rate", `${cby(String(record["rate_per_block"]))} per block`],
        ["funded until", fundingCell(record, String(answer["height"]))],
        ["provider", namedInFull(String(record["provider"]), `provider/${String(record["provider"])}`)],
        ["owner", namedInFull(String(record["owner"]), `account/${String(record["owner"])}`)],
        ["created at", blockLink(String(record["created_at_block"]))],
      ],
      "summary",
    ),
    h("p", { class: "muted" }, `As of block ${amount(String(answer["height"]))}; escrow last settled at block ${amount(String(record["last_settled_block"]))}.`),
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
    h("h2", {}, "Record"),
    h("p", { class: "muted" }, "Every field of the StreamRecordV1 (CIP-39 §4.1), as the node's JSON mapping has it."),
    recordFields(record),
  );
  return { title: `Stream ${short(String(record["stream_id"]))}` };
}

// ---- a provider, an account ---------------------------------------------------------------------------

export async function providerView(main: HTMLElement, address: string): Promise<View> {
  const [answer] = await Promise.all([getJson(`/cbqs/provider/${seg(address)}`), loadNames()]);
  const record = answer["provider"] as Json;
  const who = String(record["provider"] ?? address);
  replace(
    main,
    h("h1", {}, "Provider ", nameOf(who) ?? h("span", { class: "hash" }, who), " ", badge(String(record["status"]))),
    fields(
      [
        ["account", namedInFull(who, `account/${who}`)],
        ["status", badge(String(record["status"]))],
        ["live streams", amount(String(record["live_assigned_streams"]))],
        ["registered at", blockLink(String(record["registered_block"]))],
      ],
      "summary",
    ),
    h("p", { class: "muted" }, `As of block ${amount(String(answer["height"]))}.`),
    h("h2", {}, "Record"),
    recordFields(record),
  );
  return { title: `Provider ${nameOf(who) ?? short(who)}` };
}

export async function accountView(main: HTMLElement, address: string): Promise<View> {
  const [a] = await Promise.all([getJson(`/account/${seg(address)}`), loadNames()]);
  const who = String(a["address"]);
  replace(
    main,
    h("h1", {}, "Account ", nameOf(who) ?? h("span", { class: "hash" }, who)),
    fields(
      [
        ["address", h("span", { class: "hash" }, who)],
        ["balance", cby(String(a["balance"]))],
        ["nonce", String(a["nonce"])],
        ["queued transactions", String(a["pending"] ?? 0)],
        ["next nonce", String(a["next_nonce"] ?? a["nonce"])],
      ],
      "summary",
    ),
    h("p", { class: "muted" }, `As of block ${amount(String(a["height"]))}.`),
  );
  return { title: `Account ${nameOf(who) ?? short(who)}` };
}
