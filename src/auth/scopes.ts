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

/** What a key may hold: named scopes, or `*` for all of them. */
export type GrantedScope = Scope | "*";

export function isGrantedScope(value: string): value is GrantedScope {
  return value === "*" || (SCOPES as readonly string[]).includes(value);
}

export function grants(granted: readonly string[], required: Scope): boolean {
  return granted.includes("*") || granted.includes(required);
}
