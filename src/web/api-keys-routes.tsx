import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { createKey, revokeKey } from "../admin/keys.ts";
import { isManager } from "../people/person.ts";
import { accountKeys } from "../queries/account-keys.ts";
import { type Viewer, viewerOr } from "./page-guard.tsx";
import { postedBy, problemOf } from "./posted-form.tsx";
import { sendPage } from "./send-page.tsx";
import {
  ApiKeysView,
  type CreatedKeyFlash,
  type KeyFormState,
  RevokeKeyView,
} from "./views/api-keys-view.tsx";
import { MessageView } from "./views/auth-views.tsx";
import type { WebDeps } from "./web-deps.ts";
import { setFlash, takeFlash } from "./web-request.ts";

/** Settings → API keys (SPEC's key table): everyone sees them; owners and administrators create and revoke. */
export function registerApiKeysRoutes(app: FastifyInstance, deps: WebDeps): void {
  const keysPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    viewer: Viewer,
    form: KeyFormState = {},
    status = 200,
  ) => {
    const flash = takeFlash<CreatedKeyFlash | { kind: "key-revoked"; prefix: string }>(
      request,
      reply,
      deps.secrets,
    );
    const keys = await deps.db.tenant(viewer.account.accountId, (tx) =>
      accountKeys(tx, viewer.account.accountId),
    );
    const created = flash?.kind === "key-created" && flash.userId === viewer.signedIn.userId ? flash : null;
    return sendPage(
      reply,
      <ApiKeysView
        viewer={viewer}
        keys={keys}
        now={deps.clock()}
        created={created}
        revoked={flash?.kind === "key-revoked" ? flash.prefix : null}
        form={form}
        manager={isManager(viewer.account.role)}
      />,
      status,
    );
  };

  app.get("/settings/api-keys", async (request, reply) => {
    const viewer = viewerOr(request, reply);
    return viewer && keysPage(request, reply, viewer);
  });

  app.post("/settings/api-keys", async (request, reply) => {
    const posted = postedBy(request, reply, true);
    if (!posted) return reply;
    const { viewer, form } = posted;
    const name = form.get("name") ?? "";
    const scopes = form.get("full") === "1" ? ["*"] : form.getAll("scopes");
    try {
      const created = await createKey(
        deps.db,
        {
          account: viewer.account.accountId,
          as: viewer.signedIn.email,
          name,
          scopes,
          expires: (form.get("expires") ?? "90d") as "never",
        },
        deps.clock(),
      );
      const flash: CreatedKeyFlash = {
        kind: "key-created",
        userId: viewer.signedIn.userId,
        key: created.key,
        name,
      };
      setFlash(reply, request.web, deps.secrets, flash);
      return reply.redirect("/settings/api-keys", 303);
    } catch (err) {
      const problem = problemOf(err);
      if (!problem) throw err;
      return keysPage(request, reply, viewer, { name, scopes, error: problem.message }, problem.status);
    }
  });

  const keyOf = async (viewer: Viewer, id: string) => {
    const keys = await deps.db.tenant(viewer.account.accountId, (tx) =>
      accountKeys(tx, viewer.account.accountId),
    );
    return keys.find((k) => k.id === id) ?? null;
  };
  const noSuchKey = (reply: FastifyReply) =>
    sendPage(
      reply,
      <MessageView
        title="No such key"
        message="This account has no such key."
        link={{ href: "/settings/api-keys", label: "Back to API keys" }}
      />,
      404,
    );

  app.get<{ Params: { id: string } }>("/settings/api-keys/:id/revoke", async (request, reply) => {
    const viewer = viewerOr(request, reply);
    if (!viewer) return reply;
    if (!isManager(viewer.account.role)) return reply.redirect("/settings/api-keys", 303);
    const key = await keyOf(viewer, request.params.id);
    return key ? sendPage(reply, <RevokeKeyView viewer={viewer} apiKey={key} />) : noSuchKey(reply);
  });

  app.post<{ Params: { id: string } }>("/settings/api-keys/:id/revoke", async (request, reply) => {
    const posted = postedBy(request, reply, true);
    if (!posted) return reply;
    const key = await keyOf(posted.viewer, request.params.id);
    if (!key) return noSuchKey(reply);
    await revokeKey(
      deps.db,
      { account: posted.viewer.account.accountId, as: posted.viewer.signedIn.email, key: key.id },
      deps.clock(),
    );
    setFlash(reply, request.web, deps.secrets, { kind: "key-revoked", prefix: key.prefix });
    return reply.redirect("/settings/api-keys", 303);
  });
}
