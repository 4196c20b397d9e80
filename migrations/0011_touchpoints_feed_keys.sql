DROP INDEX "touchpoints_occurred_idx";--> statement-breakpoint
DROP INDEX "touchpoints_web_idx";--> statement-breakpoint
CREATE INDEX "touchpoints_occurred_idx" ON "touchpoints" USING btree ("account_id","occurred_at","id");--> statement-breakpoint
CREATE INDEX "touchpoints_web_idx" ON "touchpoints" USING btree ("account_id","occurred_at","id") WHERE "touchpoints"."kind" = 'web';