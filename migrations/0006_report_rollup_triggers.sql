-- The new tables (report_rollup_daily, report_rollup_delta) get forced RLS and the tenant policy.
SELECT ascribe_enforce_tenancy();
--> statement-breakpoint
-- The ad of record's fallback (docs/attribution.md): a contact's last ad touch (a touchpoint whose
-- ad resolved; an email, bio-link or organic touch never has one) at or before `at`, within 365
-- days; ties at one instant go to the larger touchpoint id. Inlined by the planner; served by
-- touchpoints_ad_touch_idx.
CREATE FUNCTION ascribe_last_ad_touch(account uuid, contact uuid, at timestamptz)
  RETURNS TABLE (platform text, ad_id text)
  LANGUAGE sql STABLE
  AS $fn$
  SELECT tp.resolved_platform, tp.resolved_ad_id
  FROM touchpoints tp
  WHERE tp.account_id = account AND tp.contact_id = contact AND tp.resolved_ad_id IS NOT NULL
    AND tp.occurred_at <= at AND tp.occurred_at >= at - interval '365 days'
  ORDER BY tp.occurred_at DESC, tp.id DESC
  LIMIT 1
$fn$;
--> statement-breakpoint
-- First-touch and assisted credit of a sale or payment (docs/attribution.md): its touches are the
-- contact's ad touches in the 365 days up to it (not its own conversion touchpoint) and its own
-- resolved ad; the first is the earliest (a touchpoint before the event's own ad at one instant,
-- then the smaller id); the assists are the other distinct ads, neither first nor `record_key` (the
-- ad of record, which takes last-touch credit). Ads as `platform/ad_id`. NULLs for other events.
-- (Parameter names differ from every touchpoints column: in SQL functions a column wins.)
CREATE FUNCTION ascribe_sale_touch_credit(account uuid, contact uuid, sale_id text, sale_type text,
    sale_at timestamptz, own_platform text, own_ad text, record_key text)
  RETURNS TABLE (first_touch_ad text, assist_ads text[])
  LANGUAGE sql STABLE
  AS $fn$
  WITH touches AS (
    SELECT tp.resolved_platform || '/' || tp.resolved_ad_id AS ad, tp.occurred_at, 0 AS own,
           tp.id::text AS tid
    FROM touchpoints tp
    WHERE sale_type IN ('sale', 'payment')
      AND tp.account_id = account AND tp.contact_id = contact AND tp.resolved_ad_id IS NOT NULL
      AND tp.occurred_at <= sale_at AND tp.occurred_at >= sale_at - interval '365 days'
      AND NOT (tp.kind = 'conversion' AND tp.event_id IS NOT DISTINCT FROM sale_id)
    UNION ALL
    SELECT own_platform || '/' || own_ad, sale_at, 1, ''
    WHERE sale_type IN ('sale', 'payment') AND own_ad IS NOT NULL
  ),
  first AS (SELECT ad FROM touches ORDER BY occurred_at, own, tid LIMIT 1)
  SELECT (SELECT ad FROM first),
    CASE WHEN sale_type IN ('sale', 'payment') THEN coalesce(
      (SELECT array_agg(DISTINCT t.ad ORDER BY t.ad) FROM touches t
       WHERE t.ad IS DISTINCT FROM (SELECT ad FROM first) AND t.ad IS DISTINCT FROM record_key),
      '{}') END
