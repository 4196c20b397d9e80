/** Every error the API can answer, with its HTTP status: the single code→status table. */
export const ERROR_STATUS = {
  validation: 400,
  invalid_or_missing_api_key: 401,
  invalid_signature: 401,
  insufficient_scope: 403,
  plan_free_no_api: 403,
  plan_free_no_autopilot: 403,
  forbidden: 403,
  link_expired: 403,
  unknown_route: 404,
  not_found: 404,
  no_recording_available: 404,
  method_not_allowed: 405,
  upload_already_used: 409,
  precondition_failed: 412,
  payload_too_large: 413,
  range_not_satisfiable: 416,
  rate_limited: 429,
  too_many_failed_attempts: 429,
  tenant_barrier: 500,
  upstream_error: 502,
  overloaded: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/**
 * The one error type of the service. `code` picks the status; the body is `{ error, ...extra }`.
 * For `validation` the body's `error` is the human message (SPEC: "400 validation message").
 */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly extra: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, extra: Record<string, unknown> = {}, message?: string) {
    super(message ?? code);
    this.name = "ApiError";
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.extra = extra;
  }

  /** 400 whose `error` is a message naming the offending parameter. */
  static validation(message: string): ApiError {
    return new ApiError("validation", {}, message);
  }

  body(): Record<string, unknown> {
    return { error: this.code === "validation" ? this.message : this.code, ...this.extra };
  }
}
