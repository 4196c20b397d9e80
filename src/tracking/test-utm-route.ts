import type { FastifyInstance, FastifyRequest } from "fastify";
import { z } from "zod";
import { ApiError } from "../http/errors.ts";
import { validationMessage } from "../http/pipeline.ts";
import type { CounterStore } from "../http/rate-limiter.ts";
import type { CollectAccounts } from "../ingest/collect-accounts.ts";
import { gradeUtmSetup } from "./utm-grade.ts";

export const TEST_UTM_PATH = "/api/webhook/test-utm";
/** Requests per IP address and minute: a set-up is tested by hand or by an agent, not in bulk. */
export const TEST_UTM_PER_IP = 60;
const WINDOW_MS = 60_000;
const BODY_LIMIT = 16 * 1024;

export interface TestUtmDeps {
  accounts: CollectAccounts;
  counters: CounterStore;
}

/** A parameter value: what a URL or a hidden field can carry. */
const value = z.string({ error: "must be a string" }).max(2000, "is longer than 2000 characters");

/** The webhook test's body: the lead's email and the parameters a form tool would forward. */
const bodySchema = z
  .record(z.string(), value.nullable(), {
    error: "body must be a JSON object of `email` and the utm_* fields",
  })
  .superRefine((body, ctx) => {
    const email = body.email;
    if (email !== undefined && email !== null && !z.string().email().safeParse(email.trim()).success)
      ctx.addIssue({ code: "custom", path: ["email"], message: "is not a valid email address" });
  });

/** `url`: a whole landing-page address as an ad would open it; its query is graded (also by Settings → tracking). */
export function parametersOfUrl(url: string): Record<string, string> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw ApiError.validation("url: is not an absolute URL");
  }
  return Object.fromEntries(parsed.searchParams);
}

function stringsOf(query: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries((query ?? {}) as Record<string, unknown>)) {
    // A repeated parameter: the first value, as a landing page's script would read it.
    const first = Array.isArray(v) ? v[0] : v;
    if (typeof first === "string") out[name] = first;
  }
  return out;
}

/**
 * `GET|POST {site_url}/api/webhook/test-utm?client_key=…` (SPEC "Tracking script and test endpoint";
 * CONTRACT): grades an ad URL set-up and writes nothing. GET takes the `utm_*` parameters in its
 * query (or a whole ad `url`); POST takes them, with the lead's `email`, in a JSON body as a form
 * tool's webhook would send them. The answer is the verdict of utm-grade.ts at the top level:
 * `grade`, `summary`, `found`, `missing`, `warnings`, `fields`.
 */
export function registerTestUtmRoute(app: FastifyInstance, deps: TestUtmDeps): void {
  const grade = async (request: FastifyRequest, params: Record<string, string>, email?: string) => {
    const byIp = await deps.counters.hit(`test-utm-ip:${request.ip}`, WINDOW_MS);
    if (byIp.count > TEST_UTM_PER_IP) throw new ApiError("rate_limited", { retry_after_seconds: 60 });

    const clientKey = stringsOf(request.query).client_key?.trim();
    if (!clientKey) throw ApiError.validation("client_key: is required (the account's client key, ck_…)");
    if (!(await deps.accounts.byClientKey(clientKey)))
      throw ApiError.validation("client_key: unknown client key");

    const { client_key: _, url, ...given } = params;
    const graded = url === undefined ? given : { ...parametersOfUrl(url), ...given };
    return { ...gradeUtmSetup(graded), ...(email === undefined ? {} : { email }) };
  };

  app.get(TEST_UTM_PATH, async (request) => grade(request, stringsOf(request.query)));

  app.post(TEST_UTM_PATH, { bodyLimit: BODY_LIMIT }, async (request) => {
    let body: unknown;
    try {
      body = JSON.parse(typeof request.body === "string" && request.body !== "" ? request.body : "{}");
    } catch {
      throw ApiError.validation("body is not valid JSON");
    }
    const parsed = bodySchema.safeParse(body);
    if (!parsed.success) throw ApiError.validation(validationMessage(parsed.error));
    const { email, ...fields } = parsed.data;
    const params = Object.fromEntries(
      Object.entries(fields).filter((entry): entry is [string, string] => typeof entry[1] === "string"),
    );
    return grade(request, params, email?.trim().toLowerCase());
  });
}
