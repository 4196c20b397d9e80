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
