-- Issue 22 (docs/attribution.md, "Speed"): GET /attribution/models reads a contact's ad touches —
-- its sales' journeys, and every touched contact's path for the Markov null paths — and the
-- columns it needs of each touch (its ad, whether it is a conversion and which event) now sit in
-- the index itself, so those reads are index-only instead of one heap page per touch. Same keys and
-- same name as before: the ad of record's and first touch's probes (migration 0006) keep their
-- plans; the entries of ad touches only are wider.
DROP INDEX "touchpoints_ad_touch_idx";--> statement-breakpoint
CREATE INDEX "touchpoints_ad_touch_idx" ON "touchpoints" USING btree ("account_id","contact_id","occurred_at","id")
  INCLUDE ("resolved_platform","resolved_ad_id","kind","event_id") WHERE "touchpoints"."resolved_ad_id" is not null;--> statement-breakpoint
-- A conversion whose source was inherited (utm_enriched) is no touch of its own: the models ask it
-- of each conversion touch. Without an index PostgreSQL answered by reading every event of every
-- account once per request (a hashed subplan over a sequential scan); enriched events are few.
CREATE INDEX "events_utm_enriched_idx" ON "events" USING btree ("account_id","id") WHERE "events"."utm_enriched";
