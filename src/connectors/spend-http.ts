/**
 * What the Meta and Google spend fetchers share: one HTTP call with a timeout, and back-off when the
 * vendor says to slow down. Waits are bounded: a vendor asking for longer than `maxWaitMs` (Meta's
 * business use case limit can answer "regain access in 30 minutes") fails the sync with that figure
 * instead of holding a CLI or the schedule for half an hour; the next run picks it up.
 */
export interface SpendHttp {
  fetch: typeof fetch;
  sleep(ms: number): Promise<void>;
  /** Tries of one request, the first included. */
  maxAttempts: number;
  /** The longest single wait honoured. */
  maxWaitMs: number;
  /** The first wait when the vendor gives none; doubled on each further try. */
  baseDelayMs: number;
  timeoutMs: number;
}

export const DEFAULT_SPEND_HTTP: SpendHttp = {
  fetch: (input, init) => fetch(input, init),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  maxAttempts: 6,
  maxWaitMs: 120_000,
  baseDelayMs: 1_000,
  timeoutMs: 60_000,
};

/** Why a sync failed, in words for `last_error` (never a credential or a response body in full). */
export class SpendSyncError extends Error {
  constructor(
    message: string,
    /** auth: the credentials no longer work (the user must act); limit: rate limited past our waits. */
    readonly reason: "auth" | "limit" | "vendor" | "config",
  ) {
    super(message);
    this.name = "SpendSyncError";
  }
}

/** One attempt's verdict: the parsed answer, or a retry after the given wait (null: back off by doubling). */
export type Attempt<T> = { done: T } | { retry: number | null; why: string };

/** Seconds in a Retry-After header (a number or an HTTP date), as milliseconds; null when absent. */
export function retryAfterMs(headers: Headers, now: number = Date.now()): number | null {
  const value = headers.get("retry-after");
  if (value === null) return null;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.round(Number(value) * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/**
 * Runs `attempt` until it is done, waiting between tries as it says (or doubling from baseDelayMs).
 * `label` names the vendor in the error when the tries or the allowed wait run out.
 */
export async function withBackoff<T>(
  http: SpendHttp,
  label: string,
  attempt: () => Promise<Attempt<T>>,
): Promise<T> {
  for (let n = 1; ; n++) {
    const outcome = await attempt();
    if ("done" in outcome) return outcome.done;
    const wait = outcome.retry ?? http.baseDelayMs * 2 ** (n - 1);
    if (wait > http.maxWaitMs)
      throw new SpendSyncError(
        `${label}: ${outcome.why}; the vendor asks to wait ${Math.ceil(wait / 60_000)} min, the next sync will retry`,
        "limit",
      );
    if (n >= http.maxAttempts)
      throw new SpendSyncError(`${label}: ${outcome.why}, still after ${n} tries`, "limit");
    await http.sleep(wait);
  }
}

/** A request with the configured timeout; a network failure or timeout is an attempt to retry. */
export async function send(
  http: SpendHttp,
  url: string,
  init: RequestInit,
): Promise<Response | { failed: string }> {
  try {
    return await http.fetch(url, { ...init, signal: AbortSignal.timeout(http.timeoutMs) });
  } catch (err) {
    return { failed: err instanceof Error ? err.message : String(err) };
  }
}

/** The body as JSON, or null when it is not JSON (a proxy's HTML error page). */
export async function jsonBody(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}
