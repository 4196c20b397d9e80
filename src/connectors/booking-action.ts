import type { CrmEvent } from "../ingest/crm-event.ts";
import { wallClockIn } from "../reports/window.ts";

/*
 * What a scheduling tool's delivery becomes (Calendly, Cal.com; docs/connectors.md): events to
 * store through the one ingest path and ids of events to take back (a no-show unmarked), or nothing.
 */

export type BookingAction =
  | { kind: "changes"; events: CrmEvent[]; remove: string[] }
  | { kind: "ignored"; reason: string };

export type Json = Record<string, unknown>;

export const isObject = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);
export const obj = (v: unknown): Json => (isObject(v) ? v : {});
export const str = (v: unknown): string | null =>
  typeof v === "string" && v.trim() !== "" ? v.trim() : null;
export const ignored = (reason: string): BookingAction => ({ kind: "ignored", reason });
export const store = (events: CrmEvent[], remove: string[] = []): BookingAction => ({
  kind: "changes",
  events,
  remove,
});

/** An ISO 8601 instant the tools send (`…Z` or with an offset), normalised to UTC; null otherwise. */
export function instant(v: unknown): string | null {
  const s = str(v);
  if (!s || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(s)) return null;
  const ms = Date.parse(s);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

/**
 * A meeting's start as the account reads it: `booking_date` / `booking_time` are calendar values in
 * the account's timezone (reports place meetings on that day, and `meets_at` is read back with it).
 */
export function localDateTime(iso: string, timezone: string): { date: string; time: string } {
  return wallClockIn(timezone, new Date(iso));
}

const UTM = ["utm_source", "utm_medium", "utm_campaign", "utm_content", "utm_term"] as const;

/** The UTM parameters a tool passes (Calendly's `tracking`, Cal.com's `metadata`), as event fields. */
export function utmFields(source: Json): Partial<CrmEvent> {
  const utm: Partial<CrmEvent> = {};
  for (const name of UTM) {
    const value = str(source[name]);
    if (value) utm[name] = value.slice(0, 500);
  }
  return utm;
}
