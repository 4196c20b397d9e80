-- Connectors (issue 21): an account's links to the vendors it already runs (Stripe, Calendly,
-- Cal.com webhooks; Meta and Google Ads spend sync). The vendor's signing secret or credentials are
-- sealed (src/crypto/secret-box.ts, bound to the account and the connector), never stored in clear.
CREATE TABLE "connectors" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"kind" text NOT NULL,
	"secret_sealed" text,
	"credentials_sealed" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_event_at" timestamp with time zone,
	"last_sync_at" timestamp with time zone,
	"last_error" text,
	"last_error_at" timestamp with time zone,
	CONSTRAINT "connectors_account_id_id_pk" PRIMARY KEY("account_id","id"),
	CONSTRAINT "connectors_kind_check" CHECK ("kind" IN ('stripe', 'calendly', 'calcom', 'meta', 'google'))
);
--> statement-breakpoint
ALTER TABLE "connectors" ADD CONSTRAINT "connectors_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- A vendor's hook URL names the connector only; its account is found through this index.
CREATE INDEX "connectors_id_idx" ON "connectors" ("id");--> statement-breakpoint
-- The vendor deliveries a connector has taken (Stripe's event id, …): a delivery is claimed in the
-- transaction that stores what it carries, so a resent copy changes nothing.
CREATE TABLE "connector_deliveries" (
	"account_id" uuid NOT NULL,
	"connector_id" uuid NOT NULL,
	"delivery_id" text NOT NULL,
	"received_at" timestamp with time zone NOT NULL,
	CONSTRAINT "connector_deliveries_account_id_connector_id_delivery_id_pk" PRIMARY KEY("account_id","connector_id","delivery_id")
);
--> statement-breakpoint
ALTER TABLE "connector_deliveries" ADD CONSTRAINT "connector_deliveries_connector_fk" FOREIGN KEY ("account_id","connector_id") REFERENCES "public"."connectors"("account_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- Tenant tables like the others: forced row-level security and the tenant policy.
SELECT ascribe_enforce_tenancy();
--> statement-breakpoint
-- A hook request knows the connector id and not yet its account; the request's transaction sees no
-- account's connectors. As in 0016, this answers the one thing needed, the account id of a connector
-- of the given kind (connector ids are random UUIDs), through a policy only the owner gets and only
-- while the function runs. It reuses 0016's setting, app.rule_probe: an owner that is not a superuser
-- may set only the parameters it was granted (docs/operations.md grants that one), and a new one
-- would stop an upgrade at this migration with "permission denied to set parameter".
DO $$
BEGIN
  EXECUTE format(
    'CREATE POLICY connector_probe ON connectors FOR SELECT TO %I USING (current_setting(''app.rule_probe'', true) = ''on'')',
    current_user);
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION ascribe_connector_account(connector_id uuid, connector_kind text) RETURNS uuid
  LANGUAGE sql STABLE SECURITY DEFINER
  SET search_path = public, pg_temp
  SET app.rule_probe = 'on'
  AS $$ SELECT c.account_id FROM connectors c WHERE c.id = connector_id AND c.kind = connector_kind $$;
