-- Collect throughput (issue 20, item 3). Measured per batch of 50 beacons (auto_explain, nested
-- statements): most of PostgreSQL's time was statement triggers doing nothing useful.
--
-- 1. The ad of record's refresh (0028) ran its UPDATE of events even when the touched contacts have
--    no event at or after the touch (every beacon batch of contacts without sales): the UPDATE
--    changes no row, but the four statement triggers of events (activity, milestones, rollup,
--    customer totals) still fire on empty transition tables and plan their statements, about 60 %
--    of the touchpoint insert's trigger time. The UPDATE now runs only when an event qualifies; with
--    none it would have changed nothing, so what is stored is the same.
CREATE OR REPLACE FUNCTION ascribe_refresh_ad_of_record_since(account uuid, contact_ids uuid[], since timestamptz[])
  RETURNS void
  LANGUAGE plpgsql
  AS $fn$
BEGIN
  -- One index range of events_contact_idx per contact, a plan cached by PL/pgSQL.
  IF NOT EXISTS (
    SELECT FROM unnest(contact_ids, since) AS s(contact_id, since)
    JOIN events x ON x.account_id = account AND x.contact_id = s.contact_id AND x.event_datetime >= s.since
  ) THEN
    RETURN;
  END IF;
  EXECUTE format($q$
  UPDATE events e
  SET record_platform = r.platform, record_ad_id = r.ad_id, first_touch_ad = c.first_touch_ad,
      assist_ads = c.assist_ads
  FROM (
    SELECT x.account_id, x.id, x.contact_id, x.event_type, x.event_datetime, x.resolved_platform,
           x.resolved_ad_id,
           CASE WHEN x.resolved_ad_id IS NOT NULL THEN x.resolved_platform ELSE l.platform END AS platform,
           coalesce(x.resolved_ad_id, l.ad_id) AS ad_id
    FROM unnest(%2$L::uuid[], %3$L::timestamptz[]) AS s(contact_id, since)
    JOIN events x ON x.account_id = %1$L AND x.contact_id = s.contact_id AND x.event_datetime >= s.since
    LEFT JOIN LATERAL ascribe_last_ad_touch(x.account_id, x.contact_id, x.event_datetime) l
      ON x.resolved_ad_id IS NULL
    WHERE x.resolved_ad_id IS NULL OR x.event_type IN ('sale', 'payment')
  ) r
  CROSS JOIN LATERAL ascribe_sale_touch_credit(r.account_id, r.contact_id, r.id, r.event_type,
    r.event_datetime, r.resolved_platform, r.resolved_ad_id, r.platform || '/' || r.ad_id) c
  WHERE e.account_id = r.account_id AND e.id = r.id
    AND (e.record_platform, e.record_ad_id, e.first_touch_ad, e.assist_ads)
        IS DISTINCT FROM (r.platform, r.ad_id, c.first_touch_ad, c.assist_ads)
  $q$, account, contact_ids, since);
END $fn$;
--> statement-breakpoint
-- 2. The touchpoints' rollup (0008) reads none of contact_id, and a visitor's adoption by a contact
--    (collect) changes only contact_id: its two rollup statements, planned at every call (EXECUTE),
--    summed +1 and −1 to nothing. An UPDATE that changes none of the columns the rollup reads now
--    returns before them. (`AFTER UPDATE OF columns` would say it in the trigger, but PostgreSQL
--    refuses transition tables on a trigger with a column list.)
CREATE OR REPLACE FUNCTION ascribe_touchpoints_rollup() RETURNS trigger
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
    -- Every column ascribe_touchpoint_rollup_sql reads (a row whose key moved counts as changed).
    IF NOT EXISTS (
      SELECT FROM new_rows n LEFT JOIN old_rows o ON o.account_id = n.account_id AND o.id = n.id
      WHERE o.id IS NULL
         OR (n.occurred_at, n.kind, n.resolved_platform, n.resolved_ad_id, n.utm, n.channel, n.session_id,
             n.ad_ids, n.click_ids)
            IS DISTINCT FROM (o.occurred_at, o.kind, o.resolved_platform, o.resolved_ad_id, o.utm, o.channel,
                              o.session_id, o.ad_ids, o.click_ids)
    ) THEN
      RETURN NULL;
    END IF;
    source := 'SELECT n.*, 1 AS sign FROM new_rows n UNION ALL SELECT o.*, -1 AS sign FROM old_rows o';
  END IF;
  FOREACH statement IN ARRAY ascribe_touchpoint_rollup_sql(source, 'touchpoint_rollup_delta', 'web_session_delta')
  LOOP
    EXECUTE statement;
  END LOOP;
  RETURN NULL;
END $fn$;
