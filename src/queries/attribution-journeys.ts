import { type SQL, sql } from "drizzle-orm";
import { rows, type Sql, sessionSetting } from "../db/client.ts";
import type { ReportWindow } from "../reports/window.ts";

export type CreditLevel = "ad" | "campaign" | "channel";

export interface JourneysParams {
  window: ReportWindow;
  level: CreditLevel;
  lookbackDays: number;
}

/** A counted sale of the window and its touches in the look-back, oldest first. */
export interface SaleJourneyRow {
  sale_id: string;
  at: number;
  revenue: number;
  net: number;
  keys: string[];
  ats: number[];
}

/** A path of keys walked by `contacts` contacts who bought nothing in the window. */
export interface UnconvertedPathRow {
  keys: string[];
  contacts: number;
}

/*
 * A touch's channel (docs/attribution.md, "Levels"): an explicit `utm_channel` first (tracking rule
 * 7: `utm_channel=email` is an email touch whatever else it carries), then the channel the tracking
 * script or an import recorded, then a grouping of source and medium; a web visit with none of
 * these is `direct`. A conversion (a CRM event) that carries nothing names no channel: it is not a
 * touch at this level.
 */
const CHANNEL = sql`coalesce(
  nullif(lower(btrim(tp.utm->>'channel')), ''),
  nullif(lower(btrim(tp.channel)), ''),
  case
    when lower(tp.utm->>'medium') in ('email', 'e-mail', 'newsletter') or lower(tp.utm->>'source') in ('email', 'newsletter') then 'email'
    when tp.resolved_ad_id is not null or tp.is_paid
      or lower(tp.utm->>'medium') in ('paid', 'cpc', 'ppc', 'cpm', 'paid_social', 'paidsocial', 'paid-social', 'display', 'ads') then
      case when lower(coalesce(tp.resolved_platform, tp.utm->>'source')) in ('google', 'bing', 'microsoft') then 'paid_search'
           else 'paid_social' end
    when lower(tp.utm->>'source') in ('google', 'bing', 'duckduckgo', 'yahoo', 'ecosia') then 'organic_search'
    when lower(tp.utm->>'source') in ('facebook', 'instagram', 'tiktok', 'linkedin', 'twitter', 'x', 'youtube', 'pinterest', 'reddit', 'snapchat') then 'social'
    when nullif(btrim(tp.utm->>'source'), '') is not null then 'referral'
    when tp.kind = 'web' then 'direct'
  end)`;

/**
 * The credited key of a touchpoint `tp` at a level; null: not a touch at that level. At the
 * campaign level the touch's ad names its campaign through `campaigns` (CAMPAIGNS).
 */
function touchKey(level: CreditLevel): SQL {
  switch (level) {
    case "ad":
      return sql`case when tp.resolved_ad_id is not null then tp.resolved_platform || '/' || tp.resolved_ad_id end`;
    case "campaign":
      return sql`case when tp.resolved_ad_id is not null then tp.resolved_platform || '/'
        || coalesce((select c.of from campaigns c) -> tp.resolved_platform ->> tp.resolved_ad_id, '') end`;
    case "channel":
      return CHANNEL;
  }
}

/*
 * Each ad's campaign as one value, built once per request: {platform: {ad_id: campaign_id}}. A join
 * on the ads cost a probe per touch, or, hashed, lost the contact order the Markov paths are read
 * in; a lookup in this value costs neither. An ad without a row or without a campaign names its
 * platform's campaign ''.
 */
const CAMPAIGNS = (accountId: string) => sql`campaigns as materialized (
      select coalesce(jsonb_object_agg(p.platform, p.ads), '{}') as of
      from (select ad.platform, jsonb_object_agg(ad.ad_id, coalesce(ad.campaign_id, '')) as ads
            from ads ad where ad.account_id = ${accountId} group by ad.platform) p
    ),`;

/**
 * Which touchpoints can be touches at all: at the ad and campaign levels only those with a resolved
 * ad, so the per-contact reads use the partial index of ad touches (touchpoints_ad_touch_idx), which
 * carries every column they read (migration 0036): they never visit the table.
 */
function levelFilter(level: CreditLevel): SQL {
  switch (level) {
    case "ad":
    case "campaign":
      // A touch without a platform has no key: left out before the key is made.
      return sql`and tp.resolved_ad_id is not null and tp.resolved_platform is not null`;
    case "channel":
      return sql``;
  }
}

/*
 * A conversion whose UTMs and ad the server inherited from the contact's visits (`utm_enriched`,
 * docs/ingestion.md) repeats a touch already in the journey: it is not a touch of its own. Asked
 * of the few enriched events (events_utm_enriched_idx, migration 0036).
 */
const OWN_SIGNAL = (accountId: string) => sql`not (tp.kind = 'conversion' and exists (
  select 1 from events ev where ev.account_id = ${accountId} and ev.id = tp.event_id and ev.utm_enriched))`;

const epochMs = (column: SQL) => sql`(extract(epoch from ${column}) * 1000)::float8`;

/**
 * What the journeys were read from: the statement's snapshot (which transactions' changes it saw),
 * its instant, and the version of the ad catalog the campaigns were looked up in.
 */
export interface JourneysSeen {
  seen_snapshot: string;
  computed_at: string;
  catalog_version: number;
}

