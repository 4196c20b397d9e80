-- The new tables (touchpoint_rollup_daily/delta, web_session_daily/delta, contact_milestones) get
-- forced RLS and the tenant policy.
SELECT ascribe_enforce_tenancy();
--> statement-breakpoint
-- The events rollup's statement (0006) with more measures and one more dimension: capture
-- health's — every event, those carrying an ad signal (a non-blank utm_ad_id, meta_ad_id or
-- utm_content: what ad resolution reads) by resolution, leads without any UTM or ad id, and
-- `unresolved_signal`, the unresolved ones keyed by their raw signal as the JSON array
-- [utm_ad_id, meta_ad_id, utm_content] — cancelled bookings on their booking day
-- (`cancelled_meetings`; `meetings` holds the others), and `unattributed`: events without an ad of
-- record keyed by [source, campaign] as the attribution report groups them (utm_source, '(none)'
-- when blank; utm_campaign, null when blank).
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
          THEN jsonb_build_array(p.utm_ad_id, p.meta_ad_id, p.utm_content)::text END),
        ('unattributed', CASE WHEN p.record_ad_id IS NULL
          THEN jsonb_build_array(coalesce(nullif(btrim(p.utm_source), ''), '(none)'),
            nullif(btrim(p.utm_campaign), ''))::text END)
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
-- The touchpoint rollup's two statements over a set of touchpoint rows (`source` yields
-- touchpoints' columns plus `sign`): counts per day, kind, resolved ad, source and campaign into
-- `tp_target`, and web touchpoints per day and session into `session_target`. Shared by the
-- triggers (into the delta logs) and the rebuild (into the rollups). '' stands for none.
CREATE FUNCTION ascribe_touchpoint_rollup_sql(source text, tp_target text, session_target text)
  RETURNS text[]
  LANGUAGE sql IMMUTABLE
  AS $fn$ SELECT ARRAY[
  format($q$
    WITH delta AS (%s),
    summed AS (
      SELECT d.account_id, (d.occurred_at AT TIME ZONE a.timezone)::date AS day, d.kind,
        coalesce(d.resolved_platform, '') AS platform, coalesce(d.resolved_ad_id, '') AS ad_id,
        coalesce(nullif(btrim(d.utm->>'source'), ''), nullif(btrim(d.channel), ''), '(none)') AS source,
        coalesce(nullif(btrim(d.utm->>'campaign'), ''), '') AS campaign,
        sum(d.sign) AS touchpoints
      FROM delta d JOIN accounts a ON a.id = d.account_id
      GROUP BY 1, 2, 3, 4, 5, 6, 7
    )
    INSERT INTO %I (account_id, day, kind, platform, ad_id, source, campaign, touchpoints)
    SELECT * FROM summed WHERE touchpoints <> 0
  $q$, source, tp_target),
  format($q$
    WITH delta AS (%s),
    summed AS (
      SELECT d.account_id, (d.occurred_at AT TIME ZONE a.timezone)::date AS day,
        coalesce(d.session_id, 'tp:' || d.id::text) AS session_key,
        sum(d.sign) AS touchpoints,
        coalesce(sum(d.sign) FILTER (WHERE d.ad_ids <> '{}'::jsonb OR d.click_ids <> '{}'::jsonb), 0)
          AS with_id
      FROM delta d JOIN accounts a ON a.id = d.account_id
      WHERE d.kind = 'web'
      GROUP BY 1, 2, 3
    )
    INSERT INTO %I (account_id, day, session_key, touchpoints, with_id)
    SELECT * FROM summed WHERE (touchpoints, with_id) IS DISTINCT FROM (0, 0)
  $q$, source, session_target)
] $fn$;
--> statement-breakpoint
ALTER TABLE touchpoint_rollup_delta SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000,
  autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 5000);
--> statement-breakpoint
ALTER TABLE web_session_delta SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000,
  autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 5000);