$fn$;
--> statement-breakpoint
-- An event's ad of record as it is written: its resolved ad, else the contact's last ad touch; and,
-- for a sale or payment, its first-touch and assisting ads.
CREATE FUNCTION ascribe_events_ad_of_record() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
BEGIN
  IF TG_OP = 'UPDATE'
     AND NEW.resolved_platform IS NOT DISTINCT FROM OLD.resolved_platform
     AND NEW.resolved_ad_id IS NOT DISTINCT FROM OLD.resolved_ad_id
     AND NEW.contact_id IS NOT DISTINCT FROM OLD.contact_id
     AND NEW.event_datetime = OLD.event_datetime THEN
    -- Nothing it depends on changed; the statement may be the touchpoints trigger setting it.
    RETURN NEW;
  END IF;
  IF NEW.resolved_ad_id IS NOT NULL THEN
    NEW.record_platform := NEW.resolved_platform;
    NEW.record_ad_id := NEW.resolved_ad_id;
  ELSE
    NEW.record_platform := NULL;
    NEW.record_ad_id := NULL;
    IF NEW.contact_id IS NOT NULL THEN
      SELECT l.platform, l.ad_id INTO NEW.record_platform, NEW.record_ad_id
      FROM ascribe_last_ad_touch(NEW.account_id, NEW.contact_id, NEW.event_datetime) l;
    END IF;
  END IF;
  SELECT c.first_touch_ad, c.assist_ads INTO NEW.first_touch_ad, NEW.assist_ads
  FROM ascribe_sale_touch_credit(NEW.account_id, NEW.contact_id, NEW.id, NEW.event_type,
    NEW.event_datetime, NEW.resolved_platform, NEW.resolved_ad_id,
    NEW.record_platform || '/' || NEW.record_ad_id) c;
  RETURN NEW;
END $fn$;
--> statement-breakpoint
CREATE TRIGGER events_ad_of_record BEFORE INSERT OR UPDATE ON events
  FOR EACH ROW EXECUTE FUNCTION ascribe_events_ad_of_record();
