ALTER TABLE "ad_rule_runs" ADD COLUMN "metrics" jsonb;--> statement-breakpoint
-- The rule engine evaluates every account that has an enabled rule; forced row-level security hides
-- the accounts from an owner that names none. Through the probe policy of 0016, this answers their
-- ids and nothing else.
CREATE OR REPLACE FUNCTION ascribe_rule_accounts() RETURNS SETOF uuid
  LANGUAGE sql STABLE SECURITY DEFINER
  SET search_path = public, pg_temp
  SET app.rule_probe = 'on'
  AS $$ SELECT DISTINCT r.account_id FROM ad_rules r WHERE r.enabled ORDER BY 1 $$;
--> statement-breakpoint
-- Administration only: a request's role cannot list other accounts.
REVOKE EXECUTE ON FUNCTION ascribe_rule_accounts() FROM PUBLIC;
