-- An import's contact maintenance run once per import, not once per batch (issue 20, "set-based
-- imports"). The statement triggers that keep contact_activity, contact_milestones and
-- customer_totals recompute each contact a statement touched; an import's file is sorted by time,
-- so one contact's events fall in several batches and it was recomputed at each of them (about 94
-- ms of PostgreSQL's 384 ms of CPU per 1,000 imported events, bench/README "Import"). An import's
-- batch transactions set app.defer_contact_maintenance: the same writes then only note their
-- contacts in contact_maintenance_backlog, committed with the batch, and the import drains the
-- backlog when its last batch is written (src/import/fold-backlog.ts). An import stopped before
-- that leaves the backlog to `ascribe serve`, which drains it every minute. Every other writer (a
-- request, a webhook, the demo) maintains at once, as before. Deletes always maintain at once.
CREATE TABLE "contact_maintenance_backlog" (
  "account_id" uuid NOT NULL REFERENCES "accounts"("id") ON DELETE CASCADE,
  "contact_id" uuid NOT NULL,
  CONSTRAINT "contact_maintenance_backlog_pk" PRIMARY KEY ("account_id", "contact_id")
);
--> statement-breakpoint
SELECT ascribe_enforce_tenancy();
--> statement-breakpoint
-- The contacts of the statement's rows, before and after. A noted contact is locked (DO UPDATE
-- … WHERE false writes nothing but locks the row): a drain that already took the row waits for
-- this batch to commit and then reads its rows; with DO NOTHING it could take the row, recompute
-- without this batch's uncommitted rows and leave them unmaintained.
CREATE FUNCTION ascribe_note_contact_maintenance() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
BEGIN
  IF current_setting('app.defer_contact_maintenance', true) IS DISTINCT FROM 'on' THEN
    RETURN NULL;
  END IF;
  IF TG_OP = 'INSERT' THEN
    INSERT INTO contact_maintenance_backlog AS b (account_id, contact_id)
    SELECT DISTINCT account_id, contact_id FROM new_rows WHERE contact_id IS NOT NULL
    -- One global order: two writers never wait on each other in a cycle.
    ORDER BY 1, 2
    ON CONFLICT (account_id, contact_id) DO UPDATE SET contact_id = excluded.contact_id WHERE false;
  ELSE
    INSERT INTO contact_maintenance_backlog AS b (account_id, contact_id)
    SELECT account_id, contact_id FROM new_rows WHERE contact_id IS NOT NULL
    UNION SELECT account_id, contact_id FROM old_rows WHERE contact_id IS NOT NULL
    ORDER BY 1, 2
    ON CONFLICT (account_id, contact_id) DO UPDATE SET contact_id = excluded.contact_id WHERE false;
  END IF;
  RETURN NULL;
END $fn$;
--> statement-breakpoint
-- Takes up to `chunk` of the account's noted contacts and brings their activity, milestones and
-- customer totals up to date from the tables (each refresh recomputes, so the order of the notes
-- and of other writers does not matter). True when it took a full chunk: there may be more.
CREATE FUNCTION ascribe_drain_contact_maintenance(account uuid, chunk integer) RETURNS boolean
  LANGUAGE plpgsql
  AS $fn$
DECLARE
  ids uuid[];
BEGIN
  WITH taken AS (
    DELETE FROM contact_maintenance_backlog b
    WHERE b.account_id = account AND b.contact_id IN (
      SELECT n.contact_id FROM contact_maintenance_backlog n
      WHERE n.account_id = account ORDER BY n.contact_id LIMIT chunk)
    RETURNING b.contact_id
  )
  SELECT array_agg(t.contact_id ORDER BY t.contact_id) INTO ids FROM taken t;
  IF ids IS NULL THEN
    RETURN false;
  END IF;
  PERFORM ascribe_refresh_contact_activity(account, ids, false);
  PERFORM ascribe_refresh_contact_milestones(account, ids);
  PERFORM ascribe_refresh_customer_totals(account, ids);
  RETURN cardinality(ids) >= chunk;
