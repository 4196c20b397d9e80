import assert from "node:assert/strict";
import { test } from "node:test";
import { sql } from "drizzle-orm";
import { openEmbedded, openPostgres, rows } from "../../src/db/client.ts";
import { cliJson, freshServiceEnv, startServe } from "../helpers/spawn-service.ts";

const TIMEOUT = { timeout: 180_000 };

/*
 * kill -9 of a server under concurrent beacon load: every beacon it answered 204 was committed (in a
 * group-committed batch) and is found by the next process. Beacons in flight when it died may or
 * may not be stored; never one acknowledged and lost.
 */
test(
  "beacons acknowledged by a server killed with SIGKILL under concurrent load are all stored",
  TIMEOUT,
  async () => {
    const service = await freshServiceEnv();
    try {
      const account = await cliJson<{ id: string; client_key: string }>(service.env, [
        "accounts",
        "create",
        "--name",
        "Kill Co",
        "--owner",
        "kill@example.com",
        "--json",
      ]);
      // Durability, not shedding, is under test: on a busy machine the event loop's delay passes load
      // shedding's threshold and beacons would be refused with 503 before the kill.
      const serve = await startServe({ ...service.env, LOAD_SHED_EVENT_LOOP_DELAY_MS: "0" });
      const site = new URL(serve.baseUrl).origin;
      const acknowledged: string[] = [];
      const answered: number[] = [];
      let sent = 0;
      let killed = false;
      // 24 senders, each sending its next beacon as soon as the last is answered (the per-IP limit of
      // 600 a minute is never reached: the server dies after about 150 acknowledgements).
      const sender = async (lane: number) => {
        for (let i = 0; !killed && sent < 500; i++) {
          sent += 1;
          const id = `kill-${String(lane).padStart(2, "0")}-${String(i).padStart(4, "0")}-0123456789ab`;
          const form = i % 4 === 3;
          try {
            const response = await fetch(`${site}/api/collect`, {
              method: "POST",
              headers: { "content-type": "text/plain" },
              body: JSON.stringify({
                type: form ? "form_submit" : "page_view",
                client_key: account.client_key,
                id,
                visitor_id: `visitor-kill-${lane}`,
                url: "https://example.com/",
                ...(form ? { contact: { email: `lane${lane}@example.com` } } : {}),
              }),
            });
            answered.push(response.status);
            if (response.status === 204) acknowledged.push(id);
            if (acknowledged.length >= 150 && !killed) {
              killed = true;
              serve.child.kill("SIGKILL");
            }
          } catch {
            // The connection died with the server: not acknowledged.
            return;
          }
        }
      };
      await Promise.all(Array.from({ length: 24 }, (_, lane) => sender(lane)));
      const exit = await serve.exited;
      assert.equal(exit.signal, "SIGKILL");
      assert.ok(acknowledged.length >= 150, `${acknowledged.length} acknowledged`);
      assert.deepEqual(
        answered.filter((s) => s !== 204),
        [],
      );

      const db = service.databaseUrl
        ? await openPostgres(service.databaseUrl, 10_000)
        : await openEmbedded(service.dataDir);
      try {
        const stored = await db.admin(account.id, (tx) =>
          rows<{ external_id: string }>(
            tx,
            sql`select external_id from touchpoints where account_id = ${account.id} and external_id is not null`,
          ),
        );
        const storedIds = new Set(stored.map((r) => r.external_id));
        const lost = acknowledged.filter((id) => !storedIds.has(`beacon:${id}`));
        assert.deepEqual(lost, []);
        // Several beacons shared a commit: fewer transactions than beacons is what group commit is.
        assert.ok(stored.length >= acknowledged.length);
      } finally {
        await db.close();
      }
    } finally {
      await service.cleanup();
    }
  },
);
