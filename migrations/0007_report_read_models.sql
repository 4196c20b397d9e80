CREATE TABLE "contact_milestones" (
	"account_id" uuid NOT NULL,
	"contact_id" uuid NOT NULL,
	"first_lead_at" timestamp with time zone,
	"lead_source" text,
	"lead_campaign" text,
	"application_at" timestamp with time zone,
	"booking_at" timestamp with time zone,
	"show_at" timestamp with time zone,
	"show_day" date,
	"sale_at" timestamp with time zone,
	"sale_product_key" text,
	"sale_product_name" text,
	"stage" integer,
	"lead_to_application" double precision,
	"application_to_booking" double precision,
	"booking_to_show" double precision,
	"show_to_sale" double precision,
	"first_sale_at" timestamp with time zone,
	"cycle_started_at" timestamp with time zone,
	"last_application_at" timestamp with time zone,
	"last_booking_at" timestamp with time zone,
	CONSTRAINT "contact_milestones_account_id_contact_id_pk" PRIMARY KEY("account_id","contact_id")
);
--> statement-breakpoint
CREATE TABLE "touchpoint_rollup_daily" (
	"account_id" uuid NOT NULL,
	"day" date NOT NULL,
	"kind" text NOT NULL,
	"platform" text NOT NULL,
	"ad_id" text NOT NULL,
	"source" text NOT NULL,
	"campaign" text NOT NULL,
	"touchpoints" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "touchpoint_rollup_daily_account_id_day_kind_platform_ad_id_source_campaign_pk" PRIMARY KEY("account_id","day","kind","platform","ad_id","source","campaign")
);
--> statement-breakpoint
CREATE TABLE "touchpoint_rollup_delta" (
	"account_id" uuid NOT NULL,
	"id" bigint GENERATED ALWAYS AS IDENTITY (sequence name "touchpoint_rollup_delta_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"day" date NOT NULL,
	"kind" text NOT NULL,
	"platform" text NOT NULL,
	"ad_id" text NOT NULL,
	"source" text NOT NULL,
	"campaign" text NOT NULL,
	"touchpoints" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "touchpoint_rollup_delta_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
CREATE TABLE "web_session_daily" (
	"account_id" uuid NOT NULL,
	"day" date NOT NULL,
	"session_key" text NOT NULL,
	"touchpoints" integer DEFAULT 0 NOT NULL,
	"with_id" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "web_session_daily_account_id_day_session_key_pk" PRIMARY KEY("account_id","day","session_key")
);
--> statement-breakpoint
CREATE TABLE "web_session_delta" (
	"account_id" uuid NOT NULL,
	"id" bigint GENERATED ALWAYS AS IDENTITY (sequence name "web_session_delta_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"day" date NOT NULL,
	"session_key" text NOT NULL,
	"touchpoints" integer DEFAULT 0 NOT NULL,
	"with_id" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "web_session_delta_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
DROP INDEX "events_counted_idx";--> statement-breakpoint
DROP INDEX "events_booking_date_idx";--> statement-breakpoint
ALTER TABLE "report_rollup_daily" ADD COLUMN "cancelled_meetings" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "report_rollup_daily" ADD COLUMN "events" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "report_rollup_daily" ADD COLUMN "signal_events" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "report_rollup_daily" ADD COLUMN "exact_events" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "report_rollup_daily" ADD COLUMN "by_name_events" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "report_rollup_daily" ADD COLUMN "unresolved_events" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "report_rollup_daily" ADD COLUMN "leads_without_utm" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "report_rollup_daily" ADD COLUMN "web_sessions" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "report_rollup_daily" ADD COLUMN "web_sessions_with_id" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "report_rollup_delta" ADD COLUMN "cancelled_meetings" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "report_rollup_delta" ADD COLUMN "events" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "report_rollup_delta" ADD COLUMN "signal_events" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "report_rollup_delta" ADD COLUMN "exact_events" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "report_rollup_delta" ADD COLUMN "by_name_events" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "report_rollup_delta" ADD COLUMN "unresolved_events" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "report_rollup_delta" ADD COLUMN "leads_without_utm" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "report_rollup_delta" ADD COLUMN "web_sessions" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "report_rollup_delta" ADD COLUMN "web_sessions_with_id" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "contact_milestones" ADD CONSTRAINT "contact_milestones_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "touchpoint_rollup_daily" ADD CONSTRAINT "touchpoint_rollup_daily_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "touchpoint_rollup_delta" ADD CONSTRAINT "touchpoint_rollup_delta_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "web_session_daily" ADD CONSTRAINT "web_session_daily_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "web_session_delta" ADD CONSTRAINT "web_session_delta_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "contact_milestones_sale_idx" ON "contact_milestones" USING btree ("account_id","first_sale_at");--> statement-breakpoint
CREATE INDEX "contact_milestones_application_idx" ON "contact_milestones" USING btree ("account_id","last_application_at","last_booking_at");--> statement-breakpoint
CREATE INDEX "touchpoints_web_idx" ON "touchpoints" USING btree ("account_id","occurred_at") WHERE "touchpoints"."kind" = 'web';