-- Administration transactions (sign-in, invitations, the CLI, rule runs) may run as a login that owns
-- nothing: it is a member of this role, which may read and write every table but not change the
-- schema. Roles are cluster-wide; an owner without CREATEROLE relies on the role created beforehand
-- (docs/operations.md), hence the check before CREATE ROLE, which checks that privilege first.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ascribe_admin') THEN
    CREATE ROLE ascribe_admin NOLOGIN NOSUPERUSER NOBYPASSRLS;
  END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$;
--> statement-breakpoint
GRANT USAGE ON SCHEMA public TO ascribe_admin;
--> statement-breakpoint
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ascribe_admin;
--> statement-breakpoint
GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO ascribe_admin;
--> statement-breakpoint
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO ascribe_admin;
--> statement-breakpoint
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO ascribe_admin;
--> statement-breakpoint
-- Whoever serves checks that the schema is current before it starts.
GRANT USAGE ON SCHEMA drizzle TO ascribe_admin;
--> statement-breakpoint
GRANT SELECT ON ALL TABLES IN SCHEMA drizzle TO ascribe_admin;
--> statement-breakpoint
-- The owner bypasses row-level security on the tables that enable it without forcing it (people and
-- their sessions, read before any tenant is known); the administration role sees them whole too.
-- Forced tables need nothing: their policies apply to the owner and to this role alike.
CREATE POLICY administration ON users TO ascribe_admin USING (true) WITH CHECK (true);
--> statement-breakpoint
CREATE POLICY administration ON user_tokens TO ascribe_admin USING (true) WITH CHECK (true);
--> statement-breakpoint
CREATE POLICY administration ON web_sessions TO ascribe_admin USING (true) WITH CHECK (true);
