import type { FastifyInstance } from "fastify";

/** How long a stop waits for the answers in flight before it closes their connections. */
export const CLOSE_GRACE_MS = 10_000;

/**
 * A stop (`app.close()`) lets the answers in flight finish, then closes what is left after
 * `graceMs`: a connection the server does not count as idle — a client's spare connection that
 * never sent a request (measured: it held the stop until the headers timeout, 70 s), a client stuck
 * mid-answer — no longer holds the stop, nor a deploy's restart, for minutes.
 */
export function boundedClose(app: FastifyInstance, graceMs: number): void {
  app.addHook("preClose", (done) => {
    const timer = setTimeout(() => app.server.closeAllConnections(), graceMs);
    timer.unref();
    app.server.once("close", () => clearTimeout(timer));
    done();
  });
}
