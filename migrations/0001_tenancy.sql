-- Requests run as this role: it owns nothing, so FORCE'd row-level security always applies to it.
-- Roles are cluster-wide and migrations of several databases may race to create it.
-- An owner without CREATEROLE relies on the role created beforehand (docs/operations.md): CREATE ROLE
-- checks that privilege before it looks for the name, so it is only tried when the role is missing.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ascribe_app') THEN
    CREATE ROLE ascribe_app NOLOGIN NOSUPERUSER NOBYPASSRLS;
  END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;
--> statement-breakpoint
-- The connecting user must be able to SET ROLE to it (a superuser already can).
DO $$
BEGIN
  -- Granting needs ADMIN OPTION on the role, which a member granted it beforehand does not hold.
  IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user)
     AND NOT pg_has_role(current_user, 'ascribe_app', 'MEMBER') THEN
    EXECUTE format('GRANT ascribe_app TO %I', current_user);
  END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;
--> statement-breakpoint
GRANT USAGE ON SCHEMA public TO ascribe_app;
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ascribe_app;
--> statement-breakpoint
GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO ascribe_app;
--> statement-breakpoint
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ascribe_app;
--> statement-breakpoint
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT ON SEQUENCES TO ascribe_app;
--> statement-breakpoint
-- The tenant of a transaction; NULL (so no row matches) when the setting is absent or reset.
CREATE OR REPLACE FUNCTION ascribe_current_account() RETURNS uuid
  LANGUAGE sql STABLE
  AS $$ SELECT NULLIF(current_setting('app.account_id', true), '')::uuid $$;
--> statement-breakpoint
-- Later migrations call this after creating tables: every table with an account_id column gets
-- RLS enabled and forced, with the tenant policy.
CREATE OR REPLACE FUNCTION ascribe_enforce_tenancy() RETURNS void
  LANGUAGE plpgsql
  AS $$
DECLARE
  t record;
BEGIN
  FOR t IN
    SELECT c.relname
    FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'account_id' AND NOT a.attisdropped
    WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p')
  LOOP
    EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t.relname);
    EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t.relname);
    IF NOT EXISTS (SELECT 1 FROM pg_policies WHERE schemaname = 'public' AND tablename = t.relname AND policyname = 'tenant_isolation') THEN
      EXECUTE format(
        'CREATE POLICY tenant_isolation ON %I USING (account_id = ascribe_current_account()) WITH CHECK (account_id = ascribe_current_account())',
        t.relname);
    END IF;
  END LOOP;
END $$;
--> statement-breakpoint
SELECT ascribe_enforce_tenancy();
--> statement-breakpoint
-- The account row itself belongs to its tenant.
ALTER TABLE accounts ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE accounts FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_isolation ON accounts USING (id = ascribe_current_account()) WITH CHECK (id = ascribe_current_account());
--> statement-breakpoint
-- Authentication must find a key before it knows the account: a transaction that presents a key's
-- hash (app.key_hash) may read that one key and its account, nothing else.
CREATE POLICY key_lookup ON api_keys FOR SELECT
  USING (key_hash = NULLIF(current_setting('app.key_hash', true), ''));
--> statement-breakpoint
CREATE POLICY key_lookup ON accounts FOR SELECT
  USING (id IN (SELECT k.account_id FROM api_keys k WHERE k.key_hash = NULLIF(current_setting('app.key_hash', true), '')));
--> statement-breakpoint
-- Users are global (one person, several accounts); requests see only the members of their tenant.
-- Not forced: administration (the owner) creates users before they belong to an account.
ALTER TABLE users ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY tenant_members ON users FOR SELECT
  USING (id IN (SELECT m.user_id FROM members m WHERE m.account_id = ascribe_current_account()));
