ALTER TABLE "report_rollup_daily" ADD COLUMN "web_sessions" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "report_rollup_daily" ADD COLUMN "web_sessions_with_id" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "report_rollup_delta" ADD COLUMN "web_sessions" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "report_rollup_delta" ADD COLUMN "web_sessions_with_id" integer DEFAULT 0 NOT NULL;