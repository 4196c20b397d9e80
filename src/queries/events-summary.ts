import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import type { ReportWindow } from "../reports/window.ts";

export interface EventSummaryRow {
  platform: string | null;
  ad_id: string | null;
  ad_name: string | null;
  campaign_name: string | null;
  leads: number;
  applications: number;
  bookings: number;
  sales: number;
  no_shows: number;
  cancellations: number;
  total_value: number;
}

/**
 * CRM results of the window per ad and campaign (docs/metrics.md "Events"), by event date. An event
 * goes to its resolved ad (its campaign is the ad's); an unresolved one to the row of ad null and
 * the campaign it names (`campaign_name`, else `utm_campaign`; null when neither). Sales are counted
 * purchases, placed with their opening event's ad; `total_value` is their revenue. Only events that
 * count in some column are read, so no row is all zeros. Aggregates over the account's rows: no
 * owner tag needed.
 */
export async function eventsSummary(db: Sql, accountId: string, params: { window: ReportWindow }) {
  const w = params.window;
  return rows<EventSummaryRow>(
    db,
    sql`
    with ev as (
      select
        e.*,
        case when e.resolved_ad_id is null
          then coalesce(nullif(btrim(e.campaign_name), ''), nullif(btrim(e.utm_campaign), ''))
        end as unresolved_campaign
      from events e
      where e.account_id = ${accountId}
        and e.event_datetime >= ${w.start}::timestamptz and e.event_datetime < ${w.end}::timestamptz
        and (e.event_type in ('lead', 'application', 'booking', 'no_show', 'cancel') or e.counted)
    )
    select
      ev.resolved_platform as platform,
      ev.resolved_ad_id as ad_id,
      a.ad_name,
      case when ev.resolved_ad_id is null then ev.unresolved_campaign else a.campaign_name end as campaign_name,
      count(*) filter (where ev.event_type = 'lead')::int as leads,
      count(*) filter (where ev.event_type = 'application')::int as applications,
      count(*) filter (where ev.event_type = 'booking')::int as bookings,
      count(*) filter (where ev.counted)::int as sales,
      count(*) filter (where ev.event_type = 'no_show')::int as no_shows,
      count(*) filter (
        where ev.event_type = 'cancel' or (ev.event_type = 'booking' and ev.cancelled_at is not null)
      )::int as cancellations,
      round(coalesce(sum(ev.group_revenue) filter (where ev.counted), 0), 2)::float8 as total_value
    from ev
    left join ads a
      on a.account_id = ev.account_id and a.platform = ev.resolved_platform and a.ad_id = ev.resolved_ad_id
    group by ev.resolved_platform, ev.resolved_ad_id, a.ad_name, a.campaign_name, ev.unresolved_campaign
    order by total_value desc, sales desc, leads desc, a.ad_name nulls last, campaign_name nulls last,
      ev.resolved_platform, ev.resolved_ad_id`,
  );
}
