import assert from "node:assert/strict";
import { addConnector } from "../../src/admin/connectors.ts";
import { seedAccount, TEST_SITE_URL, testSecrets, type useTestApp } from "../helpers/harness.ts";

/* What the Stripe hook tests share: an account with a Stripe connector, and the API's answers. */

type Env = ReturnType<typeof useTestApp>;

/** An account with a Stripe connector whose signing secret (Stripe's `whsec_…`) the test knows. */
export async function stripeAccount(env: Env) {
  const account = await seedAccount(env.db);
  const secret = `whsec_${account.accountId.replaceAll("-", "")}`;
  const connector = await addConnector(env.db, testSecrets, TEST_SITE_URL, {
    account: account.accountId,
    kind: "stripe",
    secret,
  });
  return { ...account, apiKey: await account.key(), connectorId: connector.id, secret };
}

export type StripeAccount = Awaited<ReturnType<typeof stripeAccount>>;

/** A route's `data`, asserting a 200. */
export async function apiData(env: Env, a: StripeAccount, path: string) {
  const r = await env.get(a.apiKey, path);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.data;
}
