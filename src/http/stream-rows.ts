import { Readable } from "node:stream";
import type { FastifyReply } from "fastify";
import { AccountRows } from "../db/account-rows.ts";
import type { Database } from "../db/client.ts";
import type { KeyRecord } from "../queries/find-key-by-hash.ts";
import type { RouteDef, RowBatches } from "../routes/route-def.ts";
import type { ObjectStore } from "../storage/object-store.ts";
import { assertAccountRows, assertRowsOwned } from "./barrier.ts";
import { redactRows } from "./redact.ts";

/** The client hung up: reading stops and the transaction rolls back. */
class ReaderGone extends Error {
  constructor() {
    super("the client closed the streamed list");
  }
}

/** A batch's rows as JSON array items (no brackets), past the barrier and redacted; null if none. */
function batchItems(
  batch: readonly object[] | AccountRows,
  accountId: string,
  redactFragments: readonly string[] | undefined,
): string | null {
  if (batch instanceof AccountRows) {
    if (batch.rows.length === 0) return null;
    assertAccountRows(batch.rows, accountId);
    return JSON.stringify(redactRows(batch.rows, redactFragments, "account_id")).slice(1, -1);
  }
  if (batch.length === 0) return null;
  assertRowsOwned(batch, accountId);
  return JSON.stringify(redactRows(batch, redactFragments)).slice(1, -1);
}

/**
 * `{"data":[…]}` written batch by batch as `batches` reads them in the tenant's transaction — the
 * same bytes `JSON.stringify({ data: rows })` would send — each batch through the barrier and the
 * redaction before any of it is written, as the pipeline does with a whole answer.
 *
 * Resolves once the first batch (or the empty list) has passed: a failure before it (the database,
 * a foreign row in the first batch) is an ordinary error answer. A failure after it destroys the
 * stream, which cuts the response (Fastify destroys the socket): the client gets a truncated body,
 * never the batch that failed — a foreign row mid-list is not sent.
 *
 * The database is read at its own pace, not the client's: the transaction (on the embedded
 * database, the one connection) is held as long as reading takes, and a slow client's unsent
 * batches wait in memory, as a whole answer would. The client leaving stops the reading.
 */
export function streamRows(
  db: Pick<Database, "tenant">,
  accountId: string,
  batches: RowBatches,
  redactFragments?: readonly string[],
): Promise<Readable> {
  // Pushed to, never pulled from: read() has nothing to do.
  const body = new Readable({ read() {} });
  return new Promise<Readable>((resolve, reject) => {
    let opened = false;
    const open = () => {
      opened = true;
      resolve(body);
    };
    db.tenant(accountId, async (tx) => {
      let sent = 0;
      for await (const batch of batches(tx)) {
        if (body.destroyed) throw new ReaderGone();
        const items = batchItems(batch, accountId, redactFragments);
        if (items === null) continue;
        body.push(sent === 0 ? `{"data":[${items}` : `,${items}`);
        sent += batch instanceof AccountRows ? batch.rows.length : batch.length;
        if (!opened) open();
      }
      return sent;
    }).then(
      // Closed only once the transaction has ended well.
      (sent) => {
        body.push(sent === 0 ? '{"data":[]}' : "]}");
        body.push(null);
        if (!opened) open();
      },
      (err: unknown) => {
        if (!opened) reject(err);
        else body.destroy(err instanceof Error ? err : new Error(String(err)));
      },
    );
  });
}

/**
 * The pipeline's hook for a route that streams its whole list (RouteDef.stream): null when the route
 * does not, or not for this input (a page), and the pipeline answers as usual; else the streamed
 * body, sent as the reply's payload (through any compression of the app's onSend hooks).
 */
export async function streamedList(
  route: RouteDef,
  deps: { db: Pick<Database, "tenant">; files: ObjectStore },
  record: KeyRecord,
  input: unknown,
  now: Date,
  reply: FastifyReply,
): Promise<Readable | null> {
  if (!route.stream) return null;
  const tenant = {
    accountId: record.account_id,
    plan: record.plan,
    timezone: record.timezone,
    currency: record.currency,
  };
  const batches = route.stream({ tenant, input, now, files: deps.files });
  if (batches === null) return null;
  const body = await streamRows(deps.db, tenant.accountId, batches, route.redactFragments);
  reply.type("application/json; charset=utf-8");
  return body;
}
