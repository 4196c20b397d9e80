CREATE TABLE "user_tokens" (
	"token_hash" text PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"purpose" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"used_at" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "web_sessions" (
	"id_hash" text PRIMARY KEY NOT NULL,
	"user_id" uuid NOT NULL,
	"current_account" uuid,
	"csrf_token" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
ALTER TABLE "users" ADD COLUMN "password_hash" text;--> statement-breakpoint
ALTER TABLE "user_tokens" ADD CONSTRAINT "user_tokens_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "web_sessions" ADD CONSTRAINT "web_sessions_user_id_users_id_fk" FOREIGN KEY ("user_id") REFERENCES "public"."users"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "user_tokens_user_idx" ON "user_tokens" USING btree ("user_id");--> statement-breakpoint
CREATE INDEX "web_sessions_user_idx" ON "web_sessions" USING btree ("user_id");--> statement-breakpoint
-- A page request presents its session cookie's hash (app.session_hash) and, as the request role,
-- sees that session, its user, the user's memberships and their accounts: nothing else.
CREATE OR REPLACE FUNCTION ascribe_session_user() RETURNS uuid
  LANGUAGE sql STABLE
  AS $$ SELECT s.user_id FROM web_sessions s WHERE s.id_hash = NULLIF(current_setting('app.session_hash', true), '') $$;
--> statement-breakpoint
-- Not forced: sign-in and sign-out run as the owner, before and after any tenant.
ALTER TABLE web_sessions ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
CREATE POLICY session_lookup ON web_sessions
  USING (id_hash = NULLIF(current_setting('app.session_hash', true), ''))
  WITH CHECK (id_hash = NULLIF(current_setting('app.session_hash', true), ''));
--> statement-breakpoint
CREATE POLICY signed_in_user ON users FOR SELECT USING (id = ascribe_session_user());
--> statement-breakpoint
CREATE POLICY signed_in_member ON members FOR SELECT USING (user_id = ascribe_session_user());
--> statement-breakpoint
CREATE POLICY signed_in_member ON accounts FOR SELECT
  USING (id IN (SELECT m.account_id FROM members m WHERE m.user_id = ascribe_session_user()));
--> statement-breakpoint
-- One-time links and password hashes are read by the owner role only (sign-in, set-password).
ALTER TABLE user_tokens ENABLE ROW LEVEL SECURITY;
--> statement-breakpoint
REVOKE ALL ON user_tokens FROM ascribe_app;
--> statement-breakpoint
REVOKE SELECT, INSERT, UPDATE ON users FROM ascribe_app;
--> statement-breakpoint
GRANT SELECT (id, email, created_at) ON users TO ascribe_app;
