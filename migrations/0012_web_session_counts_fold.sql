-- The events rollup gains the dimension `unresolved_signal`: events carrying an ad signal that did
-- not resolve, keyed by their raw signal as the JSON array [utm_ad_id, meta_ad_id, utm_content]
-- (capture health lists them). Same statement otherwise (0010).
CREATE OR REPLACE FUNCTION ascribe_report_rollup_sql(source text, target text) RETURNS text
  LANGUAGE sql IMMUTABLE
  AS $fn$ SELECT format($q$
    WITH delta AS (%s),
    placed AS (
      SELECT d.account_id, d.sign, d.event_type, d.counted, d.group_revenue, d.group_refunds,
             d.group_disputes, d.cancelled_at IS NOT NULL AS cancelled, false AS is_meeting,
             (d.event_datetime AT TIME ZONE a.timezone)::date AS day,
             d.record_platform, d.record_ad_id, d.utm_source, d.utm_campaign, d.campaign_name,
             d.product_name, d.product_key, d.assigned_user_name, d.first_touch_ad, d.assist_ads,
             d.resolution, d.utm_ad_id, d.meta_ad_id, d.utm_content,
             NOT (nullif(btrim(d.utm_ad_id), '') IS NULL AND nullif(btrim(d.meta_ad_id), '') IS NULL
                  AND nullif(btrim(d.utm_content), '') IS NULL) AS has_signal,
             (nullif(btrim(d.utm_source), '') IS NULL AND nullif(btrim(d.utm_medium), '') IS NULL
              AND nullif(btrim(d.utm_campaign), '') IS NULL AND nullif(btrim(d.utm_content), '') IS NULL
              AND nullif(btrim(d.utm_term), '') IS NULL AND nullif(btrim(d.utm_ad_id), '') IS NULL
              AND nullif(btrim(d.meta_ad_id), '') IS NULL) AS no_utm
      FROM delta d JOIN accounts a ON a.id = d.account_id
      UNION ALL
      SELECT d.account_id, d.sign, d.event_type, NULL, NULL, NULL, NULL, d.cancelled_at IS NOT NULL, true,
             d.booking_date,
             d.record_platform, d.record_ad_id, d.utm_source, d.utm_campaign, d.campaign_name,
             d.product_name, d.product_key, d.assigned_user_name, NULL, NULL, NULL, NULL, NULL, NULL, false,
             false
      FROM delta d
      WHERE d.event_type = 'booking' AND d.booking_date IS NOT NULL
    ),
    keyed AS (
      SELECT p.*, k.dim, k.key
      FROM placed p
      CROSS JOIN LATERAL (VALUES
        ('total', ''),
        ('ad', CASE WHEN p.record_ad_id IS NULL THEN '' ELSE p.record_platform || '/' || p.record_ad_id END),
        ('source', coalesce(nullif(btrim(p.utm_source), ''), '')),
        ('campaign', CASE WHEN p.record_ad_id IS NULL
          THEN coalesce(nullif(btrim(p.campaign_name), ''), nullif(btrim(p.utm_campaign), ''), '') END),
        ('product', coalesce(nullif(btrim(p.product_name), ''), nullif(btrim(p.product_key), ''), '')),
        ('rep', coalesce(nullif(btrim(p.assigned_user_name), ''), '')),
        ('ad_rep', CASE WHEN p.record_ad_id IS NOT NULL AND nullif(btrim(p.assigned_user_name), '') IS NOT NULL
          THEN p.record_platform || '/' || p.record_ad_id || chr(31) || btrim(p.assigned_user_name) END),
        ('ad_ft', p.first_touch_ad),
        ('unresolved_signal', CASE WHEN p.has_signal AND p.resolution = 'unresolved'
          THEN jsonb_build_array(p.utm_ad_id, p.meta_ad_id, p.utm_content)::text END)
      ) AS k(dim, key)
      WHERE k.key IS NOT NULL
      UNION ALL
      SELECT p.*, 'ad_assist', a.key
      FROM placed p CROSS JOIN LATERAL unnest(p.assist_ads) AS a(key)
    ),
    summed AS (
      SELECT account_id, dim, day, key,
        coalesce(sum(sign) FILTER (WHERE NOT is_meeting AND event_type = 'lead'), 0) AS leads,
        coalesce(sum(sign) FILTER (WHERE NOT is_meeting AND event_type = 'application'), 0) AS applications,
        coalesce(sum(sign) FILTER (WHERE NOT is_meeting AND event_type = 'booking'), 0) AS bookings,
        coalesce(sum(sign) FILTER (WHERE NOT is_meeting AND event_type = 'no_show'), 0) AS no_shows,
        coalesce(sum(sign) FILTER (WHERE NOT is_meeting AND event_type = 'cancel'), 0) AS cancels,
        coalesce(sum(sign) FILTER (WHERE NOT is_meeting AND event_type = 'booking' AND cancelled), 0)
          AS cancelled_bookings,
        coalesce(sum(sign) FILTER (WHERE NOT is_meeting AND event_type = 'sale_lost'), 0) AS sales_lost,
        coalesce(sum(sign) FILTER (WHERE NOT is_meeting AND counted), 0) AS sales,
        coalesce(sum(sign * group_revenue) FILTER (WHERE NOT is_meeting AND counted), 0) AS revenue,
        coalesce(sum(sign * group_refunds) FILTER (WHERE NOT is_meeting AND counted), 0) AS refunds,
        coalesce(sum(sign * group_disputes) FILTER (WHERE NOT is_meeting AND counted), 0) AS disputes,
        coalesce(sum(sign) FILTER (WHERE is_meeting AND NOT cancelled), 0) AS meetings,
        coalesce(sum(sign) FILTER (WHERE is_meeting AND cancelled), 0) AS cancelled_meetings,
        coalesce(sum(sign) FILTER (WHERE NOT is_meeting), 0) AS events,
        coalesce(sum(sign) FILTER (WHERE NOT is_meeting AND has_signal), 0) AS signal_events,
        coalesce(sum(sign) FILTER (WHERE NOT is_meeting AND has_signal AND resolution = 'exact'), 0)
          AS exact_events,
        coalesce(sum(sign) FILTER (WHERE NOT is_meeting AND has_signal AND resolution = 'by_name'), 0)
          AS by_name_events,
        coalesce(sum(sign) FILTER (WHERE NOT is_meeting AND has_signal AND resolution = 'unresolved'), 0)
          AS unresolved_events,
        coalesce(sum(sign) FILTER (WHERE NOT is_meeting AND event_type = 'lead' AND no_utm), 0)
          AS leads_without_utm
      FROM keyed
      GROUP BY account_id, dim, day, key
    )
    INSERT INTO %I (account_id, dim, day, key, leads, applications, bookings, no_shows, cancels,
      cancelled_bookings, sales_lost, sales, revenue, refunds, disputes, meetings, cancelled_meetings,
      events, signal_events, exact_events, by_name_events, unresolved_events, leads_without_utm)
    SELECT * FROM summed
    -- An update that changed nothing the rollup counts nets to zero: nothing to write.
    WHERE (leads, applications, bookings, no_shows, cancels, cancelled_bookings, sales_lost, sales,
           revenue, refunds, disputes, meetings, cancelled_meetings, events, signal_events, exact_events,
           by_name_events, unresolved_events, leads_without_utm)
      IS DISTINCT FROM (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
  $q$, source, target) $fn$;
--> statement-breakpoint
-- Folds an account's pending deltas — events, touchpoints, web sessions — into the rollups, one
-- statement each, before a report reads them (0006). Rows a fold brings to zero stay: a later
-- delta may revive them, and reads ignore them. Folding web sessions also counts, per day, the
-- sessions present and those with an ad id or click id into the `total` rows (web_sessions,
-- web_sessions_with_id): a session is counted once per day it is seen on, as analytics tools split
-- sessions at midnight.
CREATE OR REPLACE FUNCTION ascribe_fold_report_rollup(account uuid) RETURNS void
  LANGUAGE plpgsql
  AS $fn$
BEGIN
  -- One fold of an account at a time (until the report's transaction ends): the session count
  -- reads what the session-days held before it, which a concurrent fold must not be changing. The
  -- statements below take their snapshots after the lock.
  PERFORM pg_advisory_xact_lock(hashtextextended(account::text, 727275));
  -- EXECUTE: planned for this account (a plan made for any account would scan the whole log).
  EXECUTE format($q$
  WITH moved AS (
    DELETE FROM report_rollup_delta WHERE account_id = %L RETURNING *
  ),
  summed AS (
    SELECT account_id, dim, day, key, sum(leads) AS leads, sum(applications) AS applications,
      sum(bookings) AS bookings, sum(no_shows) AS no_shows, sum(cancels) AS cancels,
      sum(cancelled_bookings) AS cancelled_bookings,
      sum(sales_lost) AS sales_lost, sum(sales) AS sales, sum(revenue) AS revenue,
      sum(refunds) AS refunds, sum(disputes) AS disputes, sum(meetings) AS meetings,
      sum(cancelled_meetings) AS cancelled_meetings, sum(events) AS events, sum(signal_events) AS signal_events, sum(exact_events) AS exact_events,
      sum(by_name_events) AS by_name_events, sum(unresolved_events) AS unresolved_events,
      sum(leads_without_utm) AS leads_without_utm
    FROM moved
    GROUP BY account_id, dim, day, key
  )
  INSERT INTO report_rollup_daily AS r (account_id, dim, day, key, leads, applications, bookings,
    no_shows, cancels, cancelled_bookings, sales_lost, sales, revenue, refunds, disputes, meetings,
    cancelled_meetings, events, signal_events, exact_events, by_name_events, unresolved_events, leads_without_utm)
  SELECT * FROM summed
  -- One global order: two folds never wait on each other in a cycle.
  ORDER BY account_id, dim, day, key
  ON CONFLICT (account_id, dim, day, key) DO UPDATE SET
    leads = r.leads + excluded.leads,
    applications = r.applications + excluded.applications,
    bookings = r.bookings + excluded.bookings,
    no_shows = r.no_shows + excluded.no_shows,
    cancels = r.cancels + excluded.cancels,
    cancelled_bookings = r.cancelled_bookings + excluded.cancelled_bookings,
    sales_lost = r.sales_lost + excluded.sales_lost,
    sales = r.sales + excluded.sales,
    revenue = r.revenue + excluded.revenue,
    refunds = r.refunds + excluded.refunds,
    disputes = r.disputes + excluded.disputes,
    meetings = r.meetings + excluded.meetings,
    cancelled_meetings = r.cancelled_meetings + excluded.cancelled_meetings,
    events = r.events + excluded.events,
    signal_events = r.signal_events + excluded.signal_events,
    exact_events = r.exact_events + excluded.exact_events,
    by_name_events = r.by_name_events + excluded.by_name_events,
    unresolved_events = r.unresolved_events + excluded.unresolved_events,
    leads_without_utm = r.leads_without_utm + excluded.leads_without_utm
  $q$, account);
  EXECUTE format($q$
  WITH moved AS (
    DELETE FROM touchpoint_rollup_delta WHERE account_id = %L RETURNING *
  ),
  summed AS (
    SELECT account_id, day, kind, platform, ad_id, source, campaign, sum(touchpoints) AS touchpoints
    FROM moved
    GROUP BY account_id, day, kind, platform, ad_id, source, campaign
  )
  INSERT INTO touchpoint_rollup_daily AS r (account_id, day, kind, platform, ad_id, source, campaign,
    touchpoints)
  SELECT * FROM summed
  ORDER BY account_id, day, kind, platform, ad_id, source, campaign
  ON CONFLICT (account_id, day, kind, platform, ad_id, source, campaign) DO UPDATE SET
    touchpoints = r.touchpoints + excluded.touchpoints
  $q$, account);
  EXECUTE format($q$
  WITH moved AS (
    DELETE FROM web_session_delta WHERE account_id = %L RETURNING *
  ),
  summed AS (
    SELECT account_id, day, session_key, sum(touchpoints) AS touchpoints, sum(with_id) AS with_id
    FROM moved
    GROUP BY account_id, day, session_key
  ),
  -- what each session-day held before this fold (the statement's snapshot: taken after the lock)
  before AS (
    SELECT s.account_id, s.day, s.touchpoints, s.with_id,
           coalesce(d.touchpoints, 0) AS touchpoints_before, coalesce(d.with_id, 0) AS with_id_before
    FROM summed s
    LEFT JOIN web_session_daily d
      ON d.account_id = s.account_id AND d.day = s.day AND d.session_key = s.session_key
  ),
  written AS (
    INSERT INTO web_session_daily AS r (account_id, day, session_key, touchpoints, with_id)
    SELECT * FROM summed
    ORDER BY account_id, day, session_key
    ON CONFLICT (account_id, day, session_key) DO UPDATE SET
      touchpoints = r.touchpoints + excluded.touchpoints,
      with_id = r.with_id + excluded.with_id
  ),
  -- sessions that appear on (or leave) a day with this fold, and those with an id
  counted AS (
    SELECT account_id, day,
      sum((touchpoints_before + touchpoints > 0)::int - (touchpoints_before > 0)::int) AS web_sessions,
      sum((with_id_before + with_id > 0)::int - (with_id_before > 0)::int) AS web_sessions_with_id
    FROM before
    GROUP BY account_id, day
  )
  INSERT INTO report_rollup_daily AS r (account_id, dim, day, key, web_sessions, web_sessions_with_id)
  SELECT account_id, 'total', day, '', web_sessions, web_sessions_with_id FROM counted
  WHERE (web_sessions, web_sessions_with_id) <> (0, 0)
  ORDER BY account_id, day
  ON CONFLICT (account_id, dim, day, key) DO UPDATE SET
    web_sessions = r.web_sessions + excluded.web_sessions,
    web_sessions_with_id = r.web_sessions_with_id + excluded.web_sessions_with_id
  $q$, account);
END $fn$;
--> statement-breakpoint
-- Recomputes one account's rollups and contact milestones from its events and touchpoints (repair,
-- or after a timezone change).
CREATE OR REPLACE FUNCTION ascribe_rebuild_report_rollup(account uuid) RETURNS void
  LANGUAGE plpgsql
  AS $fn$
DECLARE
  statement text;
BEGIN
  DELETE FROM report_rollup_delta WHERE account_id = account;
  DELETE FROM report_rollup_daily WHERE account_id = account;
  DELETE FROM touchpoint_rollup_delta WHERE account_id = account;
  DELETE FROM touchpoint_rollup_daily WHERE account_id = account;
  DELETE FROM web_session_delta WHERE account_id = account;
  DELETE FROM web_session_daily WHERE account_id = account;
  DELETE FROM contact_milestones WHERE account_id = account;
  EXECUTE ascribe_report_rollup_sql(
    format('SELECT e.*, 1 AS sign FROM events e WHERE e.account_id = %L', account),
    'report_rollup_daily');
  FOREACH statement IN ARRAY ascribe_touchpoint_rollup_sql(
    format('SELECT t.*, 1 AS sign FROM touchpoints t WHERE t.account_id = %L', account),
    'touchpoint_rollup_daily', 'web_session_daily')
  LOOP
    EXECUTE statement;
  END LOOP;
  INSERT INTO report_rollup_daily AS r (account_id, dim, day, key, web_sessions, web_sessions_with_id)
  SELECT s.account_id, 'total', s.day, '', count(*) FILTER (WHERE s.touchpoints > 0),
         count(*) FILTER (WHERE s.with_id > 0)
  FROM web_session_daily s WHERE s.account_id = account
  GROUP BY s.account_id, s.day
  ON CONFLICT (account_id, dim, day, key) DO UPDATE SET
    web_sessions = excluded.web_sessions, web_sessions_with_id = excluded.web_sessions_with_id;
  PERFORM ascribe_refresh_contact_milestones(account, NULL);
END $fn$;
--> statement-breakpoint
-- Backfill (the new dimension, the session counts): every account's rollups again, with the forced
-- tenant policies lifted for these statements inside the migration's transaction (0006).
ALTER TABLE accounts NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE touchpoints NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE events NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE report_rollup_daily NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE report_rollup_delta NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE touchpoint_rollup_daily NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE touchpoint_rollup_delta NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE web_session_daily NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE web_session_delta NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE contact_milestones NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
SELECT ascribe_rebuild_report_rollup(id) FROM accounts;
--> statement-breakpoint
ALTER TABLE accounts FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE touchpoints FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE events FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE report_rollup_daily FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE report_rollup_delta FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE touchpoint_rollup_daily FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE touchpoint_rollup_delta FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE web_session_daily FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE web_session_delta FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE contact_milestones FORCE ROW LEVEL SECURITY;
