import { randomUUID } from "node:crypto";
import pg from "pg";

/**
 * What a process caches about keys may have changed elsewhere (another instance, the CLI, psql):
 * `generation()` moves on whenever it may have, and `trusted()` is false while a change could go
 * unseen. A cache keeps an entry only for the generation it was read in, and serves nothing from
 * memory while the feed is not trusted.
 */
export interface ChangeFeed {
  generation(): number;
  trusted(): boolean;
  close(): Promise<void>;
}

/** The channel migration 0025's triggers notify when a key or its account changes. */
export const KEY_CHANGE_CHANNEL = "ascribe_key_change";
/** Where a listener answers a sync marker (see `awaitListeners`). */
export const KEY_CHANGE_ACK_CHANNEL = "ascribe_key_change_ack";
/** What listening connections are named, for `pg_stat_activity` and for `awaitListeners`. */
const LISTENER_NAME = "ascribe key changes";
/** A notification on the change channel that is no change: a request to acknowledge. */
const SYNC_PREFIX = "sync:";

export interface ListenOptions {
  connectTimeoutMs: number;
  /** How often the listening connection proves it is alive; a silent one is replaced. */
  heartbeatMs?: number;
  /** The longest wait between two attempts to listen again. */
  maxRetryMs?: number;
}

/**
 * LISTEN on a connection of its own (a session-mode connection: a transaction-mode pooler would
 * not deliver notifications). Every notification, and every (re)connection — changes may have
 * been missed while it was down — moves the generation on.
 */
export function listenForChanges(url: string, channel: string, options: ListenOptions): ChangeFeed {
  const heartbeatMs = options.heartbeatMs ?? 10_000;
  const maxRetryMs = options.maxRetryMs ?? 5_000;
  let generation = 0;
  let listening = false;
  let closed = false;
  let client: pg.Client | null = null;
  let retryMs = 100;
  let retryTimer: NodeJS.Timeout | undefined;
  let heartbeat: NodeJS.Timeout | undefined;

  const lost = (broken: pg.Client) => {
    if (client !== broken) return;
    listening = false;
    generation += 1;
    client = null;
    clearInterval(heartbeat);
    broken.removeAllListeners("notification");
    broken.end().catch(() => {});
    if (closed) return;
    retryTimer = setTimeout(() => void connect(), retryMs);
    retryTimer.unref();
    retryMs = Math.min(retryMs * 2, maxRetryMs);
  };

  async function connect(): Promise<void> {
    const next = new pg.Client({
      connectionString: url,
      connectionTimeoutMillis: options.connectTimeoutMs,
      query_timeout: options.connectTimeoutMs,
      keepAlive: true,
      // Named for an operator reading pg_stat_activity, and for awaitListeners to find it there.
      application_name: LISTENER_NAME,
    });
    client = next;
    next.on("error", () => lost(next));
    next.on("end", () => lost(next));
    next.on("notification", (message) => {
      if (message.channel !== channel) return;
      const payload = message.payload ?? "";
      // Notifications arrive in commit order: every change committed before the marker was sent
      // has moved the generation on by now.
      if (payload.startsWith(SYNC_PREFIX)) {
        next.query("select pg_notify($1, $2)", [KEY_CHANGE_ACK_CHANNEL, payload]).catch(() => lost(next));
      } else generation += 1;
    });
    try {
      await next.connect();
      await next.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    } catch {
      lost(next);
      return;
    }
    if (closed || client !== next) return;
    // Whatever changed before LISTEN took effect is behind this generation.
    generation += 1;
    listening = true;
    retryMs = 100;
    heartbeat = setInterval(() => {
      next.query("select 1").catch(() => lost(next));
    }, heartbeatMs);
    heartbeat.unref();
  }

  void connect();
  return {
    generation: () => generation,
    trusted: () => listening,
    close: async () => {
      closed = true;
      listening = false;
      clearTimeout(retryTimer);
      clearInterval(heartbeat);
      const current = client;
      client = null;
      await current?.end().catch(() => {});
    },
  };
}

export interface AwaitOptions {
  connectTimeoutMs: number;
  /** The longest wait for a listener that stays connected but does not answer. */
  timeoutMs?: number;
}

/**
 * Returns once every process listening for key changes on this database (every serving instance)
 * has read every change committed before the call, so that the next request anywhere sees it:
 * a notification reaches a listener some time after its commit, with no acknowledgement. Sends a
 * sync marker on the change channel (delivered after every earlier commit's notifications) and
 * waits for each listening connection of `pg_stat_activity` to echo it on the acknowledgement
 * channel. A listener whose connection goes away is not waited for (it distrusts its cache until it
 * listens again); one that stays connected but silent for `timeoutMs` is reported, not waited for.
 */
export async function awaitListeners(
  url: string,
  options: AwaitOptions,
): Promise<{ listeners: number; unacknowledged: number }> {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const client = new pg.Client({
    connectionString: url,
    connectionTimeoutMillis: options.connectTimeoutMs,
    query_timeout: options.connectTimeoutMs,
    application_name: "ascribe key change sync",
  });
  const marker = `${SYNC_PREFIX}${randomUUID()}`;
  const acknowledged = new Set<number>();
  let wake = () => {};
  client.on("notification", (message) => {
    if (message.channel !== KEY_CHANGE_ACK_CHANNEL || message.payload !== marker) return;
    acknowledged.add(message.processId);
    wake();
  });
  client.on("error", () => {});
  const listening = async (): Promise<number[]> => {
    const found = await client.query<{ pid: number }>(
      "select pid from pg_stat_activity where datname = current_database() and application_name = $1",
      [LISTENER_NAME],
    );
    return found.rows.map((row) => row.pid);
  };
  await client.connect();
  try {
    await client.query(`LISTEN ${pg.escapeIdentifier(KEY_CHANGE_ACK_CHANNEL)}`);
    const listeners = await listening();
    await client.query("select pg_notify($1, $2)", [KEY_CHANGE_CHANNEL, marker]);
    const deadline = Date.now() + timeoutMs;
    let waiting = listeners.filter((pid) => !acknowledged.has(pid));
    while (waiting.length > 0 && Date.now() < deadline) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 100);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      const alive = new Set(await listening());
      waiting = waiting.filter((pid) => alive.has(pid) && !acknowledged.has(pid));
    }
    return { listeners: listeners.length, unacknowledged: waiting.length };
  } finally {
    await client.end().catch(() => {});
  }
}

/** The embedded database: only this process writes it, and it counts its own administrations. */
export function ownChanges(generation: () => number): ChangeFeed {
  return { generation, trusted: () => true, close: async () => {} };
}
