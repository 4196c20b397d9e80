-- Keys are cached in each serving process (src/auth/key-store.ts). A change to what a cached key
-- record holds — its revocation, expiry or scopes, its deletion, its account's plan, timezone or
-- currency, the account's deletion — is announced on the channel `ascribe_key_change` when the
-- writing transaction commits, whoever writes it (a server, the CLI, psql). Every serving process
-- listens and drops its cache; a process that lost its listening connection stops trusting its
-- cache until it listens again.
CREATE OR REPLACE FUNCTION ascribe_notify_key_change() RETURNS trigger
  LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('ascribe_key_change', TG_TABLE_NAME);
  RETURN NULL;
END $$;
--> statement-breakpoint
-- Not on `last_used_at`: the audit writer moves it forward several times a second under load.
CREATE TRIGGER api_keys_notify_change
  AFTER UPDATE OF key_hash, account_id, scopes, expires_at, revoked_at OR DELETE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_notify_key_change();
--> statement-breakpoint
CREATE TRIGGER accounts_notify_change
  AFTER UPDATE OF plan, timezone, currency OR DELETE ON accounts
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_notify_key_change();
