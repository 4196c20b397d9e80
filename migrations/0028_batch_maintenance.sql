-- Per-batch maintenance that costs what the batch wrote, not what its contacts already have
-- (issue 20, "set-based imports"; measured with bench/import.ts).
--
-- Contact activity on INSERT: rows that appear can only widen a contact's bounds, so the new rows'
-- own earliest and latest instants, grouped by contact from the transition table, are merged into
-- the stored bounds. The refresh of 0010 probed events and touchpoints four times per contact for
-- the same answer (and, on a table the planner had no statistics for yet, scanned all of the
-- account's events once per contact). Two inserting transactions still cannot undo each other's
-- bounds: each only ever takes the least and the greatest under the row's lock. Deletes and
-- updates, which may narrow a bound, still recompute from the tables (0010).
CREATE OR REPLACE FUNCTION ascribe_activity_trigger() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
DECLARE
  touched record;
BEGIN
  IF TG_OP = 'INSERT' THEN
    EXECUTE format($q$
      INSERT INTO contact_activity AS a (account_id, contact_id, first_event_at, last_event_at,
        first_seen_at, last_seen_at)
      SELECT n.account_id, n.contact_id, %1$s, %2$s, min(n.%3$I), max(n.%3$I)
      FROM new_rows n
      WHERE n.contact_id IS NOT NULL
      GROUP BY n.account_id, n.contact_id
      -- One global order: two writers never wait on each other in a cycle.
      ORDER BY n.account_id, n.contact_id
      ON CONFLICT (account_id, contact_id) DO UPDATE SET
        first_event_at = least(a.first_event_at, excluded.first_event_at),
        last_event_at = greatest(a.last_event_at, excluded.last_event_at),
        first_seen_at = least(a.first_seen_at, excluded.first_seen_at),
        last_seen_at = greatest(a.last_seen_at, excluded.last_seen_at)
      WHERE (a.first_event_at, a.last_event_at, a.first_seen_at, a.last_seen_at)
        IS DISTINCT FROM (least(a.first_event_at, excluded.first_event_at),
          greatest(a.last_event_at, excluded.last_event_at), least(a.first_seen_at, excluded.first_seen_at),
          greatest(a.last_seen_at, excluded.last_seen_at)) $q$,
      -- events set the event bounds too; touchpoints only the seen ones
      CASE WHEN TG_ARGV[0] = 'event_datetime' THEN 'min(n.event_datetime)' ELSE 'NULL::timestamptz' END,
      CASE WHEN TG_ARGV[0] = 'event_datetime' THEN 'max(n.event_datetime)' ELSE 'NULL::timestamptz' END,
      TG_ARGV[0]);
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
-- The ad of record's refresh (0006) bounded in time: a touch at `since` can only change the events
-- of its contact at or after it (the last ad touch at or before an event, a sale's touches in the
-- 365 days up to it), so only those are recomputed, one index range of events_contact_idx per
-- contact. A batch's touches come after what its contacts had stored (an import in time order, a
-- beacon), so they usually recompute nothing instead of every stored event of every contact.
CREATE FUNCTION ascribe_refresh_ad_of_record_since(account uuid, contact_ids uuid[], since timestamptz[])
  RETURNS void
  LANGUAGE plpgsql
  AS $fn$
