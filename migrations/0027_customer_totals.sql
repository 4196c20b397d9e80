-- /contacts/customers' read model: one row per customer with what the list shows of it (docs/metrics.md
-- "Contacts"), kept by statement triggers on customers, purchases and events, so the list is one
-- index range of this table (plus each row's contact by its key) instead of three probes of events and
-- purchases per customer at every request.
CREATE TABLE "customer_totals" (
	"account_id" uuid NOT NULL,
	"contact_id" uuid NOT NULL,
	"customer_id" uuid NOT NULL,
	"created_at" timestamp with time zone NOT NULL,
	"commission_status" text,
	"commission_expires_at" timestamp with time zone,
	"first_event_type" text,
	"first_event_at" timestamp with time zone,
	"latest_lead_at" timestamp with time zone,
	"first_payment_at" timestamp with time zone,
	"total_revenue" numeric DEFAULT 0 NOT NULL,
	"total_purchases" integer DEFAULT 0 NOT NULL,
	"total_commission" numeric DEFAULT 0 NOT NULL,
	"products" text[] DEFAULT '{}'::text[] NOT NULL,
	CONSTRAINT "customer_totals_account_id_contact_id_pk" PRIMARY KEY("account_id","contact_id")
);
--> statement-breakpoint
ALTER TABLE "customer_totals" ADD CONSTRAINT "customer_totals_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "customer_totals" ADD CONSTRAINT "customer_totals_account_id_contact_id_customers_account_id_contact_id_fk" FOREIGN KEY ("account_id","contact_id") REFERENCES "public"."customers"("account_id","contact_id") ON DELETE cascade ON UPDATE cascade;--> statement-breakpoint
-- The list's order (newest customer first, then id): its pages are ranges of this index.
CREATE INDEX "customer_totals_created_idx" ON "customer_totals" USING btree ("account_id","created_at" desc,"customer_id" desc);--> statement-breakpoint
SELECT ascribe_enforce_tenancy();
--> statement-breakpoint
-- Recomputes the rows of some of an account's contacts from customers, events and purchases: a contact
-- that is a customer gets its row written (only when something changed), one that is not any more loses
-- it. The customers are locked first, in one global order: two transactions writing to one customer
-- then run this one after the other, and the second computes in a statement that starts after the first
-- committed (READ COMMITTED: a fresh snapshot per statement), so neither undoes the other's rows.
-- The statements are run by EXECUTE, planned at each call: a plan cached by the session while the
-- tables were small (the first batches of a load) would keep scanning them whole once they are not
-- (measured: a demo load's customer inserts went from 5 to 15 s a statement, then timed out).
CREATE FUNCTION ascribe_refresh_customer_totals(account uuid, contact_ids uuid[])
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
    total_purchases, total_commission, products)
  SELECT $1, cu.contact_id, cu.id, cu.created_at, cu.commission_status, cu.commission_expires_at,
    fe.event_type, fe.event_datetime, ll.lead_at, p.first_payment_at, coalesce(p.total_revenue, 0),
    coalesce(p.total_purchases, 0), coalesce(p.total_commission, 0), coalesce(pr.products, '{}')
  FROM customers cu
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
    total_commission = excluded.total_commission, products = excluded.products
  WHERE (t.customer_id, t.created_at, t.commission_status, t.commission_expires_at, t.first_event_type,
         t.first_event_at, t.latest_lead_at, t.first_payment_at, t.total_revenue, t.total_purchases,
         t.total_commission, t.products)
    IS DISTINCT FROM (excluded.customer_id, excluded.created_at, excluded.commission_status,
         excluded.commission_expires_at, excluded.first_event_type, excluded.first_event_at,
         excluded.latest_lead_at, excluded.first_payment_at, excluded.total_revenue, excluded.total_purchases,
         excluded.total_commission, excluded.products) $q$ USING account, contact_ids;

  EXECUTE $q$
  DELETE FROM customer_totals t
  WHERE t.account_id = $1 AND t.contact_id = ANY ($2)
    AND NOT EXISTS (SELECT 1 FROM customers cu WHERE cu.account_id = $1 AND cu.contact_id = t.contact_id) $q$
  USING account, contact_ids;
END $fn$;
--> statement-breakpoint
-- Statement-level, on customers, purchases and events alike: one refresh per account for the contacts
-- the statement touched. For an update, only rows whose contact or one of the columns the model reads
-- (TG_ARGV[0], a fixed list from the trigger's definition) changed count, before and after: an update
-- of anything else (an event's ad resolution, say) costs one comparison and no refresh.
CREATE FUNCTION ascribe_customer_totals_trigger() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
DECLARE
  touched record;
BEGIN
  FOR touched IN EXECUTE format(
    CASE TG_OP
      WHEN 'INSERT' THEN $q$
        SELECT account_id, array_agg(DISTINCT contact_id) AS contacts FROM new_rows
        WHERE contact_id IS NOT NULL GROUP BY account_id $q$
      WHEN 'DELETE' THEN $q$
        SELECT account_id, array_agg(DISTINCT contact_id) AS contacts FROM old_rows
        WHERE contact_id IS NOT NULL GROUP BY account_id $q$
      ELSE $q$
        SELECT changed.account_id, array_agg(DISTINCT changed.contact_id) AS contacts FROM (
          (SELECT account_id, id, contact_id, %1$s FROM new_rows
           EXCEPT ALL SELECT account_id, id, contact_id, %1$s FROM old_rows)
          UNION ALL
          (SELECT account_id, id, contact_id, %1$s FROM old_rows
           EXCEPT ALL SELECT account_id, id, contact_id, %1$s FROM new_rows)
        ) changed
        WHERE changed.contact_id IS NOT NULL GROUP BY changed.account_id $q$
    END, TG_ARGV[0])
  LOOP
    PERFORM ascribe_refresh_customer_totals(touched.account_id, touched.contacts);
  END LOOP;
  RETURN NULL;
END $fn$;
--> statement-breakpoint
CREATE TRIGGER customers_totals_insert AFTER INSERT ON customers
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_customer_totals_trigger('created_at');
--> statement-breakpoint
CREATE TRIGGER customers_totals_update AFTER UPDATE ON customers
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_customer_totals_trigger('created_at, commission_status, commission_expires_at');
--> statement-breakpoint
CREATE TRIGGER customers_totals_delete AFTER DELETE ON customers
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_customer_totals_trigger('created_at');
--> statement-breakpoint
CREATE TRIGGER purchases_totals_insert AFTER INSERT ON purchases
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_customer_totals_trigger('amount');
--> statement-breakpoint
CREATE TRIGGER purchases_totals_update AFTER UPDATE ON purchases
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_customer_totals_trigger('purchase_date, amount, commissionable, commission_rate, commission_amount, product_key, product_name');
--> statement-breakpoint
CREATE TRIGGER purchases_totals_delete AFTER DELETE ON purchases
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_customer_totals_trigger('amount');
--> statement-breakpoint
CREATE TRIGGER events_totals_insert AFTER INSERT ON events
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_customer_totals_trigger('event_type');
--> statement-breakpoint
CREATE TRIGGER events_totals_update AFTER UPDATE ON events
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_customer_totals_trigger('event_type, event_datetime');
--> statement-breakpoint
CREATE TRIGGER events_totals_delete AFTER DELETE ON events
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_customer_totals_trigger('event_type');
--> statement-breakpoint
-- Backfill: every account's customers, with the forced tenant policies lifted for these statements
-- inside the migration's transaction (as 0010 does).
ALTER TABLE accounts NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE customers NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE events NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE purchases NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE customer_totals NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
SELECT ascribe_refresh_customer_totals(a.id,
  ARRAY(SELECT cu.contact_id FROM customers cu WHERE cu.account_id = a.id))
FROM accounts a;
--> statement-breakpoint
ALTER TABLE accounts FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE customers FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE events FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE purchases FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE customer_totals FORCE ROW LEVEL SECURITY;
