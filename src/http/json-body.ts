import { ApiError } from "./errors.ts";

/**
 * How deep a JSON body may nest, counting the body itself as level 1. The deepest legitimate write is
 * a few levels (an ICP's criteria, a rule's parameters, a webhook batch of events); a value nested
 * thousands deep was stored and then broke every later read of it (PostgreSQL, JSON.stringify and
 * the response's walks all recurse).
 */
export const MAX_JSON_DEPTH = 32;

/** What `readJsonBody` answers: the value, or why it is refused (the caller decides how to say it). */
export type JsonBody =
  | { ok: true; value: unknown }
  | { ok: false; reason: "syntax" | "depth"; error: ApiError };

/** The depth of a parsed value, walked without recursion (a recursive walk is what overflows). */
export function jsonDepth(value: unknown): number {
  let deepest = 0;
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [node, depth] = next;
    if (typeof node !== "object" || node === null) continue;
    if (depth > deepest) deepest = depth;
    // Past the bound the exact figure does not matter: stop walking.
    if (deepest > MAX_JSON_DEPTH) return deepest;
    for (const child of Array.isArray(node) ? node : Object.values(node)) pending.push([child, depth + 1]);
  }
  return deepest;
}

/**
 * The one check every JSON write goes through (API pipeline, webhooks, /api/collect, MCP): parse,
 * then refuse a value nested deeper than `MAX_JSON_DEPTH`. Size is bounded before this by each
 * route's body limit. V8's JSON.parse does not recurse, so a deep body parses safely here.
 */
export function readJsonBody(raw: string): JsonBody {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { ok: false, reason: "syntax", error: ApiError.validation("body is not valid JSON") };
  }
  if (jsonDepth(value) > MAX_JSON_DEPTH) {
    return {
      ok: false,
      reason: "depth",
      error: ApiError.validation(`body nests deeper than ${MAX_JSON_DEPTH} levels`),
    };
  }
  return { ok: true, value };
}
