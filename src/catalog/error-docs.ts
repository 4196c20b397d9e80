import { z } from "zod";
import type { ErrorCode } from "../http/errors.ts";
import { FAILED_AUTH_LIMIT, RATE_LIMIT } from "../http/pipeline.ts";

export interface ErrorDoc {
  /** When the error is answered, for the reference's tables. */
  cause: string;
  /** Members the body carries beside `error` (ApiError's `extra`). */
  extra?: Readonly<Record<string, z.ZodType>>;
  /** False for errors of the service's other addresses (files, uploads, webhooks), not of the key API. */
  api: boolean;
}

/**
 * What each error of the code→status table (http/errors.ts) means and which members its body adds.
 * A `Record` over every code: a new code does not compile until it is documented here.
 */
export const ERROR_DOCS: Readonly<Record<ErrorCode, ErrorDoc>> = {
  validation: {
    cause:
      "An invalid parameter or body; `error` is the message, naming the parameter (`limit: must be an integer`), or the spec's own message for a missing required member (`missing goals object`).",
    api: true,
  },
  invalid_or_missing_api_key: {
    cause: "No key, a malformed key, or an unknown, revoked or expired key.",
    api: true,
  },
  invalid_signature: { cause: "A CRM webhook whose signature does not verify.", api: false },
  insufficient_scope: {
    cause: "The key lacks the route's scope; `required` names it.",
    extra: { required: z.string() },
    api: true,
  },
  plan_free_no_api: { cause: "The key's account is on the free plan: no key request is served.", api: true },
  plan_free_no_autopilot: {
    cause: "A free-plan account arming an ad rule for real (`dry_run` false).",
    api: true,
  },
  forbidden: {
    cause:
      "The object (call, rule) belongs to another account, or, for a recording, does not exist; also a changed signed URL.",
    api: true,
  },
  link_expired: { cause: "An expired signed URL (recordings, uploads).", api: false },
  unknown_route: {
    cause: "No route at this path; `route` echoes the path.",
    extra: { route: z.string() },
    api: true,
  },
  not_found: { cause: "The account or the object of a write does not exist.", api: true },
  no_recording_available: { cause: "The call has no audio or video file.", api: true },
  method_not_allowed: {
    cause: "The route exists but not with this method; `allowed` lists its methods.",
    extra: { allowed: z.array(z.string()) },
    api: true,
  },
  upload_already_used: { cause: "An upload authorization already used.", api: false },
  precondition_failed: { cause: "A conditional file request whose precondition fails.", api: false },
  payload_too_large: { cause: "An upload larger than its type allows.", api: false },
  range_not_satisfiable: { cause: "A byte range outside the file.", api: false },
  rate_limited: {
    cause: `More than ${RATE_LIMIT} requests in the key's current 60-second window; retry after \`retry_after_seconds\` (also in \`Retry-After\`).`,
    extra: { retry_after_seconds: z.number().int() },
    api: true,
  },
  too_many_failed_attempts: {
    cause: `More than ${FAILED_AUTH_LIMIT} answers 401 to this IP address within the minute; retry after \`retry_after_seconds\` (also in \`Retry-After\`).`,
    extra: { retry_after_seconds: z.number().int() },
    api: true,
  },
  tenant_barrier: {
    cause: "The response held a row of another account and was blocked; nothing of it was sent.",
    api: true,
  },
  upstream_error: {
    cause: "An internal error while reading or writing (a database outage, a timeout); retry later.",
    api: true,
  },
  overloaded: {
    cause:
      "The instance is overloaded (its event loop lags past the operator's limit) and refused the request at once instead of queueing it; retry after `retry_after_seconds` (also in `Retry-After`).",
    extra: { retry_after_seconds: z.number().int() },
    api: true,
  },
};
