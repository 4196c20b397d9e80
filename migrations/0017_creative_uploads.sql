CREATE TABLE "creative_uploads" (
	"account_id" uuid NOT NULL,
	"id" uuid NOT NULL,
	"path" text NOT NULL,
	"asset_url" text NOT NULL,
	"content_type" text NOT NULL,
	"token_hash" text NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	"claimed_at" timestamp with time zone,
	"uploaded_at" timestamp with time zone,
	"size_bytes" bigint,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "creative_uploads_account_id_id_pk" PRIMARY KEY("account_id","id")
);
--> statement-breakpoint
ALTER TABLE "creative_uploads" ADD CONSTRAINT "creative_uploads_account_id_accounts_id_fk" FOREIGN KEY ("account_id") REFERENCES "public"."accounts"("id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE UNIQUE INDEX "creative_uploads_path_uq" ON "creative_uploads" USING btree ("account_id","path");--> statement-breakpoint
CREATE UNIQUE INDEX "creative_uploads_asset_url_uq" ON "creative_uploads" USING btree ("account_id","asset_url");--> statement-breakpoint
SELECT ascribe_enforce_tenancy();
