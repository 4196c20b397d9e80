-- The Markov model's paths to null of a window (docs/attribution.md, "Speed"): the paths of the
-- contacts touched in the window or its look-back who bought nothing in it, grouped by path. They
-- are the one part of /attribution/models read whole at every request (at scale 100, 860,000 ad
-- touches of 137,000 contacts for 30 days: 0.7 s); stored, they hold while nothing they were read
-- from has changed, by the rule of attribution_day_credits (migration 0040): no change its snapshot
-- did not see before the window's end, the same ad catalog at the campaign level, computed or
-- checked within the hour. A window is its instants, so a new timezone is another window. The paths
-- are json, not jsonb, kept as written: each key once, a path as its count and the keys' places
-- (0.37 MB at scale 100, against 4.6 MB as jsonb's text, which took 100 ms to produce).
CREATE TABLE "attribution_null_paths" (
	"account_id" uuid NOT NULL,
	"level" text NOT NULL,
	"lookback_days" integer NOT NULL,
	"window_start" timestamp with time zone NOT NULL,
	"window_end" timestamp with time zone NOT NULL,
	"catalog_version" bigint NOT NULL,
	"seen_snapshot" pg_snapshot NOT NULL,
	"computed_at" timestamp with time zone NOT NULL,
	"paths" json NOT NULL,
	CONSTRAINT "attribution_null_paths_pk" PRIMARY KEY("account_id","level","lookback_days","window_start","window_end")
);
--> statement-breakpoint
ALTER TABLE "attribution_null_paths" ADD CONSTRAINT "attribution_null_paths_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
SELECT ascribe_enforce_tenancy();
