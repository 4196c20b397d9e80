import { existsSync, readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { after, before } from "node:test";
import { sql } from "drizzle-orm";
import { type Browser, type BrowserContext, chromium, type Request } from "playwright-core";
import { type Database, rows } from "../../src/db/client.ts";
import { createMemoryCounterStore } from "../../src/http/rate-limiter.ts";
import { bearer, createTestApp, openTestDatabase } from "./harness.ts";

/*
 * track.js in real Chromium (Debian's, installed by .ci/run; TRACKING.md §6): fixture pages on https
 * origins served by route interception, the script and its beacons forwarded to the real server
 * (with the page's Host, so a first-party tracking host resolves), effects checked in the browser's
 * cookies and DOM and through the database.
 */
export const CHROMIUM = "/usr/bin/chromium";
/** Where fixture pages load the script from: forwarded to the test server. */
export const SERVICE = "https://ascribe.test";
export const browserSkip =
  !existsSync(CHROMIUM) && process.env.CI !== "true" ? "chromium is not installed" : false;

/** Where fixture pages load front-end libraries from (served from node_modules). */
export const ASSETS = "https://assets.test";
const LIBRARIES: Record<string, string> = {
  "/react.js": "react/umd/react.production.min.js",
  "/react-dom.js": "react-dom/umd/react-dom.production.min.js",
  "/vue.js": "vue/dist/vue.global.prod.js",
};

/** A fixture's answer: an HTML page, or what a handler makes of the request (an API's answer). */
export type Fixture = string | ((request: Request) => { status: number; body: string; contentType?: string });

export interface BrowserHarness {
  db: Database;
  /** A browser context whose https pages come from `pages` (by URL without query); requests to
   * `forwarded` hosts (and to SERVICE) reach the real server with their own Host header. */
  contextWith(pages: Record<string, Fixture>, forwarded?: string[]): Promise<BrowserContext>;
  /** GET {base_url}{path} with a key (its `data`), as an API client reads what the browser sent. */
  api<T>(key: string, path: string): Promise<T>;
}

/** Opens a database, the app on a real port and Chromium for one test file. */
export function useBrowser(): BrowserHarness {
  let db: Database;
  let app: Awaited<ReturnType<typeof createTestApp>>;
  let serverUrl: string;
  let browser: Browser;
  before(async () => {
    if (browserSkip) return;
    db = await openTestDatabase();
    app = await createTestApp(db, { counters: createMemoryCounterStore() });
    await app.listen({ port: 0, host: "127.0.0.1" });
    serverUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
      ],
    });
  });
  after(async () => {
    if (browserSkip) return;
    await browser.close();
    await app.close();
    await app.audit.close();
    await db.close();
  });

  return {
    get db() {
      return db;
    },
    async api(key, path) {
      const res = await app.inject({ method: "GET", url: `/api/v1${path}`, headers: bearer(key) });
      if (res.statusCode !== 200) throw new Error(`GET ${path}: ${res.statusCode} ${res.body}`);
      return (res.json() as { data: never }).data;
    },
    async contextWith(pages, forwarded = []) {
      const context = await browser.newContext({ ignoreHTTPSErrors: true });
      await context.route("**/*", async (route) => {
        const request = route.request();
        const url = new URL(request.url());
        if (url.origin === SERVICE || forwarded.includes(url.host)) {
          try {
            const response = await route.fetch({
              url: `${serverUrl}${url.pathname}${url.search}`,
              headers: { ...request.headers(), host: url.host },
            });
            return await route.fulfill({ response });
          } catch (err) {
            // A beacon sent as a page goes away can still be in flight when the test closes its
            // context (a CI leg once failed on it): nothing is left to answer. Anything else fails.
            if (isDisposed(err)) return;
            throw err;
          }
        }
        const library = url.origin === ASSETS && LIBRARIES[url.pathname];
        if (library)
          return route.fulfill({
            status: 200,
            contentType: "application/javascript",
            body: readFileSync(new URL(`../../node_modules/${library}`, import.meta.url), "utf8"),
          });
        const page = pages[`${url.origin}${url.pathname}`];
        if (page === undefined) return route.fulfill({ status: 404, body: "" });
        if (typeof page === "function") {
          const { status, body, contentType = "application/json" } = page(request);
          return route.fulfill({ status, body, contentType });
        }
        return route.fulfill({ status: 200, contentType: "text/html", body: page });
      });
      return context;
    },
  };
}

/** Playwright's refusal of a route whose context, page or browser was closed meanwhile. */
function isDisposed(err: unknown): boolean {
  return err instanceof Error && /context disposed|has been closed/i.test(err.message);
}

/** A landing page with the tag in its head. */
export const landing = (clientKey: string, body = "", head = "", src = `${SERVICE}/api/track.js`) =>
  `<!doctype html><html><head>${head}<script src="${src}" data-client="${clientKey}"></script></head><body>${body}</body></html>`;

export interface StoredTouch {
  event_type: string;
  utm: Record<string, string>;
  ad_ids: Record<string, string>;
  click_ids: Record<string, string>;
  channel: string | null;
  email: string | null;
  phone: string | null;
}

/** The account's touchpoints, oldest first, with the email and phone of the contact each is joined to. */
export async function storedTouches(db: Database, accountId: string): Promise<StoredTouch[]> {
  return db.admin(accountId, (tx) =>
    rows<StoredTouch>(
      tx,
      sql`select t.event_type, t.utm, t.ad_ids, t.click_ids, t.channel, c.email, c.phone
            from touchpoints t left join contacts c on c.account_id = t.account_id and c.id = t.contact_id
           where t.account_id = ${accountId} order by t.occurred_at, t.created_at`,
    ),
  );
}

/**
 * Waits until the account holds `expected` touchpoints (a beacon is answered after its commit; the
 * page does not wait for the answer), then a little longer, so that one too many shows.
 */
export async function touches(db: Database, accountId: string, expected: number): Promise<StoredTouch[]> {
  // A deadline, not a count of tries: with every test file of a CI leg sharing two cores, a
  // page's beacon has been seen to take over 5 s to land (the count of 50 tries gave up at ~5.5 s).
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const found = await storedTouches(db, accountId);
    if (found.length >= expected) {
      await new Promise((r) => setTimeout(r, 300));
      return storedTouches(db, accountId);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`fewer than ${expected} touchpoints`);
}

/** The ad click of the tests: Meta's parameter set with an fbclid, on a co.uk shop. */
export const AD_QUERY =
  "?utm_source=facebook&utm_medium=paid&utm_campaign=Spring&utm_content=Video%203" +
  "&utm_term=Lookalike&utm_campaign_id=120210000000001&utm_adset_id=120210000000002&utm_ad_id=120210000000003&fbclid=IwAR0AbCdE";
