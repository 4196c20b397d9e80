CREATE TABLE "contact_milestones" (
	"account_id" uuid NOT NULL,
	"contact_id" uuid NOT NULL,
	"first_lead_at" timestamp with time zone,
	"lead_source" text,
	"lead_campaign" text,
	"application_at" timestamp with time zone,
	"booking_at" timestamp with time zone,
	"meeting_ats" timestamp with time zone[],
	"meeting_days" date[],
	"no_shows" integer DEFAULT 0 NOT NULL,
	"sale_at" timestamp with time zone,
	"sale_product_key" text,
	"sale_product_name" text,
	"first_sale_at" timestamp with time zone,
	"cycle_started_at" timestamp with time zone,
	"last_application_at" timestamp with time zone,
	"last_booking_at" timestamp with time zone,
	CONSTRAINT "contact_milestones_account_id_contact_id_pk" PRIMARY KEY("account_id","contact_id")
);
--> statement-breakpoint
DROP INDEX "events_counted_idx";--> statement-breakpoint
ALTER TABLE "report_rollup_daily" ADD COLUMN "cancelled_meetings" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "report_rollup_delta" ADD COLUMN "cancelled_meetings" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "contact_milestones" ADD CONSTRAINT "contact_milestones_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "contact_milestones_lead_idx" ON "contact_milestones" USING btree ("account_id","first_lead_at");--> statement-breakpoint
CREATE INDEX "contact_milestones_sale_idx" ON "contact_milestones" USING btree ("account_id","first_sale_at");--> statement-breakpoint
CREATE INDEX "contact_milestones_application_idx" ON "contact_milestones" USING btree ("account_id","last_application_at","last_booking_at");