import type { ZodError, z } from "zod";
import type { addConnectorInput, ConnectorKind } from "../admin/connectors.ts";

export const KIND_NAMES: Record<ConnectorKind, string> = {
  stripe: "Stripe",
  calendly: "Calendly",
  calcom: "Cal.com",
  meta: "Meta Ads",
  google: "Google Ads",
};

/** What each kind brings in (the kind select's help). */
export const KIND_HELP: Record<ConnectorKind, string> = {
  stripe: "payments, refunds, disputes (webhook)",
  calendly: "bookings, cancellations, no-shows (webhook)",
  calcom: "bookings, cancellations, no-shows (webhook)",
  meta: "daily spend per ad (sync)",
  google: "daily spend per ad (sync)",
};

export interface ConnectionField {
  /** The form field's name: addConnectorInput's key, so the form's fields pass through unchanged. */
  name: keyof z.input<typeof addConnectorInput>;
  label: string;
  /** The CLI flag that addConnectorInput's messages name (src/connectors/spend-credentials.ts). */
  flag: string;
  /** A credential: never rendered back into the form, not even after a refused post. */
  secret: boolean;
  help?: string;
}

export const WEBHOOK_FIELDS: readonly ConnectionField[] = [
  {
    name: "secret",
    label: "Signing secret",
    flag: "--secret",
    secret: true,
    help: "Stripe: required, the endpoint's whsec_… (Stripe issues it). Calendly and Cal.com: leave empty and one is generated.",
  },
];

export const META_FIELDS: readonly ConnectionField[] = [
  {
    name: "adAccountId",
    label: "Ad account id",
    flag: "--ad-account-id",
    secret: false,
    help: "act_123… or 123…",
  },
  { name: "accessToken", label: "Access token", flag: "--access-token", secret: true, help: "with ads_read" },
];

export const GOOGLE_FIELDS: readonly ConnectionField[] = [
  { name: "customerId", label: "Customer id", flag: "--customer-id", secret: false, help: "123-456-7890" },
  { name: "developerToken", label: "Developer token", flag: "--developer-token", secret: true },
  { name: "clientId", label: "OAuth client id", flag: "--client-id", secret: true },
  { name: "clientSecret", label: "OAuth client secret", flag: "--client-secret", secret: true },
  { name: "refreshToken", label: "Refresh token", flag: "--refresh-token", secret: true },
  {
    name: "loginCustomerId",
    label: "Manager customer id",
    flag: "--login-customer-id",
    secret: false,
    help: "optional: when access goes through a manager account",
  },
];

const FIELDS = [...WEBHOOK_FIELDS, ...META_FIELDS, ...GOOGLE_FIELDS];

/** What a refused form shows again: the kind and the ids, never a secret or credential. */
export interface ConnectionFormState {
  kind?: string;
  values?: Record<string, string>;
  error?: string;
}

/**
 * The posted form as addConnector's input. Empty fields are left out (a browser posts every field
 * of the form), so a field filled for another kind is refused by addConnectorInput, as on the CLI.
 */
export function connectionInputOf(account: string, form: URLSearchParams): z.input<typeof addConnectorInput> {
  const input: Record<string, string> = { account, kind: form.get("kind") ?? "" };
  for (const f of FIELDS) {
    const value = (form.get(f.name) ?? "").trim();
    if (value) input[f.name] = value;
  }
  return input as z.input<typeof addConnectorInput>;
}

export function refilled(form: URLSearchParams, error: string): ConnectionFormState {
  const values: Record<string, string> = {};
  for (const f of FIELDS) if (!f.secret) values[f.name] = form.get(f.name) ?? "";
  return { kind: form.get("kind") ?? "", values, error };
}

const isKind = (k: string): k is ConnectorKind => Object.hasOwn(KIND_NAMES, k);

/** One issue in the form's words: the CLI's flags become the fields' labels, `--kind x` the vendor. */
function issueWording(issue: ZodError["issues"][number]): string {
  const text = issue.message
    .replace(/--kind (\w+)/g, (whole, kind: string) => (isKind(kind) ? KIND_NAMES[kind] : whole))
    .replace(/--[a-z-]+/g, (flag) => {
      const field = FIELDS.find((f) => f.flag === flag);
      return field ? `“${field.label}”` : flag;
    });
  if (text !== issue.message) return text;
  const at = String(issue.path[0] ?? "");
  const label = FIELDS.find((f) => f.name === at)?.label ?? (at === "kind" ? "Kind" : at);
  return label ? `${label}: ${text}` : text;
}

/** addConnectorInput's refusal as the form shows it. */
export function connectionProblem(err: ZodError): string {
  return err.issues.map(issueWording).join("; ");
}
