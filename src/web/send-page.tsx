import type { FastifyReply } from "fastify";
import type { VNode } from "preact";
import { MessageView } from "./views/auth-views.tsx";
import { documentHtml } from "./views/layout.tsx";

/** Answers a whole HTML page. */
export function sendPage(reply: FastifyReply, page: VNode, status = 200) {
  return reply.status(status).type("text/html; charset=utf-8").send(documentHtml(page));
}

/** A failure of ours: the detail is in the log, never on the page. */
export function serverErrorPage(reply: FastifyReply) {
  return sendPage(
    reply,
    <MessageView
      title="Something went wrong"
      message="The page could not be shown. Try again in a moment; if it persists, the server's log says why."
      link={{ href: "/", label: "Back to Ascribe" }}
    />,
    500,
  );
}

/** A state-changing form without its CSRF token (or sent cross-site): refused, nothing changed. */
export function formRefusedPage(reply: FastifyReply) {
  return sendPage(
    reply,
    <MessageView
      title="Form expired"
      message="This form was not sent from this site's own page, or it is too old. Open the page again and retry."
      link={{ href: "/", label: "Back to Ascribe" }}
    />,
    403,
  );
}
