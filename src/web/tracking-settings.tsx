import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { addDomain } from "../admin/domains.ts";
import { captureHealth } from "../attribution/capture-health.ts";
import { createCollectAccounts } from "../ingest/collect-accounts.ts";
import { attributionHealthCounts } from "../queries/attribution-health.ts";
import { trackingSetup } from "../queries/tracking-setup.ts";
import { reportWindow } from "../reports/window.ts";
import type { Tenant } from "../routes/route-def.ts";
import { parametersOfUrl } from "../tracking/test-utm-route.ts";
import { tlsAskAnswer } from "../tracking/tls-ask-route.ts";
import { gradeUtmSetup } from "../tracking/utm-grade.ts";
import { type Viewer, viewerOr } from "./page-guard.tsx";
import { postedBy, problemOf } from "./posted-form.tsx";
import { sendPage } from "./send-page.tsx";
import {
  type GraderState,
  type HostAddedFlash,
  type HostFormState,
  TrackingView,
} from "./views/tracking-view.tsx";
import type { WebDeps } from "./web-deps.ts";
import { setFlash, takeFlash } from "./web-request.ts";

/** The grader's verdict on a pasted address, parsed as the test-utm endpoint parses its `url`. */
function graded(url: string): GraderState {
  if (url === "") return { url, verdict: null };
  try {
    return { url, verdict: gradeUtmSetup(parametersOfUrl(url)) };
  } catch (err) {
    const problem = problemOf(err);
    if (!problem) throw err;
    return { url, verdict: null, error: problem.message };
  }
}

/** A repeated parameter counts by its first value, as the test-utm endpoint reads it. */
function firstString(value: unknown): string {
  const first = Array.isArray(value) ? value[0] : value;
  return typeof first === "string" ? first : "";
}

/**
 * Settings → tracking: the tag to paste, the hidden fields, the first-party hosts (owners and
 * administrators add them), the UTM grader and the capture health, each computed by the code the
 * API's and the tracking endpoints' answers come from.
 */
export function registerTrackingSettings(app: FastifyInstance, deps: WebDeps): void {
  // The certificate endpoint's own lookup (and its cache), so the page says what the proxy is told.
  const accounts = createCollectAccounts(deps.db);

  const trackingPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    viewer: Viewer,
    options: { grader?: GraderState; hostForm?: HostFormState; status?: number } = {},
  ) => {
    const flash = takeFlash<HostAddedFlash>(request, reply, deps.secrets);
    const a = viewer.account;
    const tenant: Tenant = {
      accountId: a.accountId,
      plan: a.plan,
      timezone: a.timezone,
      currency: a.currency,
    };
    const now = deps.clock();
    const { setup, health } = await deps.db.tenant(a.accountId, async (tx) => {
      const setup = await trackingSetup(tx, a.accountId);
      // The capture-health route's query and parameters: the default window, now.
      const { counts, unresolved } = await attributionHealthCounts(tx, a.accountId, {
        window: reportWindow({}, tenant, now),
        now,
      });
      return { setup, health: captureHealth(counts, unresolved) };
    });
    if (!setup) throw new Error(`account ${a.accountId} not readable by its member`);
    const hosts = await Promise.all(
      setup.hosts.map(async (host) => ({
        host,
        certificate: (await tlsAskAnswer(accounts, host)).registered,
      })),
    );
    const siteUrl = deps.siteUrl();
    const grader = options.grader ?? { url: "", verdict: null };
    return sendPage(
      reply,
      <TrackingView
        viewer={viewer}
        siteUrl={siteUrl}
        cnameTarget={new URL(siteUrl).hostname}
        clientKey={setup.client_key}
        hosts={hosts}
        added={flash?.kind === "host-added" && flash.userId === viewer.signedIn.userId ? flash.host : null}
        hostForm={options.hostForm ?? {}}
        grader={grader}
        health={health}
      />,
      options.status ?? (grader.error ? 400 : 200),
    );
  };

  app.get("/settings/tracking", async (request, reply) => {
    const viewer = viewerOr(request, reply);
    if (!viewer) return reply;
    const url = firstString((request.query as Record<string, unknown> | undefined)?.url);
    return trackingPage(request, reply, viewer, { grader: graded(url) });
  });

  app.post("/settings/tracking/hosts", async (request, reply) => {
    const posted = postedBy(request, reply, true);
    if (!posted) return reply;
    const { viewer, form } = posted;
    const host = form.get("host") ?? "";
    try {
      const added = await addDomain(deps.db, { account: viewer.account.accountId, host });
      const flash: HostAddedFlash = { kind: "host-added", userId: viewer.signedIn.userId, host: added.host };
      setFlash(reply, request.web, deps.secrets, flash);
      return reply.redirect("/settings/tracking", 303);
    } catch (err) {
      const problem = problemOf(err);
      if (!problem) throw err;
      return trackingPage(request, reply, viewer, {
        hostForm: { host, error: problem.message },
        status: problem.status,
      });
    }
  });
}
