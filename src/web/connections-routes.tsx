import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ZodError } from "zod";
import {
  addConnector,
  checkConnectors,
  errorIsCurrent,
  listConnectors,
  removeConnector,
} from "../admin/connectors.ts";
import { ApiError } from "../http/errors.ts";
import { isManager } from "../people/person.ts";
import {
  type ConnectionFormState,
  connectionInputOf,
  connectionProblem,
  refilled,
} from "./connection-form.ts";
import { type Viewer, viewerOr } from "./page-guard.tsx";
import { postedBy, problemOf } from "./posted-form.tsx";
import { sendPage } from "./send-page.tsx";
import { MessageView } from "./views/auth-views.tsx";
import {
  type AddedConnectionFlash,
  type ConnectionRow,
  ConnectionsView,
  RemoveConnectionView,
  type RemovedConnectionFlash,
} from "./views/connections-view.tsx";
import type { WebDeps } from "./web-deps.ts";
import { setFlash, takeFlash } from "./web-request.ts";

const isNotFound = (err: unknown) => err instanceof ApiError && err.status === 404;

/**
 * The account's connectors with their state, as `connectors list` and `connectors test` answer it:
 * never a secret (the check only says whether the sealed one still opens).
 */
async function connectionRows(deps: WebDeps, account: string): Promise<ConnectionRow[]> {
  const checked = await checkConnectors(deps.db, deps.secrets, deps.siteUrl(), { account });
  return checked.map(({ check, ...c }) => {
    const errorCurrent = errorIsCurrent(c);
    const unreadable = check.secret === "unreadable";
    const failing = !check.ok || unreadable;
    const never = c.last_event_at === null && c.last_sync_at === null;
    return {
      ...c,
      errorCurrent,
      status: failing ? "failing" : never ? (c.webhook_url ? "never received" : "never synced") : "ok",
      reason: unreadable
        ? "its sealed secret does not open with this instance's keys (ASCRIBE_SECRET_KEYS)"
        : errorCurrent
          ? "the last error is newer than the last event or sync"
          : null,
    };
  });
}

/** Settings → connections: everyone sees them; owners and administrators add and remove. */
export function registerConnectionsRoutes(app: FastifyInstance, deps: WebDeps): void {
  const connectionsPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    viewer: Viewer,
    form: ConnectionFormState = {},
    status = 200,
  ) => {
    const flash = takeFlash<AddedConnectionFlash | RemovedConnectionFlash>(request, reply, deps.secrets);
    const connections = await connectionRows(deps, viewer.account.accountId);
    // The secret goes only to the person who added it, in the page right after.
    const added =
      flash?.kind === "connection-added" && flash.userId === viewer.signedIn.userId ? flash : null;
    return sendPage(
      reply,
      <ConnectionsView
        viewer={viewer}
        connections={connections}
        added={added}
        removed={flash?.kind === "connection-removed" ? flash : null}
        form={form}
        manager={isManager(viewer.account.role)}
      />,
      status,
    );
  };

  app.get("/settings/connections", async (request, reply) => {
    const viewer = viewerOr(request, reply);
    return viewer && connectionsPage(request, reply, viewer);
  });

  app.post("/settings/connections", async (request, reply) => {
    const posted = postedBy(request, reply, true);
    if (!posted) return reply;
    const { viewer, form } = posted;
    try {
      const added = await addConnector(
        deps.db,
        deps.secrets,
        deps.siteUrl(),
        connectionInputOf(viewer.account.accountId, form),
      );
      const flash: AddedConnectionFlash = {
        kind: "connection-added",
        userId: viewer.signedIn.userId,
        id: added.id,
        connector: added.kind,
        webhookUrl: added.webhook_url,
        secret: added.secret,
      };
      setFlash(reply, request.web, deps.secrets, flash);
      return reply.redirect("/settings/connections", 303);
    } catch (err) {
      const problem =
        err instanceof ZodError ? { message: connectionProblem(err), status: 400 } : problemOf(err);
      if (!problem) throw err;
      return connectionsPage(request, reply, viewer, refilled(form, problem.message), problem.status);
    }
  });

  const connectionOf = async (viewer: Viewer, id: string) =>
    (await connectionRows(deps, viewer.account.accountId)).find((c) => c.id === id) ?? null;
  const noSuchConnection = (reply: FastifyReply) =>
    sendPage(
      reply,
      <MessageView
        title="No such connection"
        message="This account has no such connection."
        link={{ href: "/settings/connections", label: "Back to connections" }}
      />,
      404,
    );

  app.get<{ Params: { id: string } }>("/settings/connections/:id/remove", async (request, reply) => {
    const viewer = viewerOr(request, reply);
    if (!viewer) return reply;
    if (!isManager(viewer.account.role)) return reply.redirect("/settings/connections", 303);
    const connection = await connectionOf(viewer, request.params.id);
    return connection
      ? sendPage(reply, <RemoveConnectionView viewer={viewer} connection={connection} />)
      : noSuchConnection(reply);
  });

  app.post<{ Params: { id: string } }>("/settings/connections/:id/remove", async (request, reply) => {
    const posted = postedBy(request, reply, true);
    if (!posted) return reply;
    const account = posted.viewer.account.accountId;
    // Only an id among the current account's connectors reaches the delete (another account's is 404).
    const connection = (await listConnectors(deps.db, deps.siteUrl(), { account })).find(
      (c) => c.id === request.params.id,
    );
    if (!connection) return noSuchConnection(reply);
    try {
      await removeConnector(deps.db, { account, id: connection.id });
    } catch (err) {
      if (isNotFound(err)) return noSuchConnection(reply);
      throw err;
    }
    const flash: RemovedConnectionFlash = {
      kind: "connection-removed",
      id: connection.id,
      connector: connection.kind,
    };
    setFlash(reply, request.web, deps.secrets, flash);
    return reply.redirect("/settings/connections", 303);
  });
}
