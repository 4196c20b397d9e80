-- The fold (0008) takes each log's oldest rows as an id range (`id <= the chunk's last id`), one
-- index range scan, where it took them as `id IN (the chunk's ids)`: with statistics that do not yet
-- know an account (a new account loading its history after the last ANALYZE, or an embedded
-- database's pass), the planner estimated one row on both sides and joined the chunk to the log in
-- a nested loop, chunk × log rows (6.8 s for 2,852 session deltas). The same rows go: the subquery
-- and the DELETE share the statement's snapshot.
-- Folds an account's pending deltas — events, touchpoints, web sessions — into the rollups, one
-- statement each, before a report reads them (0006), oldest first and a bounded number per call;
-- answers whether any are left. Rows a fold brings to zero stay: a later
-- delta may revive them, and reads ignore them. Folding web sessions also counts, per day, the
-- sessions present and those with an ad id or click id into the `total` rows (web_sessions,
-- web_sessions_with_id): a session is counted once per day it is seen on, as analytics tools split
-- sessions at midnight.
-- `chunk`: at most this many rows of each log per call, so that no call outlasts a statement
-- timeout (100,000: about a second here); the caller calls again while it answers true.
CREATE OR REPLACE FUNCTION ascribe_fold_report_rollup(account uuid, chunk integer DEFAULT 100000) RETURNS boolean
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
      AND id <= (SELECT max(id) FROM (SELECT id FROM report_rollup_delta WHERE account_id = %1$L ORDER BY id LIMIT %2$s) oldest)
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
      AND id <= (SELECT max(id) FROM (SELECT id FROM touchpoint_rollup_delta WHERE account_id = %1$L ORDER BY id LIMIT %2$s) oldest)
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
      AND id <= (SELECT max(id) FROM (SELECT id FROM web_session_delta WHERE account_id = %1$L ORDER BY id LIMIT %2$s) oldest)
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
