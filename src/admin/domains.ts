import { and, eq, sql } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../db/client.ts";
import { trackingHosts } from "../db/schema.ts";
import { ApiError } from "../http/errors.ts";
import { requireAccount } from "./accounts.ts";

export const addDomainInput = z.object({
  account: z.uuid(),
  host: z
    .string()
    .trim()
    .toLowerCase()
    .regex(
      /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,61}[a-z0-9]$/,
      "must be a host name such as track.example.com",
    ),
});

/** Registers a first-party tracking host; a host belongs to one account only. */
export async function addDomain(db: Database, input: z.input<typeof addDomainInput>) {
  const { account, host } = addDomainInput.parse(input);
  return db.admin(account, async (tx) => {
    await requireAccount(tx, account);
    try {
      await tx.execute(sql`
        insert into tracking_hosts (account_id, host) values (${account}, ${host})
        on conflict (account_id, host) do nothing`);
    } catch (err) {
      // The global unique index: another account already has this host.
      if (/tracking_hosts_host_uq/.test(String((err as Error).cause ?? err))) {
        throw new ApiError("forbidden", {}, `${host} is registered by another account`);
      }
      throw err;
    }
    return { account_id: account, host };
  });
}

export const listDomainsInput = z.object({ account: z.uuid() });

/** The account's first-party tracking hosts, oldest first. */
export async function listDomains(db: Database, input: z.input<typeof listDomainsInput>) {
  const { account } = listDomainsInput.parse(input);
  return db.admin(account, async (tx) => {
    await requireAccount(tx, account);
    const found = await tx
      .select({ host: trackingHosts.host, createdAt: trackingHosts.createdAt })
      .from(trackingHosts)
      .where(eq(trackingHosts.accountId, account))
      .orderBy(trackingHosts.createdAt, trackingHosts.host);
    return found.map((d) => ({ account_id: account, host: d.host, created_at: d.createdAt.toISOString() }));
  });
}

export const removeDomainInput = addDomainInput;

/** Stops a host tracking for the account: its script and beacons answer as an unknown host again. */
export async function removeDomain(db: Database, input: z.input<typeof removeDomainInput>) {
  const { account, host } = removeDomainInput.parse(input);
  return db.admin(account, async (tx) => {
    await requireAccount(tx, account);
    const removed = await tx
      .delete(trackingHosts)
      .where(and(eq(trackingHosts.accountId, account), eq(trackingHosts.host, host)))
      .returning({ host: trackingHosts.host });
    if (removed.length === 0)
      throw new ApiError("not_found", {}, `${host} is not a host of account ${account}`);
    return { account_id: account, host, removed: true };
  });
}
