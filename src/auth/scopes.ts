export const READ_SCOPES = [
  "read:dashboard",
  "read:ads",
  "read:attribution",
  "read:events",
  "read:sales",
  "read:finance",
  "read:funnel",
  "read:contacts",
  "read:calls",
  "read:journeys",
  "read:creatives",
  "read:icp",
  "read:capi",
] as const;

export const WRITE_SCOPES = [
  "write:goals",
  "write:settings",
  "write:icp",
  "write:ads",
  "write:creatives",
] as const;

export const SCOPES = [...READ_SCOPES, ...WRITE_SCOPES] as const;

export type Scope = (typeof SCOPES)[number];

/** SPEC "Read scopes" / "Write scopes": what each grants (the reference's tag and scope texts). */
export const SCOPE_DOCS: Readonly<Record<Scope, string>> = {
  "read:dashboard": "aggregated KPIs, daily series, breakdowns",
  "read:ads": "spend per ad and campaign, ad rules and run history",
  "read:attribution": "multi-touch attribution, capture health, attribution report",
  "read:events": "CRM events and their summary",
  "read:sales": "sales summary, per-rep performance, sales cycle",
  "read:finance": "P&L and revenue (margins stripped)",
  "read:funnel": "funnel and conversion",
  "read:contacts": "contacts, customers, purchases",
  "read:calls": "a contact's calls, call list, transcript, recording",
  "read:journeys": "journeys, one contact's journey, touchpoint feed",
  "read:creatives": "pending creative needs",
  "read:icp": "ICP criteria",
  "read:capi": "connected ad-network pixels (without tokens)",
  "write:goals": "replace KPI goals",
  "write:settings": "set the sale counting rule",
  "write:icp": "set ICP criteria",
  "write:ads": "enable, disable, switch to dry-run or delete an ad rule",
  "write:creatives":
    "get an upload authorization, import a creative into the reserve, acknowledge creative needs",
};

/** What a key may hold: named scopes, or `*` for all of them. */
export type GrantedScope = Scope | "*";

export function isGrantedScope(value: string): value is GrantedScope {
  return value === "*" || (SCOPES as readonly string[]).includes(value);
}

export function grants(granted: readonly string[], required: Scope): boolean {
  return granted.includes("*") || granted.includes(required);
}