BEGIN
  EXECUTE format($q$
  UPDATE events e
  SET record_platform = r.platform, record_ad_id = r.ad_id, first_touch_ad = c.first_touch_ad,
      assist_ads = c.assist_ads
  FROM (
    SELECT x.account_id, x.id, x.contact_id, x.event_type, x.event_datetime, x.resolved_platform,
           x.resolved_ad_id,
           CASE WHEN x.resolved_ad_id IS NOT NULL THEN x.resolved_platform ELSE l.platform END AS platform,
           coalesce(x.resolved_ad_id, l.ad_id) AS ad_id
    FROM unnest(%2$L::uuid[], %3$L::timestamptz[]) AS s(contact_id, since)
    JOIN events x ON x.account_id = %1$L AND x.contact_id = s.contact_id AND x.event_datetime >= s.since
    LEFT JOIN LATERAL ascribe_last_ad_touch(x.account_id, x.contact_id, x.event_datetime) l
      ON x.resolved_ad_id IS NULL
    WHERE x.resolved_ad_id IS NULL OR x.event_type IN ('sale', 'payment')
  ) r
  CROSS JOIN LATERAL ascribe_sale_touch_credit(r.account_id, r.contact_id, r.id, r.event_type,
    r.event_datetime, r.resolved_platform, r.resolved_ad_id, r.platform || '/' || r.ad_id) c
  WHERE e.account_id = r.account_id AND e.id = r.id
    AND (e.record_platform, e.record_ad_id, e.first_touch_ad, e.assist_ads)
        IS DISTINCT FROM (r.platform, r.ad_id, c.first_touch_ad, c.assist_ads)
  $q$, account, contact_ids, since);
END $fn$;
--> statement-breakpoint
-- The touchpoints' trigger of 0006 with the bound: per contact, the earliest instant of an ad touch
-- that appeared, went or moved (before and after, for a move).
CREATE OR REPLACE FUNCTION ascribe_touchpoints_ad_of_record() RETURNS trigger
  LANGUAGE plpgsql
  AS $fn$
DECLARE
  touched record;
BEGIN
  IF TG_OP = 'INSERT' THEN
    FOR touched IN
      SELECT account_id, array_agg(contact_id ORDER BY contact_id) AS contacts,
             array_agg(since ORDER BY contact_id) AS since
      FROM (SELECT account_id, contact_id, min(occurred_at) AS since FROM new_rows
            WHERE contact_id IS NOT NULL AND resolved_ad_id IS NOT NULL
            GROUP BY account_id, contact_id) t
      GROUP BY account_id
    LOOP
      PERFORM ascribe_refresh_ad_of_record_since(touched.account_id, touched.contacts, touched.since);
    END LOOP;
  ELSIF TG_OP = 'DELETE' THEN
    FOR touched IN
      SELECT account_id, array_agg(contact_id ORDER BY contact_id) AS contacts,
             array_agg(since ORDER BY contact_id) AS since
      FROM (SELECT account_id, contact_id, min(occurred_at) AS since FROM old_rows
            WHERE contact_id IS NOT NULL AND resolved_ad_id IS NOT NULL
            GROUP BY account_id, contact_id) t
      GROUP BY account_id
    LOOP
      PERFORM ascribe_refresh_ad_of_record_since(touched.account_id, touched.contacts, touched.since);
    END LOOP;
  ELSE
    FOR touched IN
      SELECT account_id, array_agg(contact_id ORDER BY contact_id) AS contacts,
             array_agg(since ORDER BY contact_id) AS since
      FROM (
        SELECT moved.account_id, moved.contact_id, min(moved.at) AS since
        FROM new_rows n
        JOIN old_rows o ON o.account_id = n.account_id AND o.id = n.id
        CROSS JOIN LATERAL (VALUES (n.account_id, n.contact_id, n.occurred_at, n.resolved_ad_id),
                                   (o.account_id, o.contact_id, o.occurred_at, o.resolved_ad_id))
          AS moved(account_id, contact_id, at, ad_id)
        WHERE (n.contact_id, n.resolved_platform, n.resolved_ad_id, n.occurred_at)
              IS DISTINCT FROM (o.contact_id, o.resolved_platform, o.resolved_ad_id, o.occurred_at)
          AND (n.resolved_ad_id IS NOT NULL OR o.resolved_ad_id IS NOT NULL)
          AND moved.contact_id IS NOT NULL
        GROUP BY moved.account_id, moved.contact_id
      ) t
      GROUP BY account_id
    LOOP
      PERFORM ascribe_refresh_ad_of_record_since(touched.account_id, touched.contacts, touched.since);
    END LOOP;
  END IF;
  RETURN NULL;
END $fn$;
