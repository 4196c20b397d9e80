DROP INDEX "touchpoints_contact_idx";--> statement-breakpoint
DROP INDEX "touchpoints_ad_touch_idx";--> statement-breakpoint
CREATE INDEX "touchpoints_contact_idx" ON "touchpoints" USING btree ("account_id","contact_id","occurred_at","id");--> statement-breakpoint
CREATE INDEX "touchpoints_ad_touch_idx" ON "touchpoints" USING btree ("account_id","contact_id","occurred_at","id") WHERE "touchpoints"."resolved_ad_id" is not null;