CREATE TABLE "account_settings" (
	"account_id" uuid PRIMARY KEY NOT NULL,
	"sale_rule" jsonb,
	"webhook_secret_sealed" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "ad_rule_runs" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"rule_id" uuid NOT NULL,
	"ran_at" timestamp with time zone NOT NULL,
	"dry_run" boolean NOT NULL,
	"status" text NOT NULL,
	"actions" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"summary" text,
	CONSTRAINT "ad_rule_runs_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
CREATE TABLE "ad_rules" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"label" text NOT NULL,
	"rule_type" text NOT NULL,
	"platform" text,
	"campaign_id" text,
	"campaign_name" text,
	"enabled" boolean DEFAULT true NOT NULL,
	"dry_run" boolean DEFAULT true NOT NULL,
	"params" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"last_run_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "ad_rules_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
CREATE TABLE "ad_spend_daily" (
	"account_id" uuid NOT NULL,
	"platform" text NOT NULL,
	"ad_id" text NOT NULL,
	"spend_date" date NOT NULL,
	"spend" numeric(14, 2) NOT NULL,
	"clicks" integer DEFAULT 0 NOT NULL,
	"impressions" integer DEFAULT 0 NOT NULL,
	"reach" integer DEFAULT 0 NOT NULL,
	"currency" text,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "ad_spend_daily_account_id_platform_ad_id_spend_date_pk" PRIMARY KEY("account_id","platform","ad_id","spend_date")
);
--> statement-breakpoint
CREATE TABLE "ads" (
	"account_id" uuid NOT NULL,
	"platform" text NOT NULL,
	"ad_id" text NOT NULL,
	"ad_name" text NOT NULL,
	"adset_id" text,
	"adset_name" text,
	"campaign_id" text,
	"campaign_name" text,
	"is_excluded" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "ads_account_id_platform_ad_id_pk" PRIMARY KEY("account_id","platform","ad_id")
);
--> statement-breakpoint
CREATE TABLE "call_transcript_segments" (
	"account_id" uuid NOT NULL,
	"artifact_id" bigint NOT NULL,
	"idx" integer NOT NULL,
	"start_ms" integer NOT NULL,
	"end_ms" integer NOT NULL,
	"speaker_id" text,
	"speaker_label" text,
	"speaker_email" text,
	"text" text NOT NULL,
	"confidence" numeric(4, 3),
	CONSTRAINT "call_transcript_segments_account_id_artifact_id_idx_pk" PRIMARY KEY("account_id","artifact_id","idx")
);
--> statement-breakpoint
CREATE TABLE "calls" (
	"account_id" uuid NOT NULL,
	"artifact_id" bigint GENERATED ALWAYS AS IDENTITY (sequence name "calls_artifact_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"external_id" text NOT NULL,
	"starts_at" timestamp with time zone NOT NULL,
	"title" text,
	"duration_sec" integer,
	"call_analysis_id" text,
	"summary" text,
	"call_type" text,
	"is_qualified" boolean,
	"icp_fit_score" numeric(5, 2),
	"qualification_reasoning" text,
	"next_step_type" text,
	"next_step_summary" text,
	"next_step_proposed" text,
	"scorecard_total" numeric(6, 2),
	"rep_id" text,
	"markers" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"participant_emails" text[] DEFAULT '{}'::text[] NOT NULL,
	"audio_path" text,
	"audio_content_type" text,
	"video_path" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "calls_account_id_artifact_id_pk" PRIMARY KEY("account_id","artifact_id")
);
--> statement-breakpoint
CREATE TABLE "contacts" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"email" text,
	"phone" text,
	"first_name" text,
	"last_name" text,
	"name" text,
	"tags" text[] DEFAULT '{}'::text[] NOT NULL,
	"form_titles" text[] DEFAULT '{}'::text[] NOT NULL,
	"form_response" jsonb,
	"assigned_user_name" text,
	"value" numeric(14, 2),
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "contacts_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
CREATE TABLE "creative_requests" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"reason" text NOT NULL,
	"status" text NOT NULL,
	"requested_count" integer NOT NULL,
	"filled_count" integer DEFAULT 0 NOT NULL,
	"context" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"notified_at" timestamp with time zone,
	CONSTRAINT "creative_requests_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
CREATE TABLE "creatives" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"external_ref" text NOT NULL,
	"is_published" boolean DEFAULT false NOT NULL,
	"angle" text,
	"primary_text" text,
	"headline" text,
	"hook" text,
	"cta" text,
	"destination_url" text,
	"asset_url" text,
	"asset_kind" text,
	"variant_label" text,
	"visual_subtype" text,
	"funnel" text,
	"product" text,
	"audience" text,
	"video_script" text,
	"source" jsonb,
	"score" numeric(6, 2),
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "creatives_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
CREATE TABLE "customers" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"contact_id" uuid NOT NULL,
	"commission_status" text,
	"commission_expires_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "customers_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
CREATE TABLE "events" (
	"account_id" uuid NOT NULL,
	"id" text NOT NULL,
	"contact_id" uuid,
	"event_type" text NOT NULL,
	"event_subtype" text,
	"event_datetime" timestamp with time zone NOT NULL,
	"contact_email" text,
	"contact_name" text,
	"contact_phone" text,
	"value" numeric(14, 2),
	"amount" numeric(14, 2),
	"currency" text,
	"product_key" text,
	"product_name" text,
	"assigned_user_name" text,
	"is_paid" boolean,
	"payment_status" text,
	"booking_date" date,
	"booking_time" text,
	"utm_source" text,
	"utm_medium" text,
	"utm_campaign" text,
	"utm_content" text,
	"utm_term" text,
	"utm_campaign_id" text,
	"utm_adset_id" text,
	"utm_ad_id" text,
	"campaign_name" text,
	"calendar_name" text,
	"meta_ad_id" text,
	"is_baseline" boolean DEFAULT false NOT NULL,
	"cancelled_at" timestamp with time zone,
	"origin" text NOT NULL,
	"payload_hash" text,
	"utm_enriched" boolean DEFAULT false NOT NULL,
	"resolution" text DEFAULT 'unresolved' NOT NULL,
	"resolved_platform" text,
	"resolved_ad_id" text,
	"counted" boolean,
	"drop_reason" text,
	"group_key" text,
	"contact_seq" integer,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "events_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
CREATE TABLE "pixels" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"platform" text NOT NULL,
	"pixel_id" text NOT NULL,
	"name" text,
	"is_default" boolean DEFAULT false NOT NULL,
	"access_token_sealed" text,
	"routing" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "pixels_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
CREATE TABLE "purchases" (
	"account_id" uuid NOT NULL,
	"id" text NOT NULL,
	"contact_id" uuid,
	"purchase_date" timestamp with time zone NOT NULL,
	"product_key" text,
	"product_name" text,
	"contact_email" text,
	"contact_name" text,
	"amount" numeric(14, 2) NOT NULL,
	"currency" text,
	"commissionable" boolean DEFAULT false NOT NULL,
	"commission_rate" numeric(6, 4),
	"commission_amount" numeric(14, 2),
	"invoice_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "purchases_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
CREATE TABLE "reps" (
	"account_id" uuid NOT NULL,
	"id" text NOT NULL,
	"name" text NOT NULL,
	"email" text,
	CONSTRAINT "reps_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
CREATE TABLE "touchpoints" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"external_id" text,
	"contact_id" uuid,
	"visitor_id" text,
	"session_id" text,
	"kind" text NOT NULL,
	"event_type" text NOT NULL,
	"occurred_at" timestamp with time zone NOT NULL,
	"url" text,
	"referrer" text,
	"utm" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"ad_ids" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"click_ids" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"channel" text,
	"platform" text,
	"is_paid" boolean DEFAULT false NOT NULL,
	"value" numeric(14, 2),
	"currency" text,
	"product" text,
	"is_imported" boolean DEFAULT false NOT NULL,
	"event_id" text,
	"resolution" text DEFAULT 'unresolved' NOT NULL,
	"resolved_platform" text,
	"resolved_ad_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "touchpoints_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
CREATE TABLE "tracking_hosts" (
	"account_id" uuid NOT NULL,
	"host" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "tracking_hosts_account_id_host_pk" PRIMARY KEY("account_id","host")
);
--> statement-breakpoint
ALTER TABLE "account_settings" ADD CONSTRAINT "account_settings_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ad_rule_runs" ADD CONSTRAINT "ad_rule_runs_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ad_rule_runs" ADD CONSTRAINT "ad_rule_runs_account_id_rule_id_ad_rules_account_id_id_fk" FOREIGN KEY ("account_id","rule_id") REFERENCES "public"."ad_rules"("account_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ad_rules" ADD CONSTRAINT "ad_rules_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ad_spend_daily" ADD CONSTRAINT "ad_spend_daily_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ad_spend_daily" ADD CONSTRAINT "ad_spend_daily_account_id_platform_ad_id_ads_account_id_platform_ad_id_fk" FOREIGN KEY ("account_id","platform","ad_id") REFERENCES "public"."ads"("account_id","platform","ad_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "ads" ADD CONSTRAINT "ads_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "call_transcript_segments" ADD CONSTRAINT "call_transcript_segments_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "call_transcript_segments" ADD CONSTRAINT "call_transcript_segments_account_id_artifact_id_calls_account_id_artifact_id_fk" FOREIGN KEY ("account_id","artifact_id") REFERENCES "public"."calls"("account_id","artifact_id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "calls" ADD CONSTRAINT "calls_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contacts" ADD CONSTRAINT "contacts_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "creative_requests" ADD CONSTRAINT "creative_requests_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "creatives" ADD CONSTRAINT "creatives_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "customers" ADD CONSTRAINT "customers_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "customers" ADD CONSTRAINT "customers_account_id_contact_id_contacts_account_id_id_fk" FOREIGN KEY ("account_id","contact_id") REFERENCES "public"."contacts"("account_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "events" ADD CONSTRAINT "events_account_id_contact_id_contacts_account_id_id_fk" FOREIGN KEY ("account_id","contact_id") REFERENCES "public"."contacts"("account_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "pixels" ADD CONSTRAINT "pixels_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "purchases" ADD CONSTRAINT "purchases_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "purchases" ADD CONSTRAINT "purchases_account_id_contact_id_contacts_account_id_id_fk" FOREIGN KEY ("account_id","contact_id") REFERENCES "public"."contacts"("account_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "reps" ADD CONSTRAINT "reps_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "touchpoints" ADD CONSTRAINT "touchpoints_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "touchpoints" ADD CONSTRAINT "touchpoints_account_id_contact_id_contacts_account_id_id_fk" FOREIGN KEY ("account_id","contact_id") REFERENCES "public"."contacts"("account_id","id") ON DELETE no action ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "tracking_hosts" ADD CONSTRAINT "tracking_hosts_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "ad_rule_runs_rule_idx" ON "ad_rule_runs" USING btree ("account_id","rule_id","ran_at");--> statement-breakpoint
CREATE INDEX "ad_spend_daily_date_idx" ON "ad_spend_daily" USING btree ("account_id","spend_date");--> statement-breakpoint
CREATE INDEX "ads_name_idx" ON "ads" USING btree ("account_id",lower(btrim("ad_name")));--> statement-breakpoint
CREATE INDEX "ads_ad_id_idx" ON "ads" USING btree ("account_id","ad_id");--> statement-breakpoint
CREATE UNIQUE INDEX "calls_external_uq" ON "calls" USING btree ("account_id","external_id");--> statement-breakpoint
CREATE INDEX "calls_starts_idx" ON "calls" USING btree ("account_id","starts_at");--> statement-breakpoint
CREATE UNIQUE INDEX "contacts_email_uq" ON "contacts" USING btree ("account_id","email") WHERE "contacts"."email" is not null;--> statement-breakpoint
CREATE INDEX "contacts_phone_idx" ON "contacts" USING btree ("account_id","phone");--> statement-breakpoint
CREATE INDEX "creative_requests_status_idx" ON "creative_requests" USING btree ("account_id","status","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "creatives_external_ref_uq" ON "creatives" USING btree ("account_id","external_ref");--> statement-breakpoint
CREATE UNIQUE INDEX "customers_contact_uq" ON "customers" USING btree ("account_id","contact_id");--> statement-breakpoint
CREATE INDEX "events_datetime_idx" ON "events" USING btree ("account_id","event_datetime");--> statement-breakpoint
CREATE INDEX "events_type_datetime_idx" ON "events" USING btree ("account_id","event_type","event_datetime");--> statement-breakpoint
CREATE INDEX "events_contact_idx" ON "events" USING btree ("account_id","contact_id","event_datetime");--> statement-breakpoint
CREATE INDEX "events_ad_idx" ON "events" USING btree ("account_id","resolved_ad_id");--> statement-breakpoint
CREATE UNIQUE INDEX "pixels_platform_pixel_uq" ON "pixels" USING btree ("account_id","platform","pixel_id");--> statement-breakpoint
CREATE INDEX "purchases_date_idx" ON "purchases" USING btree ("account_id","purchase_date");--> statement-breakpoint
CREATE INDEX "purchases_contact_idx" ON "purchases" USING btree ("account_id","contact_id");--> statement-breakpoint
CREATE UNIQUE INDEX "touchpoints_external_uq" ON "touchpoints" USING btree ("account_id","external_id") WHERE "touchpoints"."external_id" is not null;--> statement-breakpoint
CREATE INDEX "touchpoints_occurred_idx" ON "touchpoints" USING btree ("account_id","occurred_at");--> statement-breakpoint
CREATE INDEX "touchpoints_contact_idx" ON "touchpoints" USING btree ("account_id","contact_id","occurred_at");--> statement-breakpoint
CREATE INDEX "touchpoints_visitor_idx" ON "touchpoints" USING btree ("account_id","visitor_id");--> statement-breakpoint
CREATE UNIQUE INDEX "tracking_hosts_host_uq" ON "tracking_hosts" USING btree ("host");