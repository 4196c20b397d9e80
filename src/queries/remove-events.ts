import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

/**
 * Removes events by id with their conversion touchpoints (`event:<id>`, as ingest writes them): a
 * mark the tool took back (a no-show unmarked). The rollups, milestones and totals follow through
 * their delete triggers. Returns the ids removed.
 */
export async function removeEvents(db: Sql, accountId: string, params: { ids: string[] }): Promise<string[]> {
  if (params.ids.length === 0) return [];
  const externalIds = params.ids.map((id) => `event:${id}`);
  await db.execute(sql`
    delete from touchpoints
    where account_id = ${accountId} and external_id in (select jsonb_array_elements_text(${JSON.stringify(externalIds)}::jsonb))`);
  const removed = await rows<{ id: string }>(
    db,
    sql`delete from events where account_id = ${accountId} and id in (select jsonb_array_elements_text(${JSON.stringify(params.ids)}::jsonb))
        returning id`,
  );
  return removed.map((r) => r.id);
}
