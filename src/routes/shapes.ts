import { z } from "zod";

/**
 * Building blocks of the routes' `output` schemas (the documented `data`). They describe JSON as
 * the API sends it: instants are ISO 8601 strings, ids of ad platforms are strings, money and rates
 * are numbers, and a figure SQL can leave undefined (x / 0, no row) is nullable.
 */

/** An instant, ISO 8601 in UTC (`2026-11-04T07:45:00.000Z`). */
export const instant = () => z.string().meta({ format: "date-time" });

/** A calendar day, `YYYY-MM-DD`. */
export const day = () => z.string().meta({ format: "date" });

/** A whole count. */
export const count = () => z.number().int();

/** An amount in the account's currency, rounded to cents. */
export const money = () => z.number();

/** A ratio rounded to 4 decimals (0.4212 = 42.12 %); null when its divisor is zero. */
export const rate = () => z.number().nullable();

/** Free-form JSON object the account stored (rule parameters, ICP criteria, routing…). */
export const jsonObject = () => z.record(z.string(), z.unknown());

/** A text field, null when it was never captured. */
export const text = () => z.string().nullable();

/** The `from`/`to` a report applied (the defaults filled in). */
export const appliedWindow = { from: day(), to: day() };

/** `{ success: true }` and what a write adds to it. */
export const success = <T extends z.ZodRawShape>(extra: T) =>
  z.object({ success: z.literal(true), ...extra });
