import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  apiGet,
  freshServiceEnv,
  type ServeProcess,
  type ServiceEnv,
  startServe,
} from "../helpers/spawn-service.ts";

describe("ascribe serve with LOG_FORMAT=json and METRICS_PORT", () => {
  let service: ServiceEnv;
  let serve: ServeProcess;

  before(async () => {
    service = await freshServiceEnv();
    serve = await startServe(
      {
        ...service.env,
        LOG_FORMAT: "json",
        LOG_LEVEL: "info",
        METRICS_PORT: "0",
        RULES_INTERVAL_SECONDS: "0",
      },
      180_000,
    );
  });
  after(async () => {
    await serve?.stop();
    await service?.cleanup();
  });

  test("the banner is on stderr, with the metrics address; every stdout line is JSON", async () => {
    const key = serve.demoKey;
    assert.ok(key, "a fresh start seeds the demo and prints its key");
    assert.match(serve.stderr(), /^Ascribe is running$/m);
    const metricsUrl = /^ {2}metrics: {2}(http:\/\/127\.0\.0\.1:\d+\/metrics)$/m.exec(serve.stderr())?.[1];
    assert.ok(metricsUrl, `no metrics line in:\n${serve.stderr()}`);

    const site = serve.baseUrl.replace(/\/api\/v1$/, "");
    assert.equal((await apiGet(serve.baseUrl, "/icp/criteria", key)).status, 200);
    assert.equal((await fetch(`${site}/healthz`)).status, 200);
    const ready = await fetch(`${site}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), {
      status: "ready",
      checks: { database: "ok", migrations: "ok", counters: process.env.REDIS_URL ? "redis" : "memory" },
    });

    const metrics = await (await fetch(metricsUrl)).text();
    assert.match(
      metrics,
      /^ascribe_http_requests_total\{method="GET",route="\/api\/v1\/icp\/criteria",status="200"\} 1$/m,
    );

    const exit = await serve.stop();
    assert.equal(exit.code, 0);
    const lines = serve
      .stdout()
      .split("\n")
      .filter((l) => l !== "");
    assert.ok(lines.length > 0);
    for (const line of lines) {
      assert.doesNotThrow(() => JSON.parse(line), `not JSON: ${line}`);
    }
    const access = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === "request" && l.route === "/api/v1/icp/criteria");
    assert.ok(access, "the API request's access line");
    assert.equal(access.status, 200);
    assert.equal(access.key_prefix, key.slice(12, 20));
    assert.equal(typeof access.reqId, "string");
    assert.equal(serve.stdout().includes(key), false, "the key is never logged");
  });
});
