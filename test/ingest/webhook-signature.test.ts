import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { test } from "node:test";
import { signPayload, verifySignature } from "../../src/ingest/webhook-signature.ts";

const secret = "whsec_test_secret";
const body = '{"id":"evt_1","event_type":"lead","contact_email":"a@b.co"}';
const t = 1_790_000_000;
// Computed here independently of the module.
const mac = createHmac("sha256", secret).update(`${t}.${body}`).digest("hex");

test("the header is t=<seconds>,v1=<hex HMAC of t.body>", () => {
  assert.equal(signPayload(secret, body, t), `t=${t},v1=${mac}`);
});

test("a valid signature within five minutes is accepted, either side of now", () => {
  assert.deepEqual(verifySignature(secret, body, `t=${t},v1=${mac}`, t + 300), { ok: true, timestamp: t });
  assert.deepEqual(verifySignature(secret, body, `t=${t},v1=${mac}`, t - 300), { ok: true, timestamp: t });
  assert.deepEqual(verifySignature(secret, Buffer.from(body), `t=${t}, v1=${mac.toUpperCase()}`, t), {
    ok: true,
    timestamp: t,
  });
});

test("rotation: one of several v1 values may match", () => {
  assert.equal(verifySignature(secret, body, `t=${t},v1=${"0".repeat(64)},v1=${mac}`, t).ok, true);
});

test("rejected: wrong secret, altered body, stale or future timestamp, malformed or missing header", () => {
  const wrong = signPayload("another_secret", body, t);
  assert.deepEqual(verifySignature(secret, body, wrong, t), { ok: false, reason: "mismatch" });
  assert.deepEqual(verifySignature(secret, body.replace("lead", "sale"), `t=${t},v1=${mac}`, t), {
    ok: false,
    reason: "mismatch",
  });
  // The timestamp is signed: moving it to look fresh breaks the signature.
  assert.deepEqual(verifySignature(secret, body, `t=${t + 1000},v1=${mac}`, t + 1000), {
    ok: false,
    reason: "mismatch",
  });
  assert.deepEqual(verifySignature(secret, body, `t=${t},v1=${mac}`, t + 301), {
    ok: false,
    reason: "stale",
  });
  assert.deepEqual(verifySignature(secret, body, `t=${t},v1=${mac}`, t - 301), {
    ok: false,
    reason: "stale",
  });
  for (const header of [`v1=${mac}`, `t=${t}`, `t=abc,v1=${mac}`, `t=${t},v1=xyz`, "garbage"]) {
    assert.deepEqual(verifySignature(secret, body, header, t), { ok: false, reason: "malformed" }, header);
  }
  assert.deepEqual(verifySignature(secret, body, undefined, t), { ok: false, reason: "missing" });
});
