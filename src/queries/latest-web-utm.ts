import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

export interface WebUtm {
  utm: Record<string, string | undefined>;
  ad_ids: Record<string, string | undefined>;
}

/**
 * What a conversion without UTMs inherits (server-side enrichment, SPEC "Hidden form fields"): the
 * channel (source, medium) of the contact's latest web touch at or before it, and the campaign,
 * content, term and ad ids of its latest ad click — a later email or organic visit never takes the
 * ad's place (tracking rule 7). One statement for a whole batch of lookups; answers in their order.
 */
export async function latestWebUtm(
  db: Sql,
  accountId: string,
  params: { lookups: readonly { contactId: string; before: string }[] },
): Promise<(WebUtm | null)[]> {
  if (params.lookups.length === 0) return [];
  const lookups = JSON.stringify(
    params.lookups.map((l, idx) => ({ idx, contact_id: l.contactId, before: l.before })),
  );
  const found = await rows<{
    idx: number;
    channel_utm: Record<string, string> | null;
    ad_utm: Record<string, string> | null;
    ad_ids: Record<string, string> | null;
  }>(
    db,
    sql`
      select l.idx, channel.utm as channel_utm, ad.utm as ad_utm, ad.ad_ids
      from jsonb_to_recordset(${lookups}::jsonb) as l(idx int, contact_id uuid, before timestamptz)
      left join lateral (
        select utm from touchpoints
        where account_id = ${accountId} and contact_id = l.contact_id and kind = 'web'
          and occurred_at <= l.before and utm <> '{}'::jsonb
        order by occurred_at desc, id desc limit 1
      ) channel on true
      left join lateral (
        select utm, ad_ids from touchpoints
        where account_id = ${accountId} and contact_id = l.contact_id and kind = 'web'
          and occurred_at <= l.before and is_paid
        order by occurred_at desc, id desc limit 1
      ) ad on true
      order by l.idx`,
    { prepare: true },
  );
  return found.map((row) => {
    if (!row.channel_utm && !row.ad_utm) return null;
    const channel = row.channel_utm ?? {};
    const ad = row.ad_utm ?? {};
    return {
      utm: {
        source: channel.source ?? ad.source,
        medium: channel.medium ?? ad.medium,
        campaign: ad.campaign ?? channel.campaign,
        content: ad.content ?? channel.content,
        term: ad.term ?? channel.term,
      },
      ad_ids: row.ad_ids ?? {},
    };
  });
}
