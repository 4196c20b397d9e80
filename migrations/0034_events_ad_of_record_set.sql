-- The ad of record of a batch of events, set-based (issue 20, item 4: per-batch maintenance
-- instead of per-row triggers). The BEFORE ROW trigger of 0006/0029 ran a PL/pgSQL call and up to
-- two queries for every event written. Now:
--
-- 1. The events' batch insert (src/queries/upsert-event.ts) computes the same columns in its own
--    statement — the same functions, ascribe_last_ad_touch and ascribe_sale_touch_credit, joined
--    laterally — and says so for that statement with the transaction-local setting
--    `ascribe.ad_of_record_in_statement` = 'on'; the insert trigger stands aside then. Any other
--    INSERT (the setting unset or 'off') still gets the trigger, unchanged.
-- 2. An UPDATE calls the function only when something it depends on changed. Its first test
--    returned NEW untouched otherwise; as a WHEN clause that test costs no function call, and the
--    batch's sale recount and the touchpoints' refresh of the ad of record (which set other
--    columns of events) no longer call it once per row.
DROP TRIGGER events_ad_of_record ON events;
--> statement-breakpoint
CREATE TRIGGER events_ad_of_record_insert BEFORE INSERT ON events
  FOR EACH ROW
  WHEN (current_setting('ascribe.ad_of_record_in_statement', true) IS DISTINCT FROM 'on')
  EXECUTE FUNCTION ascribe_events_ad_of_record();
--> statement-breakpoint
CREATE TRIGGER events_ad_of_record_update BEFORE UPDATE ON events
  FOR EACH ROW
  WHEN (NEW.resolved_platform IS DISTINCT FROM OLD.resolved_platform
     OR NEW.resolved_ad_id IS DISTINCT FROM OLD.resolved_ad_id
     OR NEW.contact_id IS DISTINCT FROM OLD.contact_id
     OR NEW.event_datetime IS DISTINCT FROM OLD.event_datetime
     OR NEW.event_type IS DISTINCT FROM OLD.event_type)
  EXECUTE FUNCTION ascribe_events_ad_of_record();
