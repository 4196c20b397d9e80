import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import Fastify from "fastify";
import { boundedClose } from "../../src/http/bounded-close.ts";

/*
 * A connection that never carries a request (a browser's or fetch's spare one) is not idle to the
 * server: without a bound, a stop waited for it until the server's headers timeout (70 s measured).
 */

async function stopWithSpareConnection(
  bounded: boolean,
): Promise<{ seconds: number; socketClosed: boolean }> {
  const app = Fastify();
  if (bounded) boundedClose(app, 300);
  app.get("/", async () => ({ ok: true }));
  await app.listen({ port: 0, host: "127.0.0.1" });
  const { port } = app.server.address() as AddressInfo;
  const spare = connect(port, "127.0.0.1");
  await new Promise<void>((resolve) => spare.once("connect", () => resolve()));
  const hungUp = new Promise<boolean>((resolve) => spare.once("end", () => resolve(true)));
  const started = performance.now();
  const closed = app.close().then(() => (performance.now() - started) / 1000);
  const seconds = await Promise.race([closed, sleep(3_000).then(() => Number.POSITIVE_INFINITY)]);
  const socketClosed = await Promise.race([hungUp, sleep(500).then(() => false)]);
  spare.destroy();
  await closed;
  return { seconds, socketClosed };
}

test("a stop closes a connection that never sent a request once the grace has passed", async () => {
  const { seconds, socketClosed } = await stopWithSpareConnection(true);
  assert.ok(seconds >= 0.29 && seconds < 2, `stopped after ${seconds} s`);
  assert.equal(socketClosed, true);
});

test("without the bound, the same stop is still waiting after 3 s (what the bound is for)", async () => {
  const { seconds } = await stopWithSpareConnection(false);
  assert.equal(seconds, Number.POSITIVE_INFINITY);
});
