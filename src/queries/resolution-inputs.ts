import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

export interface ResolutionInput {
  table: "events" | "touchpoints";
  id: string;
  utm_ad_id: string | null;
  meta_ad_id: string | null;
  utm_content: string | null;
  utm_campaign: string | null;
  campaign_name: string | null;
  resolution: "exact" | "by_name" | "unresolved";
  resolved_platform: string | null;
  resolved_ad_id: string | null;
}

/** What ad resolution reads of every event and touchpoint of the account. */
export function resolutionInputs(db: Sql, accountId: string): Promise<ResolutionInput[]> {
  return rows<ResolutionInput>(
    db,
    sql`
      select 'events' as table, id, utm_ad_id, meta_ad_id, utm_content, utm_campaign, campaign_name,
             resolution, resolved_platform, resolved_ad_id
      from events where account_id = ${accountId}
      union all
      select 'touchpoints', id::text, ad_ids->>'ad_id', ad_ids->>'meta_ad_id', utm->>'content', utm->>'campaign',
             utm->>'campaign_name', resolution, resolved_platform, resolved_ad_id
      from touchpoints where account_id = ${accountId}`,
  );
}

export interface ResolutionUpdate {
  id: string;
  resolution: string;
  resolved_platform: string | null;
  resolved_ad_id: string | null;
}

export async function updateResolutions(
  db: Sql,
  accountId: string,
  params: { table: "events" | "touchpoints"; updates: readonly ResolutionUpdate[] },
): Promise<void> {
  if (params.updates.length === 0) return;
  const batch = JSON.stringify(params.updates);
  const recordset = sql`jsonb_to_recordset(${batch}::jsonb) as u(id text, resolution text, resolved_platform text, resolved_ad_id text)`;
  if (params.table === "events") {
    await db.execute(sql`
      update events e set resolution = u.resolution, resolved_platform = u.resolved_platform,
        resolved_ad_id = u.resolved_ad_id, updated_at = now()
      from ${recordset}
      where e.account_id = ${accountId} and e.id = u.id`);
  } else {
    await db.execute(sql`
      update touchpoints t set resolution = u.resolution, resolved_platform = u.resolved_platform,
        resolved_ad_id = u.resolved_ad_id
      from ${recordset}
      where t.account_id = ${accountId} and t.id = u.id::uuid`);
  }
}
