import type { FastifyReply } from "fastify";
import { ApiError } from "./errors.ts";
import type { CounterStore } from "./rate-limiter.ts";

/** SPEC Limits: more than this many answers 401 from one IP within the minute → 429 for the rest of it. */
export const FAILED_AUTH_LIMIT = 20;
const WINDOW_MS = 60_000;
const RETRY_AFTER_SECONDS = 60;

function throttled(reply: FastifyReply): ApiError {
  reply.header("Retry-After", String(RETRY_AFTER_SECONDS));
  return new ApiError("too_many_failed_attempts", { retry_after_seconds: RETRY_AFTER_SECONDS });
}

/**
 * The failed-authentication throttle of one client address, shared by the API's key check and the
 * webhook's signature check (one count per address, whichever credential failed).
 *
 * The count is of failed attempts, 429s included. The gate only reads it; the decision for a failed
 * attempt comes from the count its own increment returned, so concurrent failures (on one process or
 * many sharing Redis) each get a distinct rank and exactly LIMIT + 1 of them answer 401: a read taken
 * before the credential lookup would let every request in flight through.
 */
export function failedAuthThrottle(counters: CounterStore, ip: string) {
  const key = `auth-fail:${ip}`;
  return {
    /** Before the credential is looked at: an address already past the limit is refused outright. */
    async gate(reply: FastifyReply): Promise<void> {
      const failures = await counters.peek(key, WINDOW_MS);
      if (failures.count > FAILED_AUTH_LIMIT) throw throttled(reply);
    },
    /**
     * Counts one failed attempt and returns the refusal it earns: `unauthorized` (the caller's own 401)
     * while no more than LIMIT failures came before it this minute, else the 429.
     */
    async fail(reply: FastifyReply, unauthorized: ApiError): Promise<ApiError> {
      const { count } = await counters.hit(key, WINDOW_MS);
      return count - 1 > FAILED_AUTH_LIMIT ? throttled(reply) : unauthorized;
    },
  };
}
