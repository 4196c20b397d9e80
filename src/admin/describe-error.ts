import { withoutBoundValues } from "../db/query-error.ts";
import { ApiError } from "../http/errors.ts";

/**
 * One line for a human: zod issues name the argument; an ApiError's message is followed by its code
 * (`… (plan_free_no_api)`), the name the spec and the API give the refusal; a failed query is
 * described without its statement's values.
 */
export function describeError(err: unknown): string {
  if (err && typeof err === "object" && "issues" in err && Array.isArray(err.issues)) {
    return err.issues
      .map((i: { path?: PropertyKey[]; message?: string }) =>
        i.path && i.path.length > 0 ? `--${String(i.path[0])}: ${i.message}` : String(i.message),
      )
      .join("; ");
  }
  if (err instanceof ApiError && err.code !== "validation" && err.message !== err.code) {
    return `${err.message} (${err.code})`;
  }
  // A failed query's message carries its statement and bound values (emails, names): one line without.
  const clean = withoutBoundValues(err);
  return clean instanceof Error ? clean.message : String(clean);
}
