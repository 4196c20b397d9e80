-- The attribution models' credit of each day (docs/attribution.md, "Speed"): the per-sale models
-- (every rule-based model and Shapley) credit each counted sale from its own journey alone, so a
-- day's credit, once computed, holds until something it was computed from changes; Markov stores a
-- day's converting paths likewise. A window's report sums its days and rounds once: reading 30
-- stored days replaces gathering every sale's touches (about 100,000 at scale 100) at every request.
--
-- journey_changes: one row per writing transaction and account, naming the earliest instant it
-- changed (a touch's or an event's, before and after). A touch at t changes only the journeys of
-- sales at or after t, so a live account's ingest (touches and sales of now) stales today alone,
-- while an import of last year's history stales every day since.
CREATE TABLE "journey_changes" (
	"account_id" uuid NOT NULL,
	"xid" xid8 DEFAULT pg_current_xact_id() NOT NULL,
	"from_at" timestamp with time zone NOT NULL,
	"noted_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "journey_changes_pk" PRIMARY KEY("account_id","xid")
);
--> statement-breakpoint
ALTER TABLE "journey_changes" ADD CONSTRAINT "journey_changes_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
CREATE INDEX "journey_changes_noted_idx" ON "journey_changes" USING btree ("account_id","noted_at");
--> statement-breakpoint
-- A day's credit under one model, level and look-back, in the account's timezone of the time.
-- seen_snapshot: the snapshot the journeys were read in; a change whose transaction it does not
-- see (still running then, or begun after) stales the day if it is before the day's end. The whole
-- snapshot, not its xmin alone: one long transaction elsewhere on the server would otherwise make
-- every change of every account since it began look unseen. computed_at: a row computed or checked more than an hour ago is not used
-- (and changes are pruned after a day), so a pruned change can never leave a row it staled in use.
CREATE TABLE "attribution_day_credits" (
	"account_id" uuid NOT NULL,
	"level" text NOT NULL,
	"model" text NOT NULL,
	"lookback_days" integer NOT NULL,
	"day" date NOT NULL,
	"timezone" text NOT NULL,
	"catalog_version" bigint NOT NULL,
	"seen_snapshot" pg_snapshot NOT NULL,
	"computed_at" timestamp with time zone NOT NULL,
	"credit" jsonb NOT NULL,
	CONSTRAINT "attribution_day_credits_pk" PRIMARY KEY("account_id","level","model","lookback_days","day")
);
--> statement-breakpoint
ALTER TABLE "attribution_day_credits" ADD CONSTRAINT "attribution_day_credits_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;
--> statement-breakpoint
SELECT ascribe_enforce_tenancy();
--> statement-breakpoint
-- One row per transaction and account: a statement merges its earliest instant into its
-- transaction's row (only that transaction ever writes it, so writers never wait on each other).
-- One transaction in 1,024 also drops its accounts' changes older than a day: no stored day credit
-- can need them any more (a day's row is used for an hour after it was computed or last checked),
-- and no two writers prune at once.
CREATE FUNCTION ascribe_note_journey_changes(changed uuid[], froms timestamptz[]) RETURNS void
  LANGUAGE plpgsql
  AS $fn$
DECLARE
  noted uuid[];
BEGIN
  WITH n AS (
    INSERT INTO journey_changes AS c (account_id, from_at)
    SELECT x.a, min(x.t) FROM unnest(changed, froms) AS x(a, t) GROUP BY 1 ORDER BY 1
    ON CONFLICT (account_id, xid) DO UPDATE SET from_at = least(c.from_at, excluded.from_at)
    RETURNING c.account_id)
  SELECT array_agg(account_id) INTO noted FROM n;
  IF noted IS NOT NULL AND pg_current_xact_id()::text::numeric % 1024 = 0 THEN
    DELETE FROM journey_changes c
    WHERE c.account_id = ANY (noted) AND c.noted_at < now() - interval '1 day';
  END IF;
END $fn$;
--> statement-breakpoint
-- Each statement's earliest instant per account: a touch's `occurred_at`, an event's
-- `event_datetime`, before and after an update. Rows deleted with their account (a cascade) leave
-- no change behind.
CREATE FUNCTION ascribe_note_journey_change() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
DECLARE
  changed uuid[];
  froms timestamptz[];
BEGIN
  IF TG_TABLE_NAME = 'touchpoints' THEN
    IF TG_OP = 'INSERT' THEN
      SELECT array_agg(x.a), array_agg(x.t) INTO changed, froms
      FROM (SELECT n.account_id AS a, min(n.occurred_at) AS t FROM new_rows n GROUP BY 1) x;
    ELSIF TG_OP = 'UPDATE' THEN
      SELECT array_agg(x.a), array_agg(x.t) INTO changed, froms
      FROM (SELECT n.account_id AS a, n.occurred_at AS t FROM new_rows n
            UNION ALL SELECT o.account_id, o.occurred_at FROM old_rows o) x;
    ELSE
      SELECT array_agg(x.a), array_agg(x.t) INTO changed, froms
      FROM (SELECT o.account_id AS a, min(o.occurred_at) AS t FROM old_rows o
            WHERE EXISTS (SELECT 1 FROM accounts ac WHERE ac.id = o.account_id) GROUP BY 1) x;
    END IF;
  ELSIF TG_OP = 'INSERT' THEN
    SELECT array_agg(x.a), array_agg(x.t) INTO changed, froms
    FROM (SELECT n.account_id AS a, min(n.event_datetime) AS t FROM new_rows n GROUP BY 1) x;
  ELSIF TG_OP = 'UPDATE' THEN
    SELECT array_agg(x.a), array_agg(x.t) INTO changed, froms
    FROM (SELECT n.account_id AS a, n.event_datetime AS t FROM new_rows n
          UNION ALL SELECT o.account_id, o.event_datetime FROM old_rows o) x;
  ELSE
    SELECT array_agg(x.a), array_agg(x.t) INTO changed, froms
    FROM (SELECT o.account_id AS a, min(o.event_datetime) AS t FROM old_rows o
          WHERE EXISTS (SELECT 1 FROM accounts ac WHERE ac.id = o.account_id) GROUP BY 1) x;
  END IF;
  IF changed IS NOT NULL THEN
    PERFORM ascribe_note_journey_changes(changed, froms);
  END IF;
  RETURN NULL;
END $fn$;
--> statement-breakpoint
CREATE TRIGGER touchpoints_journey_change_insert AFTER INSERT ON touchpoints
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_note_journey_change();
--> statement-breakpoint
CREATE TRIGGER touchpoints_journey_change_update AFTER UPDATE ON touchpoints
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_note_journey_change();
--> statement-breakpoint
CREATE TRIGGER touchpoints_journey_change_delete AFTER DELETE ON touchpoints
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_note_journey_change();
--> statement-breakpoint
CREATE TRIGGER events_journey_change_insert AFTER INSERT ON events
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_note_journey_change();
--> statement-breakpoint
CREATE TRIGGER events_journey_change_update AFTER UPDATE ON events
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_note_journey_change();
--> statement-breakpoint
CREATE TRIGGER events_journey_change_delete AFTER DELETE ON events
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_note_journey_change();
