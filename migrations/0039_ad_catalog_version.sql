-- The ad index cache (src/attribution/ad-index-cache.ts) checks, at every beacon batch, that the
-- account's ad catalog is the one it indexed. It read a digest of every ad (an md5 over the
-- catalog: 0.1 ms at 40 ads, 1.4 ms at 5,000, growing with the catalog, at every batch). A version
-- moved on by every statement that writes the account's ads, whoever runs it (an import, spend
-- sync, the demo, psql), in the writing transaction, makes the check one row read by key.
CREATE TABLE "ad_catalog_versions" (
	"account_id" uuid PRIMARY KEY NOT NULL,
	"version" bigint DEFAULT 0 NOT NULL
);
--> statement-breakpoint
ALTER TABLE "ad_catalog_versions" ADD CONSTRAINT "ad_catalog_versions_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
SELECT ascribe_enforce_tenancy();
--> statement-breakpoint
-- One statement of ads moves each account it wrote on by one; rows are locked in account order, so
-- two writers never wait on each other in a cycle.
CREATE FUNCTION ascribe_bump_ad_catalog() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
BEGIN
  IF TG_OP = 'DELETE' THEN
    INSERT INTO ad_catalog_versions AS v (account_id, version)
    SELECT DISTINCT o.account_id, 1 FROM old_rows o ORDER BY 1
    ON CONFLICT (account_id) DO UPDATE SET version = v.version + 1;
  ELSE
    INSERT INTO ad_catalog_versions AS v (account_id, version)
    SELECT DISTINCT n.account_id, 1 FROM new_rows n ORDER BY 1
    ON CONFLICT (account_id) DO UPDATE SET version = v.version + 1;
  END IF;
  RETURN NULL;
END $fn$;
--> statement-breakpoint
CREATE TRIGGER ads_catalog_version_insert AFTER INSERT ON ads
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_bump_ad_catalog();
--> statement-breakpoint
CREATE TRIGGER ads_catalog_version_update AFTER UPDATE ON ads
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_bump_ad_catalog();
--> statement-breakpoint
CREATE TRIGGER ads_catalog_version_delete AFTER DELETE ON ads
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_bump_ad_catalog();
