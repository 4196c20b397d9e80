-- Per-batch maintenance, continued (issue 20, "set-based imports"; 0028).
--
-- An event's ad of record as it is written (0006), with the first-touch and assisting ads looked up
-- for sales and payments only: for any other event they are NULL (what ascribe_sale_touch_credit
-- answers for them), and the lookup was a query per row of every batch.
CREATE OR REPLACE FUNCTION ascribe_events_ad_of_record() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
BEGIN
  IF TG_OP = 'UPDATE'
     AND NEW.resolved_platform IS NOT DISTINCT FROM OLD.resolved_platform
     AND NEW.resolved_ad_id IS NOT DISTINCT FROM OLD.resolved_ad_id
     AND NEW.contact_id IS NOT DISTINCT FROM OLD.contact_id
     AND NEW.event_datetime = OLD.event_datetime
     AND NEW.event_type = OLD.event_type THEN
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
  IF NEW.event_type IN ('sale', 'payment') THEN
    SELECT c.first_touch_ad, c.assist_ads INTO NEW.first_touch_ad, NEW.assist_ads
    FROM ascribe_sale_touch_credit(NEW.account_id, NEW.contact_id, NEW.id, NEW.event_type,
      NEW.event_datetime, NEW.resolved_platform, NEW.resolved_ad_id,
      NEW.record_platform || '/' || NEW.record_ad_id) c;
  ELSE
    NEW.first_touch_ad := NULL;
    NEW.assist_ads := NULL;
  END IF;
  RETURN NEW;
END $fn$;
--> statement-breakpoint
-- The milestones' refresh (0008) reads the events of the contacts it is given by each one's own
-- index range instead of hashing all of the account's events against them.
CREATE OR REPLACE FUNCTION ascribe_refresh_contact_milestones(account uuid, contact_ids uuid[]) RETURNS void
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
    %s
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
  -- Some contacts: each one's events by its own range of events_contact_idx (OFFSET 0 keeps the
  -- subquery apart, so the planner cannot turn it into a scan of all of the account's events
  -- hashed against the batch: a cost that grew with the account, not with the batch). All of
  -- them (a rebuild): one pass over the account's events.
  CASE WHEN contact_ids IS NULL
    THEN format('JOIN events e ON e.account_id = %L AND e.contact_id = t.contact_id', account)
    ELSE format('CROSS JOIN LATERAL (SELECT * FROM events x WHERE x.account_id = %L AND x.contact_id = t.contact_id OFFSET 0) e', account)
  END,
  account);
END $fn$;