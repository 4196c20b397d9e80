-- Per-statement maintenance planned once per connection, not at every statement (issue 20).
-- With pg_stat_statements on the webhooks bench (one CRM event per request), the events insert
-- took 16.8 ms per statement on PostgreSQL, and its triggers' dynamic statements were planned
-- again at every call: the rollup's 2.3 ms (2.0 ms for an update's), the milestones' 2.2 ms, the
-- customer totals' 1.3 ms. EXECUTE always parses and plans; a statement written in the PL/pgSQL
-- body is prepared once per connection and, after five runs, kept as a generic plan when that
-- costs no more than the custom ones (0038 did the same for touchpoints' triggers).
--
-- 1. The events rollup trigger (0006), its three statements written into its body from the shared
--    ascribe_report_rollup_sql (0008), which stays the one text of the rollup (the rebuild runs it
--    too). A migration that changes that text must write this function again the same way.
DO $do$
BEGIN
  EXECUTE format($create$
CREATE OR REPLACE FUNCTION ascribe_events_rollup() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
BEGIN
  IF TG_OP = 'INSERT' THEN
    %s;
  ELSIF TG_OP = 'DELETE' THEN
    %s;
  ELSE
    %s;
  END IF;
  RETURN NULL;
END $fn$ $create$,
    ascribe_report_rollup_sql('SELECT n.*, 1 AS sign FROM new_rows n', 'report_rollup_delta'),
    ascribe_report_rollup_sql('SELECT o.*, -1 AS sign FROM old_rows o', 'report_rollup_delta'),
    ascribe_report_rollup_sql(
      'SELECT n.*, 1 AS sign FROM new_rows n UNION ALL SELECT o.*, -1 AS sign FROM old_rows o',
      'report_rollup_delta'));
END $do$;
--> statement-breakpoint
-- 2. Customer totals (0042's function): the same three statements, written in the body.
CREATE OR REPLACE FUNCTION ascribe_refresh_customer_totals(account uuid, contact_ids uuid[])
  RETURNS void
  LANGUAGE plpgsql
  AS $fn$
BEGIN
  PERFORM 1 FROM customers cu
  WHERE cu.account_id = account AND cu.contact_id = ANY (contact_ids)
  ORDER BY cu.contact_id
  FOR NO KEY UPDATE;

  INSERT INTO customer_totals AS t (account_id, contact_id, customer_id, created_at, commission_status,
    commission_expires_at, first_event_type, first_event_at, latest_lead_at, first_payment_at, total_revenue,
    total_purchases, total_commission, products, contact_email, contact_name, contact_phone)
  SELECT account, cu.contact_id, cu.id, cu.created_at, cu.commission_status, cu.commission_expires_at,
    fe.event_type, fe.event_datetime, ll.lead_at, p.first_payment_at, coalesce(p.total_revenue, 0),
    coalesce(p.total_purchases, 0), coalesce(p.total_commission, 0), coalesce(pr.products, '{}'),
    c.email, coalesce(c.name, nullif(btrim(concat_ws(' ', c.first_name, c.last_name)), '')), c.phone
  FROM customers cu
  JOIN contacts c ON c.account_id = account AND c.id = cu.contact_id
  -- The first CRM event: at one instant, the smaller id first.
  LEFT JOIN LATERAL (
    SELECT e.event_type, e.event_datetime FROM events e
    WHERE e.account_id = account AND e.contact_id = cu.contact_id
    ORDER BY e.event_datetime, e.id
    LIMIT 1
  ) fe ON true
  LEFT JOIN LATERAL (
    SELECT max(e.event_datetime) AS lead_at FROM events e
    WHERE e.account_id = account AND e.contact_id = cu.contact_id AND e.event_type = 'lead'
  ) ll ON true
  -- Commission as finance counts it: the amount given, else amount × rate, rounded to the cent.
  LEFT JOIN LATERAL (
    SELECT
      min(x.purchase_date) AS first_payment_at,
      sum(x.amount) AS total_revenue,
      count(*)::int AS total_purchases,
      sum(round(coalesce(x.commission_amount, x.amount * x.commission_rate, 0), 2))
        FILTER (WHERE x.commissionable) AS total_commission
    FROM purchases x
    WHERE x.account_id = account AND x.contact_id = cu.contact_id
  ) p ON true
  -- One name per product: purchases grouped by key (by name when they have none).
  LEFT JOIN LATERAL (
    SELECT array_agg(g.label ORDER BY g.label) AS products
    FROM (
      SELECT coalesce(max(x.product_name), max(x.product_key)) AS label
      FROM purchases x
      WHERE x.account_id = account AND x.contact_id = cu.contact_id
        AND coalesce(x.product_key, x.product_name) IS NOT NULL
      GROUP BY coalesce(x.product_key, x.product_name)
    ) g
  ) pr ON true
  WHERE cu.account_id = account AND cu.contact_id = ANY (contact_ids)
  ORDER BY cu.contact_id
  ON CONFLICT (account_id, contact_id) DO UPDATE SET
    customer_id = excluded.customer_id, created_at = excluded.created_at,
    commission_status = excluded.commission_status, commission_expires_at = excluded.commission_expires_at,
    first_event_type = excluded.first_event_type, first_event_at = excluded.first_event_at,
    latest_lead_at = excluded.latest_lead_at, first_payment_at = excluded.first_payment_at,
    total_revenue = excluded.total_revenue, total_purchases = excluded.total_purchases,
    total_commission = excluded.total_commission, products = excluded.products,
    contact_email = excluded.contact_email, contact_name = excluded.contact_name,
    contact_phone = excluded.contact_phone
  WHERE (t.customer_id, t.created_at, t.commission_status, t.commission_expires_at, t.first_event_type,
         t.first_event_at, t.latest_lead_at, t.first_payment_at, t.total_revenue, t.total_purchases,
         t.total_commission, t.products, t.contact_email, t.contact_name, t.contact_phone)
    IS DISTINCT FROM (excluded.customer_id, excluded.created_at, excluded.commission_status,
         excluded.commission_expires_at, excluded.first_event_type, excluded.first_event_at,
         excluded.latest_lead_at, excluded.first_payment_at, excluded.total_revenue, excluded.total_purchases,
         excluded.total_commission, excluded.products, excluded.contact_email, excluded.contact_name,
         excluded.contact_phone);

  DELETE FROM customer_totals t
  WHERE t.account_id = account AND t.contact_id = ANY (contact_ids)
    AND NOT EXISTS (SELECT 1 FROM customers cu WHERE cu.account_id = account AND cu.contact_id = t.contact_id);
END $fn$;
--> statement-breakpoint
-- Its parameters are an account and an array of contacts: every custom plan, made for the array
-- given, looks cheaper than the generic one (made for an array of unknown size), so PostgreSQL
-- planned its statements again at every call (0.8 ms measured of its 2.0 ms). The generic plan is
-- the one it would choose anyway: the customers by their key, each one's events and purchases by
-- their indexes.
ALTER FUNCTION ascribe_refresh_customer_totals(uuid, uuid[]) SET plan_cache_mode = force_generic_plan;
--> statement-breakpoint
-- 3. Contact milestones (0029's function): for a list of contacts, its statement written in the
--    body; the rebuild of every contact (no list) keeps the statement EXECUTEd, planned for the
--    account as one pass over its events. Both are rendered from one template below.
DO $do$
DECLARE
  -- %1$s the touched contacts, %2$s how their events are joined, %3$s the account.
  template text := $t$
  WITH touched AS (%1$s),
  ev AS (
    SELECT e.contact_id, e.id, e.event_type, e.event_datetime, e.counted, e.utm_source, e.utm_campaign,
           e.campaign_name, e.product_key, e.product_name, e.cancelled_at, e.booking_date,
           (e.booking_date + coalesce(e.booking_time, '00:00')::time) AT TIME ZONE a.timezone AS meets_at
    FROM touched t
    %2$s
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
  SELECT %3$s, r.contact_id, r.lead_at, r.source, r.campaign, r.application_at, r.booking_at, r.show_at,
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
  $t$;
BEGIN
  EXECUTE format($create$
CREATE OR REPLACE FUNCTION ascribe_refresh_contact_milestones(account uuid, contact_ids uuid[]) RETURNS void
  LANGUAGE plpgsql
  AS $fn$
BEGIN
  IF contact_ids IS NULL THEN
    EXECUTE format(%1$L,
      format('SELECT DISTINCT contact_id FROM events WHERE account_id = %%L AND contact_id IS NOT NULL', account),
      format('JOIN events e ON e.account_id = %%L AND e.contact_id = t.contact_id', account),
      quote_literal(account));
  ELSE
    -- Each contact's events by its own range of events_contact_idx (OFFSET 0 keeps the subquery
    -- apart, so the planner cannot turn it into a scan of all of the account's events hashed
    -- against the batch: a cost that grew with the account, not with the batch).
    %2$s;
  END IF;
END $fn$ $create$,
    template,
    format(template,
      'SELECT DISTINCT c AS contact_id FROM unnest(contact_ids) AS c WHERE c IS NOT NULL',
      'CROSS JOIN LATERAL (SELECT * FROM events x WHERE x.account_id = account AND x.contact_id = t.contact_id OFFSET 0) e',
      'account'));
END $do$;
