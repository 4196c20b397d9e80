-- A rule write names its rule by id; the spec answers 403 `forbidden` for another account's rule and
-- 404 `not_found` for none at all. The request's transaction sees its own account's rules only, so
-- this function answers the one thing the distinction needs — whether the id exists in any account —
-- as the tables' owner, through a policy that only the owner gets and only while the function runs
-- (its SET clause; a superuser owner bypasses row-level security anyway). It returns a boolean and
-- nothing of the rule; rule ids are random UUIDs.
DO $$
BEGIN
  EXECUTE format(
    'CREATE POLICY ad_rule_probe ON ad_rules FOR SELECT TO %I USING (current_setting(''app.rule_probe'', true) = ''on'')',
    current_user);
END $$;
--> statement-breakpoint
CREATE OR REPLACE FUNCTION ascribe_ad_rule_exists(rule_id uuid) RETURNS boolean
  LANGUAGE sql STABLE SECURITY DEFINER
  SET search_path = public, pg_temp
  SET app.rule_probe = 'on'
  AS $$ SELECT EXISTS (SELECT 1 FROM ad_rules r WHERE r.id = rule_id) $$;