/** The JourneysSeen of the statement these columns are read in. */
const seenBy = (
  accountId: string,
) => sql`pg_current_snapshot()::text as seen_snapshot, now()::text as computed_at,
  coalesce((select v.version from ad_catalog_versions v where v.account_id = ${accountId}), 0)::float8 as catalog_version`;

/**
 * Each counted sale of the window (docs/metrics.md, sale counting; its purchase's revenue with later
 * installments, net of refunds and disputes) with the contact's touches at `level` in the
 * `lookbackDays` up to it, its own conversion included when it carried its own source, in time
 * order. Each sale's touches are gathered beside it (no sort of all the touches), and the sales come
 * as one JSON document: one native parse, where a row per sale, its arrays parsed character by
 * character in JavaScript, cost the process three times as much at scale 100.
 */
export async function saleJourneys(
  db: Sql,
  accountId: string,
  params: JourneysParams,
): Promise<{ sales: SaleJourneyRow[]; seen: JourneysSeen }> {
  const w = params.window;
  const [found] = await rows<{ sales: SaleJourneyRow[] } & JourneysSeen>(
    db,
    sql`
    with ${CAMPAIGNS(accountId)}
    s as (
      select e.id, e.contact_id, e.event_datetime as at,
        coalesce(e.group_revenue, 0) as revenue,
        coalesce(e.group_revenue, 0) - coalesce(e.group_refunds, 0) - coalesce(e.group_disputes, 0) as net
      from events e
      where e.account_id = ${accountId} and e.counted
        and e.event_datetime >= ${w.start}::timestamptz and e.event_datetime < ${w.end}::timestamptz
    )
    select coalesce(json_agg(x order by x.at, x.sale_id), '[]') as sales, ${seenBy(accountId)}
    from (
    select s.id as sale_id, ${epochMs(sql`s.at`)} as at, s.revenue::float8 as revenue, s.net::float8 as net,
      coalesce(j.keys, '[]') as keys, coalesce(j.ats, '[]') as ats
    from s
    left join lateral (
      select json_agg(t.key) as keys, json_agg(${epochMs(sql`t.at`)}) as ats
      from (
        select ${touchKey(params.level)} as key, tp.occurred_at as at
        from touchpoints tp
        where tp.account_id = ${accountId} and tp.contact_id = s.contact_id
          and tp.occurred_at <= s.at and tp.occurred_at >= s.at - ${params.lookbackDays}::int * interval '1 day'
          ${levelFilter(params.level)} and ${OWN_SIGNAL(accountId)}
        order by tp.occurred_at, key
      ) t
      where t.key is not null
    ) j on true) x`,
  );
  if (!found) throw new Error("the journeys statement answered no row");
  const { sales, ...seen } = found;
  return { sales, seen };
}

/**
 * The paths of contacts touched in the window (or its look-back before it) who have no counted sale
 * in the window, grouped by path: the Markov chain's paths to null, as one JSON document. The
 * touches are read in contact order, straight from the index (no sort of them all), and each
 * contact's path is made as its touches go by.
 */
export async function unconvertedPaths(
  db: Sql,
  accountId: string,
  params: JourneysParams,
): Promise<{ paths: UnconvertedPathRow[]; seen: JourneysSeen }> {
  const w = params.window;
  // The grouping of paths (one per touched contact) stays in memory.
  await sessionSetting(db, "work_mem", "32MB");
  // Every ad touch has a key (levelFilter): the test, pushed into the scan, would make it twice.
  const keyed = params.level === "channel" ? sql`where t.key is not null` : sql``;
  const [found] = await rows<{ paths: UnconvertedPathRow[] } & JourneysSeen>(
    db,
    sql`
    -- The window's buyers once, not one probe of events per touchpoint.
    with ${CAMPAIGNS(accountId)}
    buyers as (
      select distinct e.contact_id from events e
      where e.account_id = ${accountId} and e.counted and e.contact_id is not null
        and e.event_datetime >= ${w.start}::timestamptz and e.event_datetime < ${w.end}::timestamptz
    ),
    t as (
      select tp.contact_id, ${touchKey(params.level)} as key, tp.occurred_at as at
      from touchpoints tp
      where tp.account_id = ${accountId} and tp.contact_id is not null ${levelFilter(params.level)}
        and tp.occurred_at >= ${w.start}::timestamptz - ${params.lookbackDays}::int * interval '1 day'
        and tp.occurred_at < ${w.end}::timestamptz
        and ${OWN_SIGNAL(accountId)}
        and not exists (select 1 from buyers b where b.contact_id = tp.contact_id)
    ),
    -- Each contact's path as JSON text: texts group far faster than arrays. The touches come in
    -- (contact, instant) order from the index, so the sort by key among ties is incremental, and
    -- json_agg takes them in the order of its sorted input (an ORDER BY in the aggregate sorted
    -- each contact apart).
    paths as (
      select json_agg(o.key)::text as keys
      from (select t.contact_id, t.key from t ${keyed} order by t.contact_id, t.at, t.key) o
      group by o.contact_id
    )
    select coalesce(json_agg(json_build_object('keys', g.keys::json, 'contacts', g.contacts)), '[]') as paths,
      ${seenBy(accountId)}
    from (select keys, count(*)::int as contacts from paths group by keys) g`,
  );
  if (!found) throw new Error("the paths statement answered no row");
  const { paths, ...seen } = found;
  return { paths, seen };
}
