import assert from "node:assert/strict";
import { createServer } from "node:net";
import { after, before, test } from "node:test";
import { answerBusy, lockDataDir, releaseDataDir } from "../../src/admin/admin-socket.ts";
import { freshServiceEnv, runCli, type ServiceEnv } from "../helpers/spawn-service.ts";

let service: ServiceEnv;
before(async () => {
  service = await freshServiceEnv();
});
after(async () => {
  await service.cleanup();
});

test("a start that fails half-way (port taken) exits 1 with one line and lets DATA_DIR go", {
  timeout: 120_000,
}, async () => {
  const squatter = createServer();
  await new Promise<void>((resolve) => squatter.listen(0, "127.0.0.1", () => resolve()));
  const address = squatter.address();
  const port = typeof address === "object" && address ? address.port : 0;
  try {
    const r = await runCli({ ...service.env, PORT: String(port) }, ["serve"]);
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /^ascribe: listen EADDRINUSE.*\n$/m);
    // Nothing holds the data directory any more: the next process can take it.
    const lock = await lockDataDir(service.dataDir, answerBusy);
    await releaseDataDir(lock);
  } finally {
    squatter.close();
  }
});