--> statement-breakpoint
-- Recomputes what depends on a contact's touches — the ad of record of events without a resolved
-- ad, the first-touch and assisting ads of sales and payments — for some contacts (all of the
-- account's when `contact_ids` is NULL); writes only what changed.
CREATE FUNCTION ascribe_refresh_ad_of_record(account uuid, contact_ids uuid[]) RETURNS void
  LANGUAGE plpgsql
  AS $fn$
BEGIN
  -- EXECUTE: planned for this account and these contacts (a plan made for any parameters would
  -- scan all of the account's events).
  EXECUTE format($q$
  UPDATE events e
  SET record_platform = r.platform, record_ad_id = r.ad_id, first_touch_ad = c.first_touch_ad,
      assist_ads = c.assist_ads
  FROM (
    SELECT x.account_id, x.id, x.contact_id, x.event_type, x.event_datetime, x.resolved_platform,
           x.resolved_ad_id,
           CASE WHEN x.resolved_ad_id IS NOT NULL THEN x.resolved_platform ELSE l.platform END AS platform,
           coalesce(x.resolved_ad_id, l.ad_id) AS ad_id
    FROM events x
    LEFT JOIN LATERAL ascribe_last_ad_touch(x.account_id, x.contact_id, x.event_datetime) l
      ON x.resolved_ad_id IS NULL
    WHERE x.account_id = %L AND x.contact_id IS NOT NULL
      AND (x.resolved_ad_id IS NULL OR x.event_type IN ('sale', 'payment'))
      %s
  ) r
  CROSS JOIN LATERAL ascribe_sale_touch_credit(r.account_id, r.contact_id, r.id, r.event_type,
    r.event_datetime, r.resolved_platform, r.resolved_ad_id, r.platform || '/' || r.ad_id) c
  WHERE e.account_id = r.account_id AND e.id = r.id
    AND (e.record_platform, e.record_ad_id, e.first_touch_ad, e.assist_ads)
        IS DISTINCT FROM (r.platform, r.ad_id, c.first_touch_ad, c.assist_ads)
  $q$, account, CASE WHEN contact_ids IS NULL THEN '' ELSE format('AND x.contact_id = ANY (%L::uuid[])', contact_ids) END);
END $fn$;
--> statement-breakpoint
-- A touchpoint that gains, loses or moves an ad touch (a beacon, an imported visit, a visitor who
-- becomes a contact, an ad re-resolution) changes the ad of record of its contact's later events.
-- Statement-level: one refresh per statement for the contacts it touched.
CREATE FUNCTION ascribe_touchpoints_ad_of_record() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
DECLARE
  touched record;
BEGIN
  IF TG_OP = 'INSERT' THEN
    FOR touched IN
      SELECT account_id, array_agg(DISTINCT contact_id) AS contacts FROM new_rows
      WHERE contact_id IS NOT NULL AND resolved_ad_id IS NOT NULL GROUP BY account_id
    LOOP
      PERFORM ascribe_refresh_ad_of_record(touched.account_id, touched.contacts);
    END LOOP;
  ELSIF TG_OP = 'DELETE' THEN
    FOR touched IN
      SELECT account_id, array_agg(DISTINCT contact_id) AS contacts FROM old_rows
      WHERE contact_id IS NOT NULL AND resolved_ad_id IS NOT NULL GROUP BY account_id
    LOOP
      PERFORM ascribe_refresh_ad_of_record(touched.account_id, touched.contacts);
    END LOOP;
  ELSE
    -- Before and after: a touch that moved to another contact changes both contacts' events.
    FOR touched IN
      SELECT moved.account_id, array_agg(DISTINCT moved.contact_id) AS contacts
      FROM new_rows n
      JOIN old_rows o ON o.account_id = n.account_id AND o.id = n.id
      CROSS JOIN LATERAL (VALUES (n.account_id, n.contact_id), (o.account_id, o.contact_id))
        AS moved(account_id, contact_id)
      WHERE (n.contact_id, n.resolved_platform, n.resolved_ad_id, n.occurred_at)
            IS DISTINCT FROM (o.contact_id, o.resolved_platform, o.resolved_ad_id, o.occurred_at)
        AND (n.resolved_ad_id IS NOT NULL OR o.resolved_ad_id IS NOT NULL)
        AND moved.contact_id IS NOT NULL
      GROUP BY moved.account_id
    LOOP
      PERFORM ascribe_refresh_ad_of_record(touched.account_id, touched.contacts);
    END LOOP;
  END IF;
  RETURN NULL;
END $fn$;
--> statement-breakpoint
CREATE TRIGGER touchpoints_ad_of_record_insert AFTER INSERT ON touchpoints
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_touchpoints_ad_of_record();
--> statement-breakpoint
CREATE TRIGGER touchpoints_ad_of_record_update AFTER UPDATE ON touchpoints
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_touchpoints_ad_of_record();
--> statement-breakpoint
CREATE TRIGGER touchpoints_ad_of_record_delete AFTER DELETE ON touchpoints
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_touchpoints_ad_of_record();
--> statement-breakpoint
-- The rollup's one statement: aggregate a set of event rows
-- (`source` yields events' columns plus `sign`, +1 for a row that appears, -1 for one that goes)
-- under every dimension and append the sums to `target`. Shared by the triggers (transition tables
-- into the delta log) and the rebuild (an account's events into the rollup).
CREATE FUNCTION ascribe_report_rollup_sql(source text, target text) RETURNS text
  LANGUAGE sql IMMUTABLE
  AS $fn$ SELECT format($q$
    WITH delta AS (%s),
    placed AS (
      SELECT d.account_id, d.sign, d.event_type, d.counted, d.group_revenue, d.group_refunds,
             d.group_disputes, d.cancelled_at IS NOT NULL AS cancelled, false AS is_meeting,
             (d.event_datetime AT TIME ZONE a.timezone)::date AS day,
             d.record_platform, d.record_ad_id, d.utm_source, d.utm_campaign, d.campaign_name,
             d.product_name, d.product_key, d.assigned_user_name, d.first_touch_ad, d.assist_ads
      FROM delta d JOIN accounts a ON a.id = d.account_id
      UNION ALL
      SELECT d.account_id, d.sign, d.event_type, NULL, NULL, NULL, NULL, false, true, d.booking_date,
             d.record_platform, d.record_ad_id, d.utm_source, d.utm_campaign, d.campaign_name,
             d.product_name, d.product_key, d.assigned_user_name, NULL, NULL
      FROM delta d
      WHERE d.event_type = 'booking' AND d.booking_date IS NOT NULL AND d.cancelled_at IS NULL
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
        ('ad_ft', p.first_touch_ad)
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
        coalesce(sum(sign) FILTER (WHERE is_meeting), 0) AS meetings
      FROM keyed
      GROUP BY account_id, dim, day, key
    )
    INSERT INTO %I (account_id, dim, day, key, leads, applications, bookings, no_shows, cancels,
      cancelled_bookings, sales_lost, sales, revenue, refunds, disputes, meetings)
    SELECT * FROM summed
    -- An update that changed nothing the rollup counts nets to zero: nothing to write.
    WHERE (leads, applications, bookings, no_shows, cancels, cancelled_bookings, sales_lost, sales,
           revenue, refunds, disputes, meetings) IS DISTINCT FROM (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
  $q$, source, target) $fn$;
--> statement-breakpoint
-- The delta log is written and emptied all day: vacuum it after a few thousand dead rows, not after
-- a fifth of the table, so that folding does not walk dead index entries.
ALTER TABLE report_rollup_delta SET (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000,
  autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 5000);
--> statement-breakpoint
-- Statement-level: one aggregate per INSERT/UPDATE/DELETE statement, however many rows it wrote,
-- so set-based ingestion pays once per batch. It only appends to the delta log: writers never wait
-- for each other on the rollup's rows. The transition tables are only visible here, in the
-- trigger's own function, hence EXECUTE of the shared text.
CREATE FUNCTION ascribe_events_rollup() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
BEGIN
  IF TG_OP = 'INSERT' THEN
    EXECUTE ascribe_report_rollup_sql('SELECT n.*, 1 AS sign FROM new_rows n', 'report_rollup_delta');
  ELSIF TG_OP = 'DELETE' THEN
    EXECUTE ascribe_report_rollup_sql('SELECT o.*, -1 AS sign FROM old_rows o', 'report_rollup_delta');
  ELSE
    EXECUTE ascribe_report_rollup_sql(
      'SELECT n.*, 1 AS sign FROM new_rows n UNION ALL SELECT o.*, -1 AS sign FROM old_rows o',
      'report_rollup_delta');
  END IF;
  RETURN NULL;
END $fn$;
--> statement-breakpoint
CREATE TRIGGER events_rollup_insert AFTER INSERT ON events
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_events_rollup();
--> statement-breakpoint
CREATE TRIGGER events_rollup_update AFTER UPDATE ON events
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_events_rollup();
--> statement-breakpoint
CREATE TRIGGER events_rollup_delete AFTER DELETE ON events
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_events_rollup();
--> statement-breakpoint
-- Folds an account's pending deltas into its rollup, in one statement. Reports call it before they
-- read. Two folds at once: the second waits on the rows the first deletes, then finds them gone.
CREATE FUNCTION ascribe_fold_report_rollup(account uuid) RETURNS void
  LANGUAGE plpgsql
  AS $fn$
BEGIN
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
      sum(refunds) AS refunds, sum(disputes) AS disputes, sum(meetings) AS meetings
    FROM moved
    GROUP BY account_id, dim, day, key
  )
  INSERT INTO report_rollup_daily AS r (account_id, dim, day, key, leads, applications, bookings,
    no_shows, cancels, cancelled_bookings, sales_lost, sales, revenue, refunds, disputes, meetings)
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
    meetings = r.meetings + excluded.meetings
  $q$, account);
END $fn$;
--> statement-breakpoint
-- Recomputes one account's rollup from its events (repair, or after a timezone change).
CREATE FUNCTION ascribe_rebuild_report_rollup(account uuid) RETURNS void
  LANGUAGE plpgsql
  AS $fn$
BEGIN
  DELETE FROM report_rollup_delta WHERE account_id = account;
  DELETE FROM report_rollup_daily WHERE account_id = account;
  EXECUTE ascribe_report_rollup_sql(
    format('SELECT e.*, 1 AS sign FROM events e WHERE e.account_id = %L', account),
    'report_rollup_daily');
END $fn$;
--> statement-breakpoint
-- Backfill the events stored before this migration. The owner is subject to the forced tenant
-- policies; lifting them for these statements, inside the migration's transaction, lets it see
-- every account.
ALTER TABLE accounts NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE events NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE report_rollup_daily NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE report_rollup_delta NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE touchpoints NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
UPDATE events SET record_platform = resolved_platform, record_ad_id = resolved_ad_id
WHERE resolved_ad_id IS NOT NULL;
--> statement-breakpoint
SELECT ascribe_refresh_ad_of_record(id, NULL) FROM accounts;
--> statement-breakpoint
SELECT ascribe_rebuild_report_rollup(id) FROM accounts;
--> statement-breakpoint
ALTER TABLE touchpoints FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE accounts FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE events FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE report_rollup_daily FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE report_rollup_delta FORCE ROW LEVEL SECURITY;
