import type { FastifyReply, FastifyRequest } from "fastify";
import { ZodError } from "zod";
import { ApiError } from "../http/errors.ts";
import { validationMessage } from "../http/pipeline.ts";
import { isManager } from "../people/person.ts";
import { type Viewer, viewerOr } from "./page-guard.tsx";
import { formRefusedPage, sendPage } from "./send-page.tsx";
import { MessageView } from "./views/auth-views.tsx";
import { formOf, passesCsrf } from "./web-request.ts";

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
    void formRefusedPage(reply);
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
