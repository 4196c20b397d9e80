-- Distribution (docs/scaling.md): every unique constraint of a tenant table leads with account_id, so
-- that sharded by account (Citus) each shard enforces it alone. A key's hash stays unique in practice
-- (it hashes 192 random bits); authentication finds a key by its hash before it knows the account,
-- through a plain index.
CREATE INDEX IF NOT EXISTS "api_keys_key_hash_idx" ON "api_keys" USING btree ("key_hash");
--> statement-breakpoint
ALTER TABLE "api_keys" DROP CONSTRAINT IF EXISTS "api_keys_key_hash_unique";
--> statement-breakpoint
ALTER TABLE "api_keys" ADD CONSTRAINT "api_keys_account_id_key_hash_unique" UNIQUE ("account_id", "key_hash");
