-- The new table (contact_activity) gets forced RLS and the tenant policy.
SELECT ascribe_enforce_tenancy();
--> statement-breakpoint
-- Recomputes the activity of some contacts (all of the account's when contact_ids is NULL) from
-- their events and touchpoints: four index probes per contact (events_contact_idx,
-- touchpoints_contact_idx). With `merge`, a stored bound is only ever widened: an insert cannot
-- narrow one, and two transactions inserting for one contact at once must not undo each other's
-- (each computes from its own snapshot). A delete or an update may narrow it, so it overwrites.
CREATE FUNCTION ascribe_refresh_contact_activity(account uuid, contact_ids uuid[], merge boolean)
  RETURNS void
  LANGUAGE plpgsql
  AS $fn$
BEGIN
  EXECUTE format($q$
  WITH touched AS (%s),
  computed AS (
    SELECT t.contact_id,
      (SELECT min(e.event_datetime) FROM events e WHERE e.account_id = %L AND e.contact_id = t.contact_id)
        AS first_event_at,
      (SELECT max(e.event_datetime) FROM events e WHERE e.account_id = %L AND e.contact_id = t.contact_id)
        AS last_event_at,
      (SELECT min(p.occurred_at) FROM touchpoints p WHERE p.account_id = %L AND p.contact_id = t.contact_id)
        AS first_touch_at,
      (SELECT max(p.occurred_at) FROM touchpoints p WHERE p.account_id = %L AND p.contact_id = t.contact_id)
        AS last_touch_at
    FROM touched t
    -- A contact deleted by the statement has no row to keep (the foreign key cascades).
    JOIN contacts c ON c.account_id = %L AND c.id = t.contact_id
  )
  INSERT INTO contact_activity AS a (account_id, contact_id, first_event_at, last_event_at,
    first_seen_at, last_seen_at)
  SELECT %L, r.contact_id, r.first_event_at, r.last_event_at,
    least(r.first_event_at, r.first_touch_at), greatest(r.last_event_at, r.last_touch_at)
  FROM computed r
  -- One global order: two writers never wait on each other in a cycle.
  ORDER BY r.contact_id
  ON CONFLICT (account_id, contact_id) DO UPDATE SET %s
  $q$,
  CASE WHEN contact_ids IS NULL
    THEN format('SELECT id AS contact_id FROM contacts WHERE account_id = %L', account)
    ELSE format('SELECT DISTINCT c AS contact_id FROM unnest(%L::uuid[]) AS c WHERE c IS NOT NULL', contact_ids)
  END,
  account, account, account, account, account, account,
  CASE WHEN merge THEN $u$
    first_event_at = least(a.first_event_at, excluded.first_event_at),
    last_event_at = greatest(a.last_event_at, excluded.last_event_at),
    first_seen_at = least(a.first_seen_at, excluded.first_seen_at),
    last_seen_at = greatest(a.last_seen_at, excluded.last_seen_at)
  WHERE (a.first_event_at, a.last_event_at, a.first_seen_at, a.last_seen_at)
    IS DISTINCT FROM (least(a.first_event_at, excluded.first_event_at),
      greatest(a.last_event_at, excluded.last_event_at), least(a.first_seen_at, excluded.first_seen_at),
      greatest(a.last_seen_at, excluded.last_seen_at)) $u$
  ELSE $u$
    first_event_at = excluded.first_event_at, last_event_at = excluded.last_event_at,
    first_seen_at = excluded.first_seen_at, last_seen_at = excluded.last_seen_at
  WHERE (a.first_event_at, a.last_event_at, a.first_seen_at, a.last_seen_at)
    IS DISTINCT FROM (excluded.first_event_at, excluded.last_event_at, excluded.first_seen_at,
      excluded.last_seen_at) $u$
  END);
END $fn$;
--> statement-breakpoint
-- Statement-level, on events and on touchpoints alike (TG_ARGV[0] names the instant column): one
-- refresh per statement for the contacts it touched — for an update, only rows whose contact or
-- instant changed, before and after (a row that moved to another contact changes both).
CREATE FUNCTION ascribe_activity_trigger() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
DECLARE
  touched record;
BEGIN
  IF TG_OP = 'INSERT' THEN
    FOR touched IN
      SELECT account_id, array_agg(DISTINCT contact_id) AS contacts FROM new_rows
      WHERE contact_id IS NOT NULL GROUP BY account_id
    LOOP
      PERFORM ascribe_refresh_contact_activity(touched.account_id, touched.contacts, true);
    END LOOP;
  ELSIF TG_OP = 'DELETE' THEN
    FOR touched IN
      SELECT account_id, array_agg(DISTINCT contact_id) AS contacts FROM old_rows
      WHERE contact_id IS NOT NULL GROUP BY account_id
    LOOP
      PERFORM ascribe_refresh_contact_activity(touched.account_id, touched.contacts, false);
    END LOOP;
  ELSE
    FOR touched IN EXECUTE format($q$
      SELECT moved.account_id, array_agg(DISTINCT moved.contact_id) AS contacts
      FROM new_rows n
      JOIN old_rows o ON o.account_id = n.account_id AND o.id = n.id
      CROSS JOIN LATERAL (VALUES (n.account_id, n.contact_id), (o.account_id, o.contact_id))
        AS moved(account_id, contact_id)
      WHERE (n.contact_id, n.%1$I) IS DISTINCT FROM (o.contact_id, o.%1$I)
        AND moved.contact_id IS NOT NULL
      GROUP BY moved.account_id $q$, TG_ARGV[0])
    LOOP
      PERFORM ascribe_refresh_contact_activity(touched.account_id, touched.contacts, false);
    END LOOP;
  END IF;
  RETURN NULL;
END $fn$;
--> statement-breakpoint
CREATE TRIGGER events_activity_insert AFTER INSERT ON events
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_activity_trigger('event_datetime');
--> statement-breakpoint
CREATE TRIGGER events_activity_update AFTER UPDATE ON events
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_activity_trigger('event_datetime');
--> statement-breakpoint
CREATE TRIGGER events_activity_delete AFTER DELETE ON events
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_activity_trigger('event_datetime');
--> statement-breakpoint
CREATE TRIGGER touchpoints_activity_insert AFTER INSERT ON touchpoints
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_activity_trigger('occurred_at');
--> statement-breakpoint
CREATE TRIGGER touchpoints_activity_update AFTER UPDATE ON touchpoints
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_activity_trigger('occurred_at');
--> statement-breakpoint
CREATE TRIGGER touchpoints_activity_delete AFTER DELETE ON touchpoints
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_activity_trigger('occurred_at');
--> statement-breakpoint
-- Every contact has its row from the start (a contact of a purchase only is listed too).
CREATE FUNCTION ascribe_contacts_activity() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
BEGIN
  INSERT INTO contact_activity (account_id, contact_id)
  SELECT account_id, id FROM new_rows ORDER BY account_id, id
  ON CONFLICT (account_id, contact_id) DO NOTHING;
  RETURN NULL;
END $fn$;
--> statement-breakpoint
CREATE TRIGGER contacts_activity_insert AFTER INSERT ON contacts
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_contacts_activity();
--> statement-breakpoint
-- Backfill: every account's contacts, with the forced tenant policies lifted for these statements
-- inside the migration's transaction (0006).
ALTER TABLE accounts NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE contacts NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE events NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE touchpoints NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE contact_activity NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
SELECT ascribe_refresh_contact_activity(id, NULL, false) FROM accounts;
--> statement-breakpoint
ALTER TABLE accounts FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE contacts FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE events FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE touchpoints FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE contact_activity FORCE ROW LEVEL SECURITY;
