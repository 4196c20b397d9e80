import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import { ownedRows } from "../http/barrier.ts";
import { CALL_COLUMNS, type CallRow } from "./calls-list.ts";

/**
 * One call of the account in the call shape (SPEC "call"), analyzed or not — as transcript and
 * recording open any of its calls — or null when the account has no such call.
 */
export async function callById(db: Sql, accountId: string, params: { artifactId: number }) {
  const found = await rows<CallRow>(
    db,
    sql`
    select ${CALL_COLUMNS}
    from calls c
    where c.account_id = ${accountId} and c.artifact_id = ${params.artifactId}`,
    { prepare: true },
  );
  return ownedRows(found)[0] ?? null;
}
