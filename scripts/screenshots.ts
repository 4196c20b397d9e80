/**
 * `npx tsx scripts/screenshots.ts`: the README's screenshots of the application, taken in Debian's
 * Chromium from a fresh service on a temporary DATA_DIR (the demo account, signed in through the
 * one-time link its first start prints). Writes docs/screenshots/*.png.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import pino from "pino";
import { chromium } from "playwright-core";
import { loadConfig } from "../src/config.ts";
import { startService } from "../src/main.ts";

const OUT = fileURLToPath(new URL("../docs/screenshots/", import.meta.url));
const PAGES: readonly [string, string][] = [
  ["overview", "/"],
  ["attribution", "/reports/attribution"],
  ["sales", "/reports/sales"],
  ["contacts", "/contacts"],
  ["calls", "/calls"],
  ["api-keys", "/settings/api-keys"],
  ["members", "/settings/members"],
  ["tracking", "/settings/tracking"],
];

const dataDir = mkdtempSync(join(tmpdir(), "ascribe-shots-"));
const service = await startService(
  loadConfig({ PORT: "0", DATA_DIR: dataDir, RULES_INTERVAL_SECONDS: "0" }),
  pino({ level: "warn" }),
);
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
try {
  if (!service.demo) throw new Error("no demo account was seeded");
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
  await page.goto(service.demo.signInUrl);
  const password = "screenshots only";
  await page.getByLabel("New password").fill(password);
  await page.getByLabel("Repeat it").fill(password);
  await page.getByRole("button", { name: "Save and sign in" }).click();
  await page.waitForURL(`${service.siteUrl}/`);
  for (const [name, path] of PAGES) {
    await page.goto(`${service.siteUrl}${path}`);
    await page.waitForLoadState("networkidle");
    await page.screenshot({ path: join(OUT, `${name}.png`) });
    console.log(`docs/screenshots/${name}.png`);
  }
  const phone = await browser.newPage({ viewport: { width: 375, height: 740 } });
  await phone.context().addCookies(await page.context().cookies());
  await phone.goto(`${service.siteUrl}/`);
  await phone.waitForLoadState("networkidle");
  await phone.screenshot({ path: join(OUT, "overview-375.png") });
  console.log("docs/screenshots/overview-375.png");
} finally {
  await browser.close();
  await service.stop();
  rmSync(dataDir, { recursive: true, force: true });
}
