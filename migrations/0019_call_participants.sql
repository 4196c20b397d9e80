CREATE TABLE "call_participants" (
	"account_id" uuid NOT NULL,
	"email" text NOT NULL,
	"starts_at" timestamp with time zone NOT NULL,
	"artifact_id" bigint NOT NULL,
	CONSTRAINT "call_participants_account_id_email_starts_at_artifact_id_pk" PRIMARY KEY("account_id","email","starts_at","artifact_id")
);
--> statement-breakpoint
DROP INDEX "calls_participants_idx";--> statement-breakpoint
ALTER TABLE "call_participants" ADD CONSTRAINT "call_participants_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "calls_analyzed_idx" ON "calls" USING btree ("account_id","starts_at" desc,"artifact_id" desc) WHERE "calls"."call_analysis_id" is not null;