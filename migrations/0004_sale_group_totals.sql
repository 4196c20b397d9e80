ALTER TABLE "events" ADD COLUMN "group_revenue" numeric(14, 2);--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "group_refunds" numeric(14, 2);--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "group_disputes" numeric(14, 2);