--> statement-breakpoint
-- As the events rollup (0006): statement-level, append-only into the delta logs.
CREATE FUNCTION ascribe_touchpoints_rollup() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
DECLARE
  source text;
  statement text;
BEGIN
  IF TG_OP = 'INSERT' THEN
    source := 'SELECT n.*, 1 AS sign FROM new_rows n';
  ELSIF TG_OP = 'DELETE' THEN
    source := 'SELECT o.*, -1 AS sign FROM old_rows o';
  ELSE
    source := 'SELECT n.*, 1 AS sign FROM new_rows n UNION ALL SELECT o.*, -1 AS sign FROM old_rows o';
  END IF;
  FOREACH statement IN ARRAY ascribe_touchpoint_rollup_sql(source, 'touchpoint_rollup_delta', 'web_session_delta')
  LOOP
    EXECUTE statement;
  END LOOP;
  RETURN NULL;
END $fn$;
--> statement-breakpoint
CREATE TRIGGER touchpoints_rollup_insert AFTER INSERT ON touchpoints
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_touchpoints_rollup();
--> statement-breakpoint
CREATE TRIGGER touchpoints_rollup_update AFTER UPDATE ON touchpoints
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_touchpoints_rollup();
--> statement-breakpoint
CREATE TRIGGER touchpoints_rollup_delete AFTER DELETE ON touchpoints
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_touchpoints_rollup();
--> statement-breakpoint
-- Recomputes the milestones of some contacts of an account from their events (every contact of
-- the account when `contact_ids` is NULL); writes only rows that changed. docs/metrics.md "Funnel"
-- and "Sales" define each column.
CREATE FUNCTION ascribe_refresh_contact_milestones(account uuid, contact_ids uuid[]) RETURNS void
  LANGUAGE plpgsql
  AS $fn$