END $fn$;
--> statement-breakpoint
-- The accounts with noted contacts, for the schedule in `ascribe serve`; administration only.
-- Forced row-level security hides every account's rows from an owner that names none: as in 0030,
-- a policy only the owner gets, only while the function runs (0016's setting, app.rule_probe).
DO $$
BEGIN
  EXECUTE format(
    'CREATE POLICY maintenance_probe ON contact_maintenance_backlog FOR SELECT TO %I USING (current_setting(''app.rule_probe'', true) = ''on'')',
    current_user);
END $$;
--> statement-breakpoint
CREATE FUNCTION ascribe_contact_maintenance_accounts() RETURNS SETOF uuid
  LANGUAGE sql STABLE SECURITY DEFINER
  SET search_path = public, pg_temp
  SET app.rule_probe = 'on'
  AS $$ SELECT DISTINCT b.account_id FROM contact_maintenance_backlog b ORDER BY 1 $$;
--> statement-breakpoint
REVOKE EXECUTE ON FUNCTION ascribe_contact_maintenance_accounts() FROM PUBLIC;
--> statement-breakpoint
-- The gate is in the trigger functions, not in a WHEN clause: PostgreSQL prepares a trigger's WHEN
-- anew at every statement. With 12 statement triggers on one table, 5,000 one-row inserts took
-- 90–138 ms with no WHEN (each function called), 385–489 ms with a WHEN comparing the setting and
-- 642–806 ms with a WHEN calling a SQL function (which it inlines, parsing its body, each time);
-- the collect benchmark lost a quarter of its beacons/s to the latter.
--
-- The immediate maintenance's functions each begin with the gate: an insert or an update in a
-- deferring transaction returns at once (deletes never defer). The statement is spliced in after
-- each function's first BEGIN, so that their bodies (0028, 0029, 0042, 0044) stay where they are;
-- a later migration that replaces one of these functions must keep it
-- (test/import/deferred-maintenance.test.ts checks).
DO $do$
DECLARE
  f record;
  gated text;
BEGIN
  FOR f IN
    SELECT p.oid, pg_get_functiondef(p.oid) AS def FROM pg_proc p
    WHERE p.proname IN ('ascribe_events_milestones', 'ascribe_activity_trigger',
      'ascribe_touchpoints_activity', 'ascribe_customer_totals_trigger')
  LOOP
    gated := regexp_replace(f.def, E'\nBEGIN\n', E'\nBEGIN\n'
      || E'  IF TG_OP <> \'DELETE\' AND current_setting(\'app.defer_contact_maintenance\', true) = \'on\' THEN\n'
      || E'    RETURN NULL; -- noted instead (ascribe_note_contact_maintenance, migration 0046)\n'
      || E'  END IF;\n');
    IF gated = f.def THEN
      RAISE EXCEPTION 'no BEGIN line in %', f.oid::regprocedure;
    END IF;
    EXECUTE gated;
  END LOOP;
  -- Their deferred counterparts: every insert and update of the four tables, returning at once
  -- unless the transaction defers.
  FOR f IN SELECT unnest(ARRAY['events', 'touchpoints', 'purchases', 'customers']) AS relname LOOP
    EXECUTE format($t$CREATE TRIGGER %1$I AFTER INSERT ON %2$I REFERENCING NEW TABLE AS new_rows
      FOR EACH STATEMENT EXECUTE FUNCTION ascribe_note_contact_maintenance()$t$,
      f.relname || '_maintenance_noted_insert', f.relname);
    EXECUTE format($t$CREATE TRIGGER %1$I AFTER UPDATE ON %2$I REFERENCING OLD TABLE AS old_rows
      NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION ascribe_note_contact_maintenance()$t$,
      f.relname || '_maintenance_noted_update', f.relname);
  END LOOP;
END $do$;
