CREATE TABLE "beacon_receipts" (
	"account_id" uuid NOT NULL,
	"beacon_id" text NOT NULL,
	"received_at" timestamp with time zone NOT NULL,
	CONSTRAINT "beacon_receipts_account_id_beacon_id_pk" PRIMARY KEY("account_id","beacon_id")
);
--> statement-breakpoint
ALTER TABLE "beacon_receipts" ADD CONSTRAINT "beacon_receipts_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
-- A tenant table like the others: forced row-level security and the tenant policy.
SELECT ascribe_enforce_tenancy();
