-- /contacts/customers' read model keeps each customer's contact fields as the list shows them (email;
-- name, else first and last name; phone), so the list reads no contact per row: at scale 100 its
-- 34,700 probes of contacts were 200–370 of the list's 350–520 ms in PostgreSQL (docs/scaling.md).
-- A contact's email never changes once it exists, and its name and phone only go from none to one,
-- which contact resolution passes on by refreshing the customer (src/queries/resolve-contacts.ts); the
-- refresh writes them with the rest of the row. Existing rows are filled with the forced tenant
-- policies lifted inside the migration's transaction (as 0027 does).
ALTER TABLE "customer_totals" ADD COLUMN "contact_email" text;
--> statement-breakpoint
ALTER TABLE "customer_totals" ADD COLUMN "contact_name" text;
--> statement-breakpoint
ALTER TABLE "customer_totals" ADD COLUMN "contact_phone" text;
--> statement-breakpoint
-- As in 0027, with the contact's fields.
CREATE OR REPLACE FUNCTION ascribe_refresh_customer_totals(account uuid, contact_ids uuid[])
  RETURNS void
  LANGUAGE plpgsql
  AS $fn$
BEGIN
  EXECUTE $q$
  SELECT 1 FROM customers cu
  WHERE cu.account_id = $1 AND cu.contact_id = ANY ($2)
  ORDER BY cu.contact_id
  FOR NO KEY UPDATE $q$ USING account, contact_ids;

  EXECUTE $q$
  INSERT INTO customer_totals AS t (account_id, contact_id, customer_id, created_at, commission_status,
    commission_expires_at, first_event_type, first_event_at, latest_lead_at, first_payment_at, total_revenue,
    total_purchases, total_commission, products, contact_email, contact_name, contact_phone)
  SELECT $1, cu.contact_id, cu.id, cu.created_at, cu.commission_status, cu.commission_expires_at,
    fe.event_type, fe.event_datetime, ll.lead_at, p.first_payment_at, coalesce(p.total_revenue, 0),
    coalesce(p.total_purchases, 0), coalesce(p.total_commission, 0), coalesce(pr.products, '{}'),
    c.email, coalesce(c.name, nullif(btrim(concat_ws(' ', c.first_name, c.last_name)), '')), c.phone
  FROM customers cu
  JOIN contacts c ON c.account_id = $1 AND c.id = cu.contact_id
  -- The first CRM event: at one instant, the smaller id first.
  LEFT JOIN LATERAL (
    SELECT e.event_type, e.event_datetime FROM events e
    WHERE e.account_id = $1 AND e.contact_id = cu.contact_id
    ORDER BY e.event_datetime, e.id
    LIMIT 1
  ) fe ON true
  LEFT JOIN LATERAL (
    SELECT max(e.event_datetime) AS lead_at FROM events e
    WHERE e.account_id = $1 AND e.contact_id = cu.contact_id AND e.event_type = 'lead'
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
    WHERE x.account_id = $1 AND x.contact_id = cu.contact_id
  ) p ON true
  -- One name per product: purchases grouped by key (by name when they have none).
  LEFT JOIN LATERAL (
    SELECT array_agg(g.label ORDER BY g.label) AS products
    FROM (
      SELECT coalesce(max(x.product_name), max(x.product_key)) AS label
      FROM purchases x
      WHERE x.account_id = $1 AND x.contact_id = cu.contact_id
        AND coalesce(x.product_key, x.product_name) IS NOT NULL
      GROUP BY coalesce(x.product_key, x.product_name)
    ) g
  ) pr ON true
  WHERE cu.account_id = $1 AND cu.contact_id = ANY ($2)
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
         excluded.contact_phone) $q$ USING account, contact_ids;

  EXECUTE $q$
  DELETE FROM customer_totals t
  WHERE t.account_id = $1 AND t.contact_id = ANY ($2)
    AND NOT EXISTS (SELECT 1 FROM customers cu WHERE cu.account_id = $1 AND cu.contact_id = t.contact_id) $q$
  USING account, contact_ids;
END $fn$;
--> statement-breakpoint
ALTER TABLE customer_totals NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE contacts NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
UPDATE customer_totals t
SET contact_email = c.email,
    contact_name = coalesce(c.name, nullif(btrim(concat_ws(' ', c.first_name, c.last_name)), '')),
    contact_phone = c.phone
FROM contacts c
WHERE c.account_id = t.account_id AND c.id = t.contact_id;
--> statement-breakpoint
ALTER TABLE customer_totals FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE contacts FORCE ROW LEVEL SECURITY;
