import { z } from "zod";

/**
 * The options `connectors add --kind meta|google` takes (CONTRACT.md's "[vendor options]"), as the
 * admin command receives them (commander's camelCase of the flags). They are the connector's
 * credentials: sealed into credentials_sealed, never answered again.
 */
export const spendCredentialOptions = z.object({
  adAccountId: z.string().trim().optional(),
  accessToken: z.string().trim().optional(),
  customerId: z.string().trim().optional(),
  developerToken: z.string().trim().optional(),
  clientId: z.string().trim().optional(),
  clientSecret: z.string().trim().optional(),
  refreshToken: z.string().trim().optional(),
  loginCustomerId: z.string().trim().optional(),
});
type Options = z.output<typeof spendCredentialOptions>;

export interface MetaCredentials {
  platform: "meta";
  /** Digits only; the API path is act_<id>. */
  adAccountId: string;
  accessToken: string;
}

export interface GoogleCredentials {
  platform: "google";
  /** Ten digits, dashes removed. */
  customerId: string;
  developerToken: string;
  clientId: string;
  clientSecret: string;
  refreshToken: string;
  /** The manager account the access goes through, when the customer is reached via one. */
  loginCustomerId: string | null;
}

export type SpendCredentials = MetaCredentials | GoogleCredentials;

const FLAGS: Record<keyof Options, string> = {
  adAccountId: "--ad-account-id",
  accessToken: "--access-token",
  customerId: "--customer-id",
  developerToken: "--developer-token",
  clientId: "--client-id",
  clientSecret: "--client-secret",
  refreshToken: "--refresh-token",
  loginCustomerId: "--login-customer-id",
};
const META_FIELDS: readonly (keyof Options)[] = ["adAccountId", "accessToken"];
const GOOGLE_FIELDS: readonly (keyof Options)[] = [
  "customerId",
  "developerToken",
  "clientId",
  "clientSecret",
  "refreshToken",
  "loginCustomerId",
];
const TOKEN = /^[A-Za-z0-9._~+/=|:-]{8,4096}$/;
const GOOGLE_ID = /^\d{3}-?\d{3}-?\d{4}$/;

type Issue = { path: string; message: string };

function metaIssues(o: Options): Issue[] {
  const issues: Issue[] = [];
  if (!o.adAccountId)
    issues.push({ path: "adAccountId", message: "--ad-account-id is required for --kind meta" });
  else if (!/^(act_)?\d{1,30}$/.test(o.adAccountId))
    issues.push({
      path: "adAccountId",
      message: "--ad-account-id must be the ad account's number (act_123… or 123…)",
    });
  if (!o.accessToken)
    issues.push({ path: "accessToken", message: "--access-token is required for --kind meta" });
  else if (!TOKEN.test(o.accessToken))
    issues.push({
      path: "accessToken",
      message: "--access-token must be a Marketing API access token (no spaces)",
    });
  return issues;
}

function googleIssues(o: Options): Issue[] {
  const issues: Issue[] = [];
  for (const f of ["customerId", "developerToken", "clientId", "clientSecret", "refreshToken"] as const)
    if (!o[f]) issues.push({ path: f, message: `${FLAGS[f]} is required for --kind google` });
  for (const f of ["customerId", "loginCustomerId"] as const) {
    const v = o[f];
    if (v && !GOOGLE_ID.test(v))
      issues.push({ path: f, message: `${FLAGS[f]} must be a Google Ads customer id (123-456-7890)` });
  }
  for (const f of ["developerToken", "clientId", "clientSecret", "refreshToken"] as const) {
    const v = o[f];
    if (v && !TOKEN.test(v)) issues.push({ path: f, message: `${FLAGS[f]} must be one word (no spaces)` });
  }
  return issues;
}

/** What is wrong with the options given for `kind` (the other kinds' options are refused too). */
export function spendCredentialIssues(kind: string, o: Options): Issue[] {
  const own = kind === "meta" ? META_FIELDS : kind === "google" ? GOOGLE_FIELDS : [];
  const foreign = (Object.keys(FLAGS) as (keyof Options)[]).filter(
    (f) => o[f] !== undefined && !own.includes(f),
  );
  const issues: Issue[] = foreign.map((f) => ({
    path: f,
    message: `${FLAGS[f]} does not apply to --kind ${kind}`,
  }));
  if (kind === "meta") issues.push(...metaIssues(o));
  if (kind === "google") issues.push(...googleIssues(o));
  return issues;
}

/** The credentials to seal for a spend kind (options already checked by spendCredentialIssues); null otherwise. */
export function spendCredentials(kind: string, o: Options): SpendCredentials | null {
  const digits = (v: string | undefined) => (v ?? "").replace(/\D/g, "");
  if (kind === "meta")
    return { platform: "meta", adAccountId: digits(o.adAccountId), accessToken: o.accessToken ?? "" };
  if (kind === "google")
    return {
      platform: "google",
      customerId: digits(o.customerId),
      developerToken: o.developerToken ?? "",
      clientId: o.clientId ?? "",
      clientSecret: o.clientSecret ?? "",
      refreshToken: o.refreshToken ?? "",
      loginCustomerId: o.loginCustomerId ? digits(o.loginCustomerId) : null,
    };
  return null;
}

const storedSchema = z.discriminatedUnion("platform", [
  z.object({ platform: z.literal("meta"), adAccountId: z.string(), accessToken: z.string() }),
  z.object({
    platform: z.literal("google"),
    customerId: z.string(),
    developerToken: z.string(),
    clientId: z.string(),
    clientSecret: z.string(),
    refreshToken: z.string(),
    loginCustomerId: z.string().nullable(),
  }),
]);

/** The opened credentials_sealed back as credentials (a malformed value is an error, never a guess). */
export function parseSpendCredentials(opened: string): SpendCredentials {
  return storedSchema.parse(JSON.parse(opened));
}
