import { z } from "zod";

/** The type a field of an object schema finally expects, looking through optional/nullable/default. */
function baseType(schema: z.ZodType): z.ZodType {
  let current: z.ZodType = schema;
  for (;;) {
    if (current instanceof z.ZodOptional || current instanceof z.ZodNullable)
      current = current.unwrap() as z.ZodType;
    else if (current instanceof z.ZodDefault) current = current.unwrap() as z.ZodType;
    else return current;
  }
}

const TRUE = new Set(["true", "1", "yes", "y"]);
const FALSE = new Set(["false", "0", "no", "n"]);

/**
 * CSV cells are text: turn the ones whose field expects a number or a boolean into one, so the same
 * schema validates both formats. A cell that does not convert is left as text for the schema to
 * refuse with its own message.
 */
export function coerceCsvRecord(
  shape: z.ZodRawShape,
  record: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    const field = shape[key];
    if (typeof value !== "string" || !field) {
      out[key] = value;
      continue;
    }
    const type = baseType(field as z.ZodType);
    if (type instanceof z.ZodNumber) {
      const n = Number(value);
      out[key] = value.trim() !== "" && Number.isFinite(n) ? n : value;
    } else if (type instanceof z.ZodBoolean) {
      const v = value.toLowerCase();
      out[key] = TRUE.has(v) ? true : FALSE.has(v) ? false : value;
    } else {
      out[key] = value;
    }
  }
  return out;
}
