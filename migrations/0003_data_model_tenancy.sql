-- The data model's tables get forced RLS and the tenant policy, like every table with account_id.
SELECT ascribe_enforce_tenancy();
--> statement-breakpoint
-- Ingestion outside the key API (webhooks, beacons) names its account by the public client key: a
-- transaction that presents one (app.client_key) may read that one account row.
CREATE POLICY client_key_lookup ON accounts FOR SELECT
  USING (client_key = NULLIF(current_setting('app.client_key', true), ''));
--> statement-breakpoint
-- A beacon sent to a first-party tracking host names its account by that host (app.tracking_host).
CREATE POLICY host_lookup ON tracking_hosts FOR SELECT
  USING (host = NULLIF(current_setting('app.tracking_host', true), ''));
