-- The new tables (touchpoint_rollup_daily/delta, web_session_daily/delta) get forced RLS and the
-- tenant policy.
SELECT ascribe_enforce_tenancy();
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
