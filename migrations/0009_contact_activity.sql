CREATE TABLE "contact_activity" (
	"account_id" uuid NOT NULL,
	"contact_id" uuid NOT NULL,
	"first_event_at" timestamp with time zone,
	"last_event_at" timestamp with time zone,
	"first_seen_at" timestamp with time zone,
	"last_seen_at" timestamp with time zone,
	CONSTRAINT "contact_activity_account_id_contact_id_pk" PRIMARY KEY("account_id","contact_id")
);
--> statement-breakpoint
ALTER TABLE "contact_activity" ADD CONSTRAINT "contact_activity_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "contact_activity" ADD CONSTRAINT "contact_activity_account_id_contact_id_contacts_account_id_id_fk" FOREIGN KEY ("account_id","contact_id") REFERENCES "public"."contacts"("account_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "contact_activity_event_idx" ON "contact_activity" USING btree ("account_id","last_event_at" desc nulls last,"contact_id" desc);--> statement-breakpoint
CREATE INDEX "contact_activity_seen_idx" ON "contact_activity" USING btree ("account_id","last_seen_at" desc,"contact_id" desc) WHERE "contact_activity"."last_seen_at" is not null;--> statement-breakpoint
CREATE INDEX "calls_participants_idx" ON "calls" USING gin ("participant_emails");