BEGIN
  -- EXECUTE: planned for this account and these contacts (events_contact_idx).
  EXECUTE format($q$
  WITH touched AS (%s),
  ev AS (
    SELECT e.contact_id, e.id, e.event_type, e.event_datetime, e.counted, e.utm_source, e.utm_campaign,
           e.campaign_name, e.product_key, e.product_name, e.cancelled_at, e.booking_date,
           (e.booking_date + coalesce(e.booking_time, '00:00')::time) AT TIME ZONE a.timezone AS meets_at
    FROM touched t
    JOIN events e ON e.account_id = %L AND e.contact_id = t.contact_id
    JOIN accounts a ON a.id = e.account_id
  ),
  lead AS (
    SELECT DISTINCT ON (contact_id) contact_id, event_datetime AS lead_at, utm_source AS source,
           coalesce(utm_campaign, campaign_name) AS campaign
    FROM ev WHERE event_type = 'lead'
    ORDER BY contact_id, event_datetime, id
  ),
  sale AS (
    SELECT DISTINCT ON (ev.contact_id) ev.contact_id, ev.event_datetime AS sale_at, ev.product_key,
           ev.product_name
    FROM ev JOIN lead l ON l.contact_id = ev.contact_id AND ev.event_datetime >= l.lead_at
    WHERE ev.counted
    ORDER BY ev.contact_id, ev.event_datetime, ev.id
  ),
  agg AS (
    SELECT ev.contact_id,
      min(ev.event_datetime) FILTER (WHERE ev.event_type = 'application' AND ev.event_datetime >= l.lead_at)
        AS application_at,
      min(ev.event_datetime) FILTER (WHERE ev.event_type = 'booking' AND ev.event_datetime >= l.lead_at)
        AS booking_at,
      -- the meetings booked since the lead, in time order (instant and booking day)
      array_agg(ev.meets_at ORDER BY ev.meets_at, ev.id) FILTER (WHERE ev.event_type = 'booking'
        AND ev.cancelled_at IS NULL AND ev.booking_date IS NOT NULL AND ev.event_datetime >= l.lead_at)
        AS meeting_ats,
      array_agg(ev.booking_date ORDER BY ev.meets_at, ev.id) FILTER (WHERE ev.event_type = 'booking'
        AND ev.cancelled_at IS NULL AND ev.booking_date IS NOT NULL AND ev.event_datetime >= l.lead_at)
        AS meeting_days,
      count(*) FILTER (WHERE ev.event_type = 'no_show' AND ev.event_datetime >= l.lead_at) AS no_shows,
      min(ev.event_datetime) FILTER (WHERE ev.counted) AS first_sale_at,
      max(ev.event_datetime) FILTER (WHERE ev.event_type = 'application') AS last_application_at,
      max(ev.event_datetime) FILTER (WHERE ev.event_type = 'booking') AS last_booking_at
    FROM ev LEFT JOIN lead l ON l.contact_id = ev.contact_id
    GROUP BY ev.contact_id
  ),
  cycle AS (
    SELECT a.contact_id, coalesce(
      min(ev.event_datetime) FILTER (WHERE ev.event_type = 'lead' AND ev.event_datetime <= a.first_sale_at),
      min(ev.event_datetime) FILTER (WHERE ev.event_type NOT IN ('sale', 'payment')
        AND ev.event_datetime < a.first_sale_at)) AS cycle_started_at
    FROM agg a JOIN ev ON ev.contact_id = a.contact_id
    WHERE a.first_sale_at IS NOT NULL
    GROUP BY a.contact_id
  ),
  -- the show candidate: the (n+1)-th meeting, n = the no-shows (a show once its day is over)
  computed AS (
    SELECT t.contact_id, l.lead_at, l.source, l.campaign, a.application_at, a.booking_at,
      a.meeting_ats[a.no_shows + 1] AS show_at, a.meeting_days[a.no_shows + 1] AS show_day,
      s.sale_at, s.product_key, s.product_name, a.first_sale_at, c.cycle_started_at,
      a.last_application_at, a.last_booking_at
    FROM touched t
    LEFT JOIN lead l ON l.contact_id = t.contact_id
    LEFT JOIN agg a ON a.contact_id = t.contact_id
    LEFT JOIN sale s ON s.contact_id = t.contact_id
    LEFT JOIN cycle c ON c.contact_id = t.contact_id
  )
  INSERT INTO contact_milestones AS m (account_id, contact_id, first_lead_at, lead_source, lead_campaign,
    application_at, booking_at, show_at, show_day, sale_at, sale_product_key, sale_product_name, stage,
    lead_to_application, application_to_booking, booking_to_show, show_to_sale, first_sale_at,
    cycle_started_at, last_application_at, last_booking_at)
  SELECT %L, r.contact_id, r.lead_at, r.source, r.campaign, r.application_at, r.booking_at, r.show_at,
    r.show_day, r.sale_at, r.product_key, r.product_name,
    CASE WHEN r.lead_at IS NULL THEN NULL WHEN r.sale_at IS NOT NULL THEN 5
         WHEN r.booking_at IS NOT NULL THEN 3 WHEN r.application_at IS NOT NULL THEN 2 ELSE 1 END,
    CASE WHEN r.application_at >= r.lead_at THEN date_part('epoch', r.application_at - r.lead_at) / 86400 END,
    CASE WHEN r.booking_at >= r.application_at
      THEN date_part('epoch', r.booking_at - r.application_at) / 86400 END,
    CASE WHEN r.show_at >= r.booking_at THEN date_part('epoch', r.show_at - r.booking_at) / 86400 END,
    CASE WHEN r.sale_at >= r.show_at THEN date_part('epoch', r.sale_at - r.show_at) / 86400 END,
    r.first_sale_at, r.cycle_started_at, r.last_application_at, r.last_booking_at
  FROM computed r
  -- One global order: two writers never wait on each other in a cycle.
  ORDER BY r.contact_id
  ON CONFLICT (account_id, contact_id) DO UPDATE SET
    first_lead_at = excluded.first_lead_at, lead_source = excluded.lead_source,
    lead_campaign = excluded.lead_campaign, application_at = excluded.application_at,
    booking_at = excluded.booking_at, show_at = excluded.show_at, show_day = excluded.show_day,
    sale_at = excluded.sale_at, sale_product_key = excluded.sale_product_key,
    sale_product_name = excluded.sale_product_name, stage = excluded.stage,
    lead_to_application = excluded.lead_to_application,
    application_to_booking = excluded.application_to_booking,
    booking_to_show = excluded.booking_to_show, show_to_sale = excluded.show_to_sale,
    first_sale_at = excluded.first_sale_at, cycle_started_at = excluded.cycle_started_at,
    last_application_at = excluded.last_application_at, last_booking_at = excluded.last_booking_at
  WHERE (m.first_lead_at, m.lead_source, m.lead_campaign, m.application_at, m.booking_at, m.show_at,
         m.show_day, m.sale_at, m.sale_product_key, m.sale_product_name, m.first_sale_at,
         m.cycle_started_at, m.last_application_at, m.last_booking_at)
    IS DISTINCT FROM (excluded.first_lead_at, excluded.lead_source, excluded.lead_campaign,
         excluded.application_at, excluded.booking_at, excluded.show_at, excluded.show_day,
         excluded.sale_at, excluded.sale_product_key, excluded.sale_product_name, excluded.first_sale_at,
         excluded.cycle_started_at, excluded.last_application_at, excluded.last_booking_at)
  $q$,
  CASE WHEN contact_ids IS NULL
    THEN format('SELECT DISTINCT contact_id FROM events WHERE account_id = %L AND contact_id IS NOT NULL', account)
    ELSE format('SELECT DISTINCT c AS contact_id FROM unnest(%L::uuid[]) AS c WHERE c IS NOT NULL', contact_ids)
  END,
  account, account);
