import type { FastifyInstance, FastifyRequest } from "fastify";
import { ApiError } from "../http/errors.ts";
import { readJsonBody } from "../http/json-body.ts";
import type { BeaconRefusal, Metrics } from "../http/metrics.ts";
import { validationMessage } from "../http/pipeline.ts";
import type { CounterStore } from "../http/rate-limiter.ts";
import { beaconSchema } from "./beacon.ts";
import type { CollectServices } from "./collect-services.ts";

export { COLLECT_LIMITS, type CollectLimits } from "./collect-services.ts";

export const COLLECT_PATH = "/api/collect";
export const COLLECT_BODY_LIMIT = 16 * 1024;
const WINDOW_MS = 60_000;

export interface CollectDeps extends CollectServices {
  counters: CounterStore;
  clock: () => Date;
  metrics?: Metrics;
}
function requestHost(request: FastifyRequest): string {
  return (request.headers.host ?? "").toLowerCase().replace(/:\d+$/, "");
}

/**
 * `POST {site_url}/api/collect`: the tracking script's beacons (page view, form submission, booking),
 * `text/plain` or JSON, at most 16 KB. Answers 204 only after the write commits.
 */
export function registerCollectRoute(app: FastifyInstance, deps: CollectDeps): void {
  const limits = deps.limits;
  const refused = (reason: BeaconRefusal, error: ApiError) => {
    deps.metrics?.beaconRefused(reason);
    return error;
  };
  app.post(COLLECT_PATH, { bodyLimit: COLLECT_BODY_LIMIT }, async (request, reply) => {
    const byIp = await deps.counters.hit(`collect-ip:${request.ip}`, WINDOW_MS);
    if (byIp.count > limits.perIp)
      throw refused("rate_limited_ip", new ApiError("rate_limited", { retry_after_seconds: 60 }));

    const json = readJsonBody(typeof request.body === "string" ? request.body : "");
    if (!json.ok) throw refused("invalid_json", json.error);
    const parsed = beaconSchema.safeParse(json.value);
    if (!parsed.success)
      throw refused("invalid_beacon", ApiError.validation(validationMessage(parsed.error)));
    const beacon = parsed.data;

    const host = requestHost(request);
    const accountId = beacon.client_key
      ? await deps.accounts.byClientKey(beacon.client_key)
      : /^[a-z0-9.-]{1,253}$/.test(host)
        ? await deps.accounts.byHost(host)
        : null;
    if (!accountId)
      throw refused(
        "unknown_client_key",
        ApiError.validation("client_key: unknown client key (or unregistered tracking host)"),
      );

    const byAccount = await deps.counters.hit(`collect-account:${accountId}`, WINDOW_MS);
    if (byAccount.count > limits.perAccount)
      throw refused("rate_limited_account", new ApiError("rate_limited", { retry_after_seconds: 60 }));

    // Answered once the beacon's transaction has committed (possibly with other beacons').
    await deps.writer.write(accountId, beacon, deps.clock());
    deps.metrics?.beaconAccepted();
    return reply.status(204).send();
  });
}
