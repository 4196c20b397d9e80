import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { updateAccountSettings } from "../admin/accounts.ts";
import { changeMemberRole, inviteMember, listMembers, removeMember } from "../admin/members.ts";
import { ApiError } from "../http/errors.ts";
import { isManager } from "../people/person.ts";
import { type Viewer, viewerOr } from "./page-guard.tsx";
import { postedBy, problemOf } from "./posted-form.tsx";
import { sendPage } from "./send-page.tsx";
import { AccountView } from "./views/account-view.tsx";
import { type InvitedFlash, MembersView, RemoveMemberView } from "./views/members-view.tsx";
import type { WebDeps } from "./web-deps.ts";
import { setFlash, takeFlash } from "./web-request.ts";

/** Settings → members and account (the keys have their own file, api-keys-routes.tsx). */
export function registerSettingsRoutes(app: FastifyInstance, deps: WebDeps): void {
  app.get("/settings", async (request, reply) =>
    viewerOr(request, reply) ? reply.redirect("/settings/api-keys", 303) : reply,
  );

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
