-- call_participants gets forced RLS and the tenant policy.
SELECT ascribe_enforce_tenancy();
--> statement-breakpoint
-- call_participants mirrors calls.participant_emails, one row per distinct (call, email), written
-- by the statement that writes the calls, in its transaction and under its tenant policy. An
-- update removes the pairs it no longer has and adds the new ones (an upsert that changes nothing
-- changes nothing here).
CREATE FUNCTION ascribe_call_participants_sync() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
BEGIN
  IF TG_OP = 'UPDATE' THEN
    DELETE FROM call_participants c
    USING (
      SELECT o.account_id, p.email, o.starts_at, o.artifact_id
      FROM old_rows o CROSS JOIN LATERAL unnest(o.participant_emails) AS p(email)
      EXCEPT
      SELECT n.account_id, p.email, n.starts_at, n.artifact_id
      FROM new_rows n CROSS JOIN LATERAL unnest(n.participant_emails) AS p(email)
    ) d
    WHERE c.account_id = d.account_id AND c.email = d.email AND c.starts_at = d.starts_at
      AND c.artifact_id = d.artifact_id;
  ELSIF TG_OP = 'DELETE' THEN
    DELETE FROM call_participants c
    USING (
      SELECT o.account_id, p.email, o.starts_at, o.artifact_id
      FROM old_rows o CROSS JOIN LATERAL unnest(o.participant_emails) AS p(email)
    ) d
    WHERE c.account_id = d.account_id AND c.email = d.email AND c.starts_at = d.starts_at
      AND c.artifact_id = d.artifact_id;
    RETURN NULL;
  END IF;
  INSERT INTO call_participants (account_id, email, starts_at, artifact_id)
  SELECT DISTINCT n.account_id, p.email, n.starts_at, n.artifact_id
  FROM new_rows n CROSS JOIN LATERAL unnest(n.participant_emails) AS p(email)
  WHERE p.email IS NOT NULL
  -- One global order: two writers never wait on each other in a cycle.
  ORDER BY 1, 2, 3, 4
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END $fn$;
--> statement-breakpoint
CREATE TRIGGER calls_participants_insert AFTER INSERT ON calls
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_call_participants_sync();
--> statement-breakpoint
CREATE TRIGGER calls_participants_update AFTER UPDATE ON calls
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_call_participants_sync();
--> statement-breakpoint
CREATE TRIGGER calls_participants_delete AFTER DELETE ON calls
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION ascribe_call_participants_sync();
--> statement-breakpoint
-- Backfill every account's calls, with the forced tenant policies lifted for these statements
-- inside the migration's transaction (as 0010).
ALTER TABLE calls NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE call_participants NO FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
INSERT INTO call_participants (account_id, email, starts_at, artifact_id)
SELECT DISTINCT c.account_id, p.email, c.starts_at, c.artifact_id
FROM calls c CROSS JOIN LATERAL unnest(c.participant_emails) AS p(email)
WHERE p.email IS NOT NULL
ON CONFLICT DO NOTHING;
--> statement-breakpoint
ALTER TABLE calls FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
ALTER TABLE call_participants FORCE ROW LEVEL SECURITY;
--> statement-breakpoint
-- A search (contacts, journeys) that matches few contacts still tests every contact of the account:
-- strpos over this index's entries (an index-only scan of the account's range) instead of a
-- sequential scan of every account's wide contact rows. Not a trigram index: under row-level
-- security PostgreSQL only uses an index for leakproof operators, and neither strpos nor ILIKE is.
CREATE INDEX contacts_search_idx ON contacts (account_id) INCLUDE (id, email, search_text);
