import { z } from "zod";
import type { Tenant } from "../routes/route-def.ts";
import { DAY_RANGE_MESSAGE, dayInRange } from "./date-range.ts";

/**
 * Report parameters shared by the read routes (DESIGN §6, docs/metrics.md "Windows and paging"):
 * `from`/`to` are inclusive calendar dates in the account's timezone, defaulting to the 30 days
 * ending today; `limit` above its maximum is clamped, below 1 or not an integer is refused.
 */

const DAY_MS = 86_400_000;
export const DEFAULT_WINDOW_DAYS = 30;

function isCalendarDate(value: string): boolean {
  const parsed = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === value;
}

/**
 * How a query parameter reads in the API reference, merged into its JSON Schema there. A query
 * string is text, so the parsed type (an integer, a default applied after parsing) is invisible to
 * the schema's own conversion; this says it. Kept apart from zod's global metadata, which the
 * /tools manifest's input schemas (the strings a client sends) also read.
 */
export const queryParamDocs = z.registry<Record<string, unknown>>();

export const dateParam = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, { message: "must be a date YYYY-MM-DD", abort: true })
  .refine(isCalendarDate, { message: "is not a calendar date", abort: true })
  .refine(dayInRange, DAY_RANGE_MESSAGE);
queryParamDocs.add(dateParam, { format: "date" });

const validOrder = (q: { from?: string; to?: string }) => !(q.from && q.to && q.from > q.to);

/** `from`/`to` plus a route's own parameters; `from` after `to` is refused. */
export function windowQuery<T extends z.ZodRawShape>(extra: T) {
  return z
    .object({ from: dateParam.optional(), to: dateParam.optional(), ...extra })
    .refine((q) => validOrder(q as unknown as { from?: string; to?: string }), {
      message: "must not be after to",
      path: ["from"],
    });
}

/** An integer query parameter: absent → `fallback`; above `max` → `max`; below `min` or not an integer → 400. */
export function intParam(fallback: number, options: { min: number; max?: number }) {
  const schema = z
    .string()
    .regex(/^-?\d+$/, { message: "must be an integer", abort: true })
    .transform(Number)
    .refine((n) => Number.isSafeInteger(n), "is too large")
    .refine((n) => n >= options.min, `must be at least ${options.min}`)
    .transform((n) => (options.max === undefined ? n : Math.min(n, options.max)))
    .optional()
    .transform((n) => n ?? fallback);
  queryParamDocs.add(schema, {
    type: "integer",
    minimum: options.min,
    ...(options.max === undefined ? {} : { maximum: options.max }),
    default: fallback,
  });
  return schema;
}

export const limitParam = (fallback: number, max: number) => intParam(fallback, { min: 1, max });

/**
 * An optional integer query parameter refused, not clamped, outside [min, max]: absent → undefined
 * (the caller then does without it — the whole list of /contacts/customers, say).
 */
export function optionalIntParam(options: { min: number; max?: number; description?: string }) {
  const { min, max, description } = options;
  const schema = z
    .string()
    .regex(/^-?\d+$/, { message: "must be an integer", abort: true })
    .transform(Number)
    .refine((n) => Number.isSafeInteger(n), { message: "is too large", abort: true })
    .refine((n) => n >= min, `must be at least ${min}`)
    .refine((n) => max === undefined || n <= max, `must be at most ${max}`)
    .optional();
  queryParamDocs.add(schema, {
    type: "integer",
    minimum: min,
    ...(max === undefined ? {} : { maximum: max }),
    ...(description === undefined ? {} : { description }),
  });
  return schema;
}

/** A yes/no query parameter: `true` or `1` (as the spec writes it), `false` or `0`; absent → false. */
export const flagParam = () => {
  const schema = z
    .enum(["true", "1", "false", "0"], { error: "must be true, 1, false or 0" })
    .optional()
    .transform((v) => v === "true" || v === "1");
  queryParamDocs.add(schema, { default: "false" });
  return schema;
};
export const offsetParam = () => intParam(0, { min: 0 });

export interface ReportWindow {
  /** Inclusive first day, YYYY-MM-DD, in the account's timezone. */
  from: string;
  /** Inclusive last day. */
  to: string;
  timezone: string;
  /** The instant `from` begins in the account's timezone, ISO 8601 (bind with `::timestamptz`). */
  start: string;
  /** The instant the day after `to` begins (exclusive bound), ISO 8601. */
  end: string;
  days: number;
  /** Today in the account's timezone: meetings of earlier days are past. */
  today: string;
}

