import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ZodError } from "zod";
import { updateAccountSettings } from "../admin/accounts.ts";
import { createKey, revokeKey } from "../admin/keys.ts";
import { changeMemberRole, inviteMember, listMembers, removeMember } from "../admin/members.ts";
import { ApiError } from "../http/errors.ts";
import { validationMessage } from "../http/pipeline.ts";
import { isManager } from "../people/person.ts";
import { accountKeys } from "../queries/account-keys.ts";
import { type Viewer, viewerOr } from "./page-guard.tsx";
import { sendPage } from "./sign-in-routes.tsx";
import { AccountView } from "./views/account-view.tsx";
import {
  ApiKeysView,
  type CreatedKeyFlash,
  type KeyFormState,
  RevokeKeyView,
} from "./views/api-keys-view.tsx";
import { MessageView } from "./views/auth-views.tsx";
import { type InvitedFlash, MembersView, RemoveMemberView } from "./views/members-view.tsx";
import type { WebDeps } from "./web-deps.ts";
import { formOf, passesCsrf, setFlash, takeFlash } from "./web-request.ts";

/** A readable line for a refused change: the service's own message, never internals. */
export function problemOf(err: unknown): { message: string; status: number } | null {
  if (err instanceof ZodError) return { message: validationMessage(err), status: 400 };
  if (err instanceof ApiError) return { message: err.message, status: err.status };
  return null;
}

/**
 * A state-changing form from a signed-in person: the viewer when its CSRF token is right (else a
 * 403 is sent), and the fields. `managers` refuses members even when the form is forged.
 */
export function postedBy(
  request: FastifyRequest,
  reply: FastifyReply,
  managers: boolean,
): { viewer: Viewer; form: URLSearchParams } | null {
  // The token first: a cross-site post (which carries no session cookie) is a 403, not a sign-in.
  const form = formOf(request);
  if (!form || !passesCsrf(request, form)) {
    void sendPage(
      reply,
      <MessageView
        title="Form expired"
        message="This form was not sent from this site's own page. Open the page again and retry."
      />,
      403,
    );
    return null;
  }
  const viewer = viewerOr(request, reply);
  if (!viewer) return null;
  if (managers && !isManager(viewer.account.role)) {
    void sendPage(
      reply,
      <MessageView
        title="Not allowed"
        message="Only the account's owners and administrators can do this."
        link={{ href: "/", label: "Back to the overview" }}
      />,
      403,
    );
    return null;
  }
  return { viewer, form };
}

export function registerSettingsRoutes(app: FastifyInstance, deps: WebDeps): void {
  app.get("/settings", async (_request, reply) => reply.redirect("/settings/api-keys", 303));

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

  // Members: everyone sees them; owners and administrators invite, change roles and remove.
  const membersPage = async (
    request: FastifyRequest,
    reply: FastifyReply,
    viewer: Viewer,
    error?: string,
    status = 200,
  ) => {
    const flash = takeFlash<InvitedFlash>(request, reply, deps.secrets);
    const list = await listMembers(deps.db, { account: viewer.account.accountId });
    return sendPage(
      reply,
      <MembersView
        viewer={viewer}
        members={list}
        invited={flash?.kind === "member-invited" && flash.userId === viewer.signedIn.userId ? flash : null}
        error={error}
      />,
      status,
    );
  };
  app.get("/settings/members", async (request, reply) => {
    const viewer = viewerOr(request, reply);
    return viewer && membersPage(request, reply, viewer);
  });

  const memberChange = async (
    request: FastifyRequest,
    reply: FastifyReply,
    change: (viewer: Viewer, form: URLSearchParams) => Promise<InvitedFlash | null>,
  ) => {
    const posted = postedBy(request, reply, true);
    if (!posted) return reply;
    try {
      const flash = await change(posted.viewer, posted.form);
      if (flash) setFlash(reply, request.web, deps.secrets, flash);
      return reply.redirect("/settings/members", 303);
    } catch (err) {
      const problem = problemOf(err);
      if (!problem) throw err;
      return membersPage(request, reply, posted.viewer, problem.message, problem.status);
    }
  };

  app.post("/settings/members", (request, reply) =>
    memberChange(request, reply, async (viewer, form) => {
      const role = form.get("role") ?? "member";
      // An administrator cannot make owners: only an owner hands over ownership.
      if (role === "owner" && viewer.account.role !== "owner")
        throw new ApiError("forbidden", {}, "only an owner can make someone an owner");
      const invited = await inviteMember(deps, {
        account: viewer.account.accountId,
        email: form.get("email") ?? "",
        role: role as "member",
      });
      return {
        kind: "member-invited",
        userId: viewer.signedIn.userId,
        email: invited.email,
        url: invited.invite_url,
        mailed: invited.mailed,
        mailError: invited.mail_error,
      };
    }),
  );

  app.post("/settings/members/role", (request, reply) =>
    memberChange(request, reply, async (viewer, form) => {
      const role = form.get("role") ?? "";
      if ((role === "owner" || form.get("current") === "owner") && viewer.account.role !== "owner")
        throw new ApiError("forbidden", {}, "only an owner can make or unmake owners");
      await changeMemberRole(deps.db, {
        account: viewer.account.accountId,
        email: form.get("email") ?? "",
        role: role as "member",
      });
      return null;
    }),
  );

  app.get<{ Querystring: { email?: string } }>("/settings/members/remove", async (request, reply) => {
    const viewer = viewerOr(request, reply);
    if (!viewer) return reply;
    if (!isManager(viewer.account.role)) return reply.redirect("/settings/members", 303);
    return sendPage(reply, <RemoveMemberView viewer={viewer} email={request.query.email ?? ""} />);
  });
  app.post("/settings/members/remove", (request, reply) =>
    memberChange(request, reply, async (viewer, form) => {
      const email = form.get("email") ?? "";
      const list = await listMembers(deps.db, { account: viewer.account.accountId });
      const target = list.find((m) => m.email === email.trim().toLowerCase());
      if (target?.role === "owner" && viewer.account.role !== "owner")
        throw new ApiError("forbidden", {}, "only an owner can remove an owner");
      await removeMember(deps.db, { account: viewer.account.accountId, email });
      return null;
    }),
  );

  app.get("/settings/account", async (request, reply) => {
    const viewer = viewerOr(request, reply);
    const saved = takeFlash<{ kind: "account-saved" }>(request, reply, deps.secrets);
    return viewer && sendPage(reply, <AccountView viewer={viewer} saved={saved?.kind === "account-saved"} />);
  });
  app.post("/settings/account", async (request, reply) => {
    const posted = postedBy(request, reply, true);
    if (!posted) return reply;
    try {
      await updateAccountSettings(deps.db, {
        account: posted.viewer.account.accountId,
        name: posted.form.get("name") ?? "",
        timezone: posted.form.get("timezone") ?? "",
      });
    } catch (err) {
      const problem = problemOf(err);
      if (!problem) throw err;
      return sendPage(reply, <AccountView viewer={posted.viewer} error={problem.message} />, problem.status);
    }
    setFlash(reply, request.web, deps.secrets, { kind: "account-saved" });
    return reply.redirect("/settings/account", 303);
  });
}
