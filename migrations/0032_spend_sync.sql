-- Ad-spend sync (issue 21): a synced day replaces that day's rows of the one ad account it came from.
-- Which connector (ad account) wrote a row is recorded, so syncing one Meta ad account never deletes
-- the days of another ad account of the same Ascribe account; imported rows carry null. No foreign
-- key: removing a connector leaves the spend it synced in the reports.
ALTER TABLE "ad_spend_daily" ADD COLUMN "connector_id" uuid;
--> statement-breakpoint
-- The schedule inside `ascribe serve` syncs every Meta and Google connector of every account; forced
-- row-level security hides them from an owner that names no account. Through 0030's probe policy,
-- this answers their ids and kinds and nothing else (never the sealed credentials).
CREATE OR REPLACE FUNCTION ascribe_spend_connectors() RETURNS TABLE (account_id uuid, id uuid, kind text)
  LANGUAGE sql STABLE SECURITY DEFINER
  SET search_path = public, pg_temp
  SET app.rule_probe = 'on'
  AS $$ SELECT c.account_id, c.id, c.kind FROM connectors c WHERE c.kind IN ('meta', 'google') ORDER BY 1, 2 $$;
--> statement-breakpoint
-- Administration only: a request's role cannot list other accounts' connectors.
REVOKE EXECUTE ON FUNCTION ascribe_spend_connectors() FROM PUBLIC;