/*
 * Intl formatters are kept per timezone: building one costs ~100 µs, more than every other step of
 * a window together (measured: reportWindow 0.55 ms with a new formatter per call).
 */
const formats = new Map<string, Intl.DateTimeFormat>();
function formatIn(kind: "day" | "instant", timezone: string): Intl.DateTimeFormat {
  const key = `${kind}:${timezone}`;
  let format = formats.get(key);
  if (!format) {
    format =
      kind === "day"
        ? new Intl.DateTimeFormat("en-CA", {
            timeZone: timezone,
            year: "numeric",
            month: "2-digit",
            day: "2-digit",
          })
        : new Intl.DateTimeFormat("en-US", {
            timeZone: timezone,
            hourCycle: "h23",
            year: "numeric",
            month: "2-digit",
            day: "2-digit",
            hour: "2-digit",
            minute: "2-digit",
            second: "2-digit",
          });
    formats.set(key, format);
  }
  return format;
}

/** The calendar day (YYYY-MM-DD) and the clock time (HH:MM, 00–23) of an instant in a timezone. */
export function wallClockIn(timezone: string, at: Date): { date: string; time: string } {
  const parts: Record<string, string> = {};
  for (const p of formatIn("instant", timezone).formatToParts(at)) parts[p.type] = p.value;
  return { date: `${parts.year}-${parts.month}-${parts.day}`, time: `${parts.hour}:${parts.minute}` };
}

/** Today's calendar date in a timezone. */
export function dateIn(timezone: string, at: Date): string {
  return formatIn("day", timezone).format(at);
}

export function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/** Minutes the timezone is ahead of UTC at an instant. */
function offsetMinutes(timezone: string, at: number): number {
  const parts = formatIn("instant", timezone).formatToParts(at);
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const asUtc = Date.UTC(
    get("year"),
    get("month") - 1,
    get("day"),
    get("hour"),
    get("minute"),
    get("second"),
  );
  return Math.round((asUtc - Math.floor(at / 1000) * 1000) / 60_000);
}

/** The instant a calendar day begins in a timezone (DST-safe: the offset is re-read at the result). */
export function startOfDay(day: string, timezone: string): Date {
  const utcMidnight = Date.parse(`${day}T00:00:00Z`);
  let guess = utcMidnight - offsetMinutes(timezone, utcMidnight) * 60_000;
  guess = utcMidnight - offsetMinutes(timezone, guess) * 60_000;
  return new Date(guess);
}

export function reportWindow(
  query: { from?: string; to?: string },
  tenant: Pick<Tenant, "timezone">,
  now: Date,
  defaultDays = DEFAULT_WINDOW_DAYS,
): ReportWindow {
  const today = dateIn(tenant.timezone, now);
  const to = query.to ?? (query.from && query.from > today ? query.from : today);
  const from = query.from ?? addDays(to, -(defaultDays - 1));
  return {
    from,
    to,
    timezone: tenant.timezone,
    start: startOfDay(from, tenant.timezone).toISOString(),
    end: startOfDay(addDays(to, 1), tenant.timezone).toISOString(),
    days: Math.round((Date.parse(to) - Date.parse(from)) / DAY_MS) + 1,
    today,
  };
}

/** For lists, not reports: no window at all unless `from` or `to` is given. */
export function optionalWindow(
  query: { from?: string; to?: string },
  tenant: Pick<Tenant, "timezone">,
  now: Date,
): ReportWindow | undefined {
  return query.from === undefined && query.to === undefined ? undefined : reportWindow(query, tenant, now);
}

/** The first day (YYYY-MM-01) of the month `now` falls in, in the account's timezone. */
export function monthStart(now: Date, timezone: string): string {
  const parts = new Intl.DateTimeFormat("en-CA", { timeZone: timezone, year: "numeric", month: "2-digit" })
    .formatToParts(now)
    .reduce<Record<string, string>>((acc, p) => {
      acc[p.type] = p.value;
      return acc;
    }, {});
  return `${parts.year}-${parts.month}-01`;
}