END $fn$;
--> statement-breakpoint
-- Statement-level: one refresh per statement for the contacts whose events it wrote — for an
-- update, only rows where something the milestones read changed (before and after: an event that
-- moved to another contact changes both).
CREATE FUNCTION ascribe_events_milestones() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
DECLARE
  touched record;
BEGIN
  IF TG_OP = 'INSERT' THEN
    FOR touched IN
      SELECT account_id, array_agg(DISTINCT contact_id) AS contacts FROM new_rows
      WHERE contact_id IS NOT NULL GROUP BY account_id
    LOOP
      PERFORM ascribe_refresh_contact_milestones(touched.account_id, touched.contacts);
    END LOOP;
  ELSIF TG_OP = 'DELETE' THEN
    FOR touched IN
      SELECT account_id, array_agg(DISTINCT contact_id) AS contacts FROM old_rows
      WHERE contact_id IS NOT NULL GROUP BY account_id
    LOOP
      PERFORM ascribe_refresh_contact_milestones(touched.account_id, touched.contacts);
    END LOOP;
  ELSE
    FOR touched IN
      SELECT moved.account_id, array_agg(DISTINCT moved.contact_id) AS contacts
      FROM new_rows n
      JOIN old_rows o ON o.account_id = n.account_id AND o.id = n.id
      CROSS JOIN LATERAL (VALUES (n.account_id, n.contact_id), (o.account_id, o.contact_id))
        AS moved(account_id, contact_id)
      WHERE (n.contact_id, n.event_type, n.event_datetime, n.counted, n.utm_source, n.utm_campaign,
             n.campaign_name, n.product_key, n.product_name, n.cancelled_at, n.booking_date, n.booking_time)
        IS DISTINCT FROM (o.contact_id, o.event_type, o.event_datetime, o.counted, o.utm_source,
             o.utm_campaign, o.campaign_name, o.product_key, o.product_name, o.cancelled_at, o.booking_date,
             o.booking_time)
        AND moved.contact_id IS NOT NULL
      GROUP BY moved.account_id
    LOOP
      PERFORM ascribe_refresh_contact_milestones(touched.account_id, touched.contacts);
    END LOOP;
  END IF;
  RETURN NULL;
