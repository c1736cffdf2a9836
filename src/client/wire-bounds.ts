// Numbers of the node's HTTP interface that both its server (src/node/) and its readers (the
// follower, src/follower/) hold to: declared once here, below both.

/** Items in one GET /replication page at most (docs/node.md "Replication feed"). */
export const FEED_MAX_LIMIT = 100;

/** Milliseconds between two heartbeat comments of GET /subscribe: below the usual 30–60 s idle timeouts of proxies and load balancers. */
export const SUBSCRIBE_HEARTBEAT_MS = 15_000;
