import type { FastifyReply, FastifyRequest } from "fastify";
import type { Membership, SignedIn } from "../people/sessions.ts";
import { sendPage } from "./send-page.tsx";
import { signInPage } from "./sign-in-routes.tsx";
import { MessageView } from "./views/auth-views.tsx";

export interface Viewer {
  signedIn: SignedIn;
  account: Membership;
}

/**
 * The signed-in person and the account a page shows; otherwise the answer is already sent (a 303
 * to the sign-in page, or a page saying the person belongs to no account) and null is returned.
 */
export function viewerOr(request: FastifyRequest, reply: FastifyReply): Viewer | null {
  const signedIn = request.web.signedIn;
  if (!signedIn) {
    // `/` itself is the sign-in form for someone signed out.
    if (request.url.split("?")[0] === "/") {
      void signInPage(request, reply);
      return null;
    }
    void reply.redirect(`/sign-in?next=${encodeURIComponent(request.url)}`, 303);
    return null;
  }
  if (!signedIn.account) {
    void sendPage(
      reply,
      <MessageView
        title="No account"
        message="You are signed in, but you no longer belong to any account. Ask an owner to invite you again."
      />,
      403,
    );
    return null;
  }
  return { signedIn, account: signedIn.account };
}

const minuteFormats = new Map<string, Intl.DateTimeFormat>();

/** A date-time in the account's timezone, to the minute, or a dash (formats kept per timezone). */
export function formatTime(iso: string | null, timezone: string): string {
  if (!iso) return "—";
  let format = minuteFormats.get(timezone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-CA", {
      timeZone: timezone,
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    });
    minuteFormats.set(timezone, format);
  }
  return format.format(new Date(iso)).replace(",", "");
}
