import assert from "node:assert/strict";
import { sql } from "drizzle-orm";
import { addConnector } from "../../src/admin/connectors.ts";
import { rows } from "../../src/db/client.ts";
import { seedAccount, TEST_SITE_URL, testSecrets, type useTestApp } from "../helpers/harness.ts";

/*
 * What the Calendly and Cal.com hook tests share: an account with a connector of the kind, a
 * delivery signed by the caller's scheme, and the account's events and conversion touchpoints as
 * the API answers them.
 */

type Env = ReturnType<typeof useTestApp>;
export type BookingKind = "calendly" | "calcom";

export async function bookingAccount(env: Env, kind: BookingKind, timezone = "Europe/Paris") {
  const account = await seedAccount(env.db, { timezone });
  // The secret Ascribe generates, as a user pastes it into the tool.
  const connector = await addConnector(env.db, testSecrets, TEST_SITE_URL, {
    account: account.accountId,
    kind,
  });
  assert.ok(connector.secret);
  return { ...account, apiKey: await account.key(), connectorId: connector.id, secret: connector.secret };
}

export type BookingAccount = Awaited<ReturnType<typeof bookingAccount>>;

let ipCounter = 0;
/** Posts a raw body with the given signature headers, from a fresh address each time. */
export function post(
  env: Env,
  kind: BookingKind,
  connectorId: string,
  payload: string,
  headers: Record<string, string>,
) {
  ipCounter += 1;
  return env.app.inject({
    method: "POST",
    url: `/api/hooks/${kind}/${connectorId}`,
    headers: { "content-type": "application/json", ...headers },
    payload,
    remoteAddress: `10.31.${Math.floor(ipCounter / 250)}.${ipCounter % 250}`,
  });
}

async function api(env: Env, a: BookingAccount, path: string) {
  const r = await env.get(a.apiKey, path);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.data;
}

const MARCH = "from=2026-03-01&to=2026-03-31";

export async function events(env: Env, a: BookingAccount) {
  const found = (await api(env, a, `/events?${MARCH}&limit=100`)) as Record<string, unknown>[];
  return found
    .map((e) => ({
      id: e.id,
      event_type: e.event_type,
      event_datetime: e.event_datetime,
      contact_email: e.contact_email,
      booking_date: e.booking_date,
      booking_time: e.booking_time,
      utm_source: e.utm_source,
      utm_campaign: e.utm_campaign,
    }))
    .sort((x, y) => (String(x.id) < String(y.id) ? -1 : 1));
}

/** The conversion touchpoints' UTM, by event type and email. */
export async function touchpoints(env: Env, a: BookingAccount) {
  const page = (await api(env, a, "/touchpoints?kind=conversion&limit=100")) as {
    touchpoints: { event_type: string; contact_email: string | null; utm: Record<string, unknown> }[];
  };
  return page.touchpoints
    .map((t) => [t.event_type, t.contact_email, t.utm.source ?? null, t.utm.campaign ?? null])
    .sort();
}

export async function stored(
  env: Env,
  a: BookingAccount,
  table: "events" | "connector_deliveries" | "touchpoints",
) {
  const [row] = await env.db.admin(a.accountId, (tx) =>
    rows<{ n: number }>(
      tx,
      sql`select count(*)::int as n from ${sql.identifier(table)} where account_id = ${a.accountId}`,
    ),
  );
  return row?.n;
}
