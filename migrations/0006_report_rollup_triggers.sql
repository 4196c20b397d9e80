SELECT ascribe_enforce_tenancy();
--> statement-breakpoint
-- report_rollup_delta and report_rollup_daily get forced RLS and the tenant policy, like every
-- table with account_id (above). The rollup's one statement: aggregate a set of event rows
-- (`source` yields events' columns plus `sign`, +1 for a row that appears, -1 for one that goes)
-- under every dimension and append the sums to `target`. Shared by the triggers (transition tables
-- into the delta log) and the rebuild (an account's events into the rollup).
CREATE FUNCTION ascribe_report_rollup_sql(source text, target text) RETURNS text
  LANGUAGE sql IMMUTABLE
  AS $fn$ SELECT format($q$
    WITH delta AS (%s),
    placed AS (
      SELECT d.account_id, d.sign, d.event_type, d.counted, d.group_revenue, d.group_refunds,
             d.group_disputes, false AS is_meeting,
             (d.event_datetime AT TIME ZONE a.timezone)::date AS day,
             d.resolved_platform, d.resolved_ad_id, d.utm_source, d.utm_campaign, d.campaign_name,
             d.product_name, d.product_key, d.assigned_user_name
      FROM delta d JOIN accounts a ON a.id = d.account_id
      UNION ALL
      SELECT d.account_id, d.sign, d.event_type, NULL, NULL, NULL, NULL, true, d.booking_date,
             d.resolved_platform, d.resolved_ad_id, d.utm_source, d.utm_campaign, d.campaign_name,
             d.product_name, d.product_key, d.assigned_user_name
      FROM delta d
      WHERE d.event_type = 'booking' AND d.booking_date IS NOT NULL AND d.cancelled_at IS NULL
    ),
    keyed AS (
      SELECT p.*, k.dim, k.key
      FROM placed p
      CROSS JOIN LATERAL (VALUES
        ('total', ''),
        ('ad', CASE WHEN p.resolved_ad_id IS NULL THEN '' ELSE p.resolved_platform || '/' || p.resolved_ad_id END),
        ('source', coalesce(nullif(btrim(p.utm_source), ''), '')),
        ('campaign', CASE WHEN p.resolved_ad_id IS NULL
          THEN coalesce(nullif(btrim(p.campaign_name), ''), nullif(btrim(p.utm_campaign), ''), '') END),
        ('product', coalesce(nullif(btrim(p.product_name), ''), nullif(btrim(p.product_key), ''), '')),
        ('rep', coalesce(nullif(btrim(p.assigned_user_name), ''), ''))
      ) AS k(dim, key)
      WHERE k.key IS NOT NULL
    ),
    summed AS (
      SELECT account_id, dim, day, key,
        coalesce(sum(sign) FILTER (WHERE NOT is_meeting AND event_type = 'lead'), 0) AS leads,
        coalesce(sum(sign) FILTER (WHERE NOT is_meeting AND event_type = 'application'), 0) AS applications,
        coalesce(sum(sign) FILTER (WHERE NOT is_meeting AND event_type = 'booking'), 0) AS bookings,
        coalesce(sum(sign) FILTER (WHERE NOT is_meeting AND event_type = 'no_show'), 0) AS no_shows,
        coalesce(sum(sign) FILTER (WHERE NOT is_meeting AND event_type = 'cancel'), 0) AS cancels,
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
      sales_lost, sales, revenue, refunds, disputes, meetings)
    SELECT * FROM summed
    -- An update that changed nothing the rollup counts nets to zero: nothing to write.
    WHERE (leads, applications, bookings, no_shows, cancels, sales_lost, sales, revenue, refunds,
           disputes, meetings) IS DISTINCT FROM (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
  $q$, source, target) $fn$;
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
  LANGUAGE sql
  AS $fn$
  WITH moved AS (
    DELETE FROM report_rollup_delta WHERE account_id = account RETURNING *
  ),
  summed AS (
    SELECT account_id, dim, day, key, sum(leads) AS leads, sum(applications) AS applications,
      sum(bookings) AS bookings, sum(no_shows) AS no_shows, sum(cancels) AS cancels,
      sum(sales_lost) AS sales_lost, sum(sales) AS sales, sum(revenue) AS revenue,
      sum(refunds) AS refunds, sum(disputes) AS disputes, sum(meetings) AS meetings
    FROM moved
    GROUP BY account_id, dim, day, key
  )
  INSERT INTO report_rollup_daily AS r (account_id, dim, day, key, leads, applications, bookings,
    no_shows, cancels, sales_lost, sales, revenue, refunds, disputes, meetings)
  SELECT * FROM summed
  -- One global order: two folds never wait on each other in a cycle.
  ORDER BY account_id, dim, day, key
  ON CONFLICT (account_id, dim, day, key) DO UPDATE SET
    leads = r.leads + excluded.leads,
    applications = r.applications + excluded.applications,
    bookings = r.bookings + excluded.bookings,
    no_shows = r.no_shows + excluded.no_shows,
    cancels = r.cancels + excluded.cancels,
    sales_lost = r.sales_lost + excluded.sales_lost,
    sales = r.sales + excluded.sales,
    revenue = r.revenue + excluded.revenue,
    refunds = r.refunds + excluded.refunds,
    disputes = r.disputes + excluded.disputes,
    meetings = r.meetings + excluded.meetings
$fn$;
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
SELECT ascribe_rebuild_report_rollup(id) FROM accounts;
--> statement-breakpoint
ALTER TABLE accounts FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE events FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE report_rollup_daily FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE report_rollup_delta FORCE ROW LEVEL SECURITY;
