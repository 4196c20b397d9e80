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
      // Named for an operator reading pg_stat_activity.
      application_name: "ascribe key changes",
    });
    client = next;
    next.on("error", () => lost(next));
    next.on("end", () => lost(next));
    next.on("notification", (message) => {
      if (message.channel === channel) generation += 1;
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

/** The embedded database: only this process writes it, and it counts its own administrations. */
export function ownChanges(generation: () => number): ChangeFeed {
  return { generation, trusted: () => true, close: async () => {} };
}
