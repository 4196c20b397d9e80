import { sql } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../db/client.ts";
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
