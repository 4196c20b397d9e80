import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import type { Tenant } from "../routes/route-def.ts";

/** The account as the rule engine needs it (plan, timezone); null when it is gone. */
export async function ruleTenant(db: Sql, accountId: string): Promise<Tenant | null> {
  const [row] = await rows<{ plan: Tenant["plan"]; timezone: string; currency: string }>(
    db,
    sql`select plan, timezone, currency from accounts where id = ${accountId}`,
  );
  return row ? { accountId, ...row } : null;
}
