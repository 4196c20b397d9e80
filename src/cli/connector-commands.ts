import { type Command, Option } from "commander";
import { accountOption, admin, jsonOption, print, table } from "./output.ts";

const KINDS = ["stripe", "calendly", "calcom", "meta", "google"];

interface ListedConnector {
  id: string;
  kind: string;
  webhook_url: string | null;
  created_at: string;
  last_event_at: string | null;
  last_sync_at: string | null;
  last_error: string | null;
}

interface TestedConnector {
  id: string;
  kind: string;
  ok: boolean;
  secret: string;
  last_event_at: string | null;
  last_error: string | null;
  last_error_at: string | null;
}

/** `ascribe connectors …`: an account's links to Stripe and the other vendors (docs/connectors.md). */
export function registerConnectorCommands(program: Command): void {
  const connectors = program
    .command("connectors")
    .description("vendor connections (Stripe, Calendly, Cal.com webhooks, …): add, list, remove, test");
  connectors
    .command("add")
    .description("connect a vendor and print its webhook URL and signing secret (shown only this once)")
    .addOption(accountOption())
    .addOption(new Option("--kind <kind>", "the vendor").choices(KINDS).makeOptionMandatory())
    .option(
      "--secret <secret>",
      "the vendor's signing secret (Stripe: the endpoint's whsec_…; Calendly, Cal.com: generated when not given)",
    )
    .option("--ad-account-id <id>", "meta: the ad account (act_123… or 123…)")
    .option("--access-token <token>", "meta: a Marketing API access token with ads_read")
    .option("--customer-id <id>", "google: the Google Ads customer id (123-456-7890)")
    .option("--developer-token <token>", "google: the API developer token")
    .option("--client-id <id>", "google: the OAuth client id")
    .option("--client-secret <secret>", "google: the OAuth client secret")
    .option("--refresh-token <token>", "google: the OAuth refresh token (scope adwords)")
    .option("--login-customer-id <id>", "google: the manager account the customer is reached through")
    .addOption(jsonOption())
    .action(async (o: { account: string; kind: string; json?: boolean }) => {
      const r = await admin("connectors.add", o);
      print(
        r,
        Boolean(o.json),
        (c: { id: string; kind: string; webhook_url: string | null; secret: string | null }) =>
          [
            `connector ${c.id} (${c.kind})`,
            ...(c.webhook_url ? [`  webhook URL: ${c.webhook_url}`] : []),
            ...(c.secret ? [`  signing secret: ${c.secret} (shown only this once)`] : []),
          ].join("\n"),
      );
    });
  connectors
    .command("list")
    .description("list the account's connectors with their last event and last error (never secrets)")
    .addOption(accountOption())
    .addOption(jsonOption())
    .action(async (o: { account: string; json?: boolean }) => {
      const r = await admin("connectors.list", o);
      print(r, Boolean(o.json), (list: ListedConnector[]) =>
        list.length === 0
          ? "no connectors"
          : table([
              ["ID", "KIND", "LAST EVENT", "LAST ERROR", "WEBHOOK URL"],
              ...list.map((c) => [
                c.id,
                c.kind,
                c.last_event_at ?? c.last_sync_at ?? "-",
                c.last_error ?? "-",
                c.webhook_url ?? "-",
              ]),
            ]),
      );
    });
  connectors
    .command("remove")
    .description("remove a connector (its webhook URL answers 404 from then on)")
    .addOption(accountOption())
    .requiredOption("--id <id>", "the connector's id")
    .addOption(jsonOption())
    .action(async (o: { account: string; id: string; json?: boolean }) => {
      const r = await admin("connectors.remove", o);
      print(r, Boolean(o.json), (c: { id: string }) => `connector ${c.id} removed`);
    });
  connectors
    .command("test")
    .description("check a connector: its secret opens, and what it last received or refused")
    .addOption(accountOption())
    .requiredOption("--id <id>", "the connector's id")
    .addOption(jsonOption())
    .action(async (o: { account: string; id: string; json?: boolean }) => {
      const r = await admin("connectors.test", o);
      print(r, Boolean(o.json), (c: TestedConnector) =>
        [
          `connector ${c.id} (${c.kind}): ${c.ok ? "ok" : "needs attention"}`,
          `  signing secret: ${c.secret}`,
          `  last event: ${c.last_event_at ?? "none yet"}`,
          `  last error: ${c.last_error ? `${c.last_error} (${c.last_error_at})` : "none"}`,
        ].join("\n"),
      );
    });
}