END $fn$;
--> statement-breakpoint
CREATE TRIGGER events_milestones_insert AFTER INSERT ON events
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_events_milestones();
--> statement-breakpoint
CREATE TRIGGER events_milestones_update AFTER UPDATE ON events
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_events_milestones();
--> statement-breakpoint
CREATE TRIGGER events_milestones_delete AFTER DELETE ON events
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_events_milestones();
--> statement-breakpoint
-- Covering indexes for the per-contact counts that stay on events (docs/metrics.md "Sales"): a
-- rep's contacts met (past meetings by booking day) and closed (counted sales), read index-only.
CREATE INDEX events_meetings_cover_idx ON events (account_id, booking_date)
  INCLUDE (contact_id, assigned_user_name) WHERE event_type = 'booking' AND cancelled_at IS NULL;
--> statement-breakpoint
CREATE INDEX events_counted_cover_idx ON events (account_id, event_datetime)
  INCLUDE (contact_id, assigned_user_name) WHERE counted;
--> statement-breakpoint
-- The funnel's cohort, read index-only: contacts by first lead, with what the funnel counts.
CREATE INDEX contact_milestones_cohort_idx ON contact_milestones (account_id, first_lead_at)
  INCLUDE (lead_source, lead_campaign, sale_product_key, sale_product_name, stage, show_day,
    lead_to_application, application_to_booking, booking_to_show, show_to_sale);
--> statement-breakpoint
DROP FUNCTION ascribe_fold_report_rollup(uuid);
--> statement-breakpoint
-- Folds an account's pending deltas — events, touchpoints, web sessions — into the rollups, one
-- statement each, before a report reads them (0006), oldest first and a bounded number per call;
-- answers whether any are left. Rows a fold brings to zero stay: a later
-- delta may revive them, and reads ignore them. Folding web sessions also counts, per day, the
-- sessions present and those with an ad id or click id into the `total` rows (web_sessions,
-- web_sessions_with_id): a session is counted once per day it is seen on, as analytics tools split
-- sessions at midnight.
-- `chunk`: at most this many rows of each log per call, so that no call outlasts a statement
-- timeout (100,000: about a second here); the caller calls again while it answers true.
CREATE FUNCTION ascribe_fold_report_rollup(account uuid, chunk integer DEFAULT 100000) RETURNS boolean
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
    DELETE FROM report_rollup_delta
    WHERE account_id = %1$L
      AND id IN (SELECT id FROM report_rollup_delta WHERE account_id = %1$L ORDER BY id LIMIT %2$s)
    RETURNING *
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
  $q$, account, chunk);
  EXECUTE format($q$
  WITH moved AS (
    DELETE FROM touchpoint_rollup_delta
    WHERE account_id = %1$L
      AND id IN (SELECT id FROM touchpoint_rollup_delta WHERE account_id = %1$L ORDER BY id LIMIT %2$s)
    RETURNING *
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
  $q$, account, chunk);
  EXECUTE format($q$
  WITH moved AS (
    DELETE FROM web_session_delta
    WHERE account_id = %1$L
      AND id IN (SELECT id FROM web_session_delta WHERE account_id = %1$L ORDER BY id LIMIT %2$s)
    RETURNING *
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
  $q$, account, chunk);
  RETURN EXISTS (SELECT 1 FROM report_rollup_delta WHERE account_id = account)
    OR EXISTS (SELECT 1 FROM touchpoint_rollup_delta WHERE account_id = account)
    OR EXISTS (SELECT 1 FROM web_session_delta WHERE account_id = account);
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
-- Backfill: every account's rollups and contact milestones, with the forced tenant policies lifted
-- for these statements inside the migration's transaction (0006).
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
