CREATE TABLE "report_rollup_daily" (
	"account_id" uuid NOT NULL,
	"dim" text NOT NULL,
	"day" date NOT NULL,
	"key" text NOT NULL,
	"leads" integer DEFAULT 0 NOT NULL,
	"applications" integer DEFAULT 0 NOT NULL,
	"bookings" integer DEFAULT 0 NOT NULL,
	"no_shows" integer DEFAULT 0 NOT NULL,
	"cancels" integer DEFAULT 0 NOT NULL,
	"cancelled_bookings" integer DEFAULT 0 NOT NULL,
	"sales_lost" integer DEFAULT 0 NOT NULL,
	"sales" integer DEFAULT 0 NOT NULL,
	"revenue" numeric(14, 2) DEFAULT 0 NOT NULL,
	"refunds" numeric(14, 2) DEFAULT 0 NOT NULL,
	"disputes" numeric(14, 2) DEFAULT 0 NOT NULL,
	"meetings" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "report_rollup_daily_account_id_dim_day_key_pk" PRIMARY KEY("account_id","dim","day","key")
);
--> statement-breakpoint
CREATE TABLE "report_rollup_delta" (
	"account_id" uuid NOT NULL,
	"id" bigint GENERATED ALWAYS AS IDENTITY (sequence name "report_rollup_delta_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"dim" text NOT NULL,
	"day" date NOT NULL,
	"key" text NOT NULL,
	"leads" integer DEFAULT 0 NOT NULL,
	"applications" integer DEFAULT 0 NOT NULL,
	"bookings" integer DEFAULT 0 NOT NULL,
	"no_shows" integer DEFAULT 0 NOT NULL,
	"cancels" integer DEFAULT 0 NOT NULL,
	"cancelled_bookings" integer DEFAULT 0 NOT NULL,
	"sales_lost" integer DEFAULT 0 NOT NULL,
	"sales" integer DEFAULT 0 NOT NULL,
	"revenue" numeric(14, 2) DEFAULT 0 NOT NULL,
	"refunds" numeric(14, 2) DEFAULT 0 NOT NULL,
	"disputes" numeric(14, 2) DEFAULT 0 NOT NULL,
	"meetings" integer DEFAULT 0 NOT NULL,
	CONSTRAINT "report_rollup_delta_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "record_platform" text;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "record_ad_id" text;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "first_touch_ad" text;--> statement-breakpoint
ALTER TABLE "events" ADD COLUMN "assist_ads" text[];--> statement-breakpoint
ALTER TABLE "report_rollup_daily" ADD CONSTRAINT "report_rollup_daily_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "report_rollup_delta" ADD CONSTRAINT "report_rollup_delta_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "events_counted_idx" ON "events" USING btree ("account_id","event_datetime") WHERE "events"."counted";--> statement-breakpoint
CREATE INDEX "events_booking_date_idx" ON "events" USING btree ("account_id","booking_date") WHERE "events"."event_type" = 'booking';--> statement-breakpoint
CREATE INDEX "touchpoints_ad_touch_idx" ON "touchpoints" USING btree ("account_id","contact_id","occurred_at") WHERE "touchpoints"."resolved_ad_id" is not null;