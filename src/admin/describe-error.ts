import { ApiError } from "../http/errors.ts";

/**
 * One line for a human: zod issues name the argument; an ApiError's message is followed by its code
 * (`… (plan_free_no_api)`), the name the spec and the API give the refusal.
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
  return err instanceof Error ? err.message : String(err);
}
