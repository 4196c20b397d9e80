import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { test } from "node:test";
import { chromium } from "playwright-core";
import { REFERENCE_CSP } from "../../src/catalog/reference-page.ts";
import { browserSkip, CHROMIUM } from "../helpers/browser.ts";
import { useTestApp } from "../helpers/harness.ts";

/*
 * /docs in real Chromium under its Content-Security-Policy: the reference renders, styled, from
 * this origin only, and the one refusal the policy causes is the eval probe of Scalar's bundled zod
 * (`new Function("")` in a try: it then validates without compiled code).
 */
const t = useTestApp();

interface Violation {
  directive: string;
  blocked: string;
}

test("/docs renders under its CSP with no violation but the bundle's eval probe", {
  skip: browserSkip,
}, async () => {
  await t.app.listen({ port: 0, host: "127.0.0.1" });
  const origin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--no-sandbox", "--disable-gpu"],
  });
  try {
    const page = await browser.newPage();
    const failed: string[] = [];
    page.on("response", (res) => {
      if (res.status() >= 400 && new URL(res.url()).pathname !== "/favicon.ico")
        failed.push(`${res.status()} ${res.url()}`);
    });
    page.on("requestfailed", (req) => failed.push(`failed ${req.url()}`));
    await page.addInitScript(() => {
      const seen: { directive: string; blocked: string }[] = [];
      Object.assign(window, { cspViolations: seen });
      document.addEventListener("securitypolicyviolation", (e) =>
        seen.push({ directive: e.effectiveDirective, blocked: e.blockedURI }),
      );
    });
    const res = await page.goto(`${origin}/docs`, { waitUntil: "networkidle" });
    assert.equal(res?.headers()["content-security-policy"], REFERENCE_CSP);
    assert.match(REFERENCE_CSP, /frame-ancestors 'none'/);
    // The operations of the document are listed: the script ran and read /api/v1/openapi.json.
    await page.getByText("This OpenAPI document").first().waitFor({ timeout: 20_000 });
    const styleRules = await page.evaluate(() =>
      [...document.styleSheets].reduce((n, sheet) => n + sheet.cssRules.length, 0),
    );
    assert.ok(styleRules > 100, `styles applied (${styleRules} rules)`);
    const violations = (await page.evaluate(() => Reflect.get(window, "cspViolations"))) as Violation[];
    assert.deepEqual(
      violations.filter((v) => !(v.directive === "script-src" && v.blocked === "eval")),
      [],
    );
    assert.deepEqual(failed, []);
  } finally {
    await browser.close();
  }
});
