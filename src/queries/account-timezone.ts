import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

/** The account's timezone (IANA name), the one its calendar dates are read in; null when it is gone. */
export async function accountTimezone(db: Sql, accountId: string): Promise<string | null> {
  const [row] = await rows<{ timezone: string }>(
    db,
    sql`select timezone from accounts where id = ${accountId}`,
    { prepare: true },
  );
  return row?.timezone ?? null;
}
