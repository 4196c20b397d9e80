/** The roles a person holds in an account (the CLI's and the application's). */
export const ROLES = ["owner", "admin", "member"] as const;
export type Role = (typeof ROLES)[number];

/** Owners and administrators manage keys and members; members read. */
export function isManager(role: Role): boolean {
  return role === "owner" || role === "admin";
}

/** Emails are stored and compared trimmed and lower-cased. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
