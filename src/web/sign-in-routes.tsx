import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { linkMail } from "../people/mailer.ts";
import { issueLink, linkHolder, redeemLink, setPasswordUrl, userByEmail } from "../people/one-time-links.ts";
import { hashPassword, passwordProblem, spendDecoy, verifyPassword } from "../people/password.ts";
import { normalizeEmail } from "../people/person.ts";
import { endAllSessions, SESSION_ABSOLUTE_MS, startSession } from "../people/sessions.ts";
import { formRefusedPage, sendPage } from "./send-page.tsx";
import { ForgotView, MessageView, SetPasswordView, SignInView } from "./views/auth-views.tsx";
import type { WebDeps } from "./web-deps.ts";
import {
  clearSessionCookie,
  formOf,
  passesCsrf,
  preSessionToken,
  safeNext,
  setSessionCookie,
} from "./web-request.ts";

/** Failed sign-ins counted per address and per email over 15 minutes; above either, wait. */
export const SIGN_IN_WINDOW_MS = 15 * 60_000;
export const SIGN_IN_LIMIT_PER_IP = 20;
export const SIGN_IN_LIMIT_PER_EMAIL = 5;
/** Reset mails asked for from one address in the same window. */
const RESET_LIMIT_PER_IP = 5;

/** The sign-in form (also what `/` shows to someone signed out). */
export function signInPage(request: FastifyRequest, reply: FastifyReply) {
  const query = request.query as { next?: string; done?: string };
  const notice = query.done === "signed-out" ? "You are signed out." : undefined;
  return sendPage(
    reply,
    <SignInView csrf={preSessionToken(request, reply)} next={safeNext(query.next)} notice={notice} />,
  );
}

/** The signed-out pages: sign-in, password reset, one-time links; and signing out. */
export function registerSignInRoutes(app: FastifyInstance, deps: WebDeps): void {
  app.get("/sign-in", async (request, reply) =>
    request.web.signedIn ? reply.redirect("/", 303) : signInPage(request, reply),
  );

  app.post("/sign-in", async (request, reply) => {
    const form = formOf(request);
    if (!form || !passesCsrf(request, form)) return formRefusedPage(reply);
    const email = normalizeEmail(form.get("email") ?? "");
    const password = form.get("password") ?? "";
    const next = safeNext(form.get("next"));
    const again = (error: string, status: number) =>
      sendPage(
        reply,
        <SignInView csrf={preSessionToken(request, reply)} next={next} email={email} error={error} />,
        status,
      );
    const ipKey = `signin-ip:${request.ip}`;
    const emailKey = `signin-email:${email}`;
    // Each attempt is counted before its password is checked, and the count decides: concurrent
    // guesses cannot all pass a check made before any of them failed. An attempt that is refused
    // or succeeds is taken back, so only failed passwords stay counted (an office behind one
    // address signing in every morning is not locked out).
    const [byIp, byEmail] = await Promise.all([
      deps.counters.hit(ipKey, SIGN_IN_WINDOW_MS),
      deps.counters.hit(emailKey, SIGN_IN_WINDOW_MS),
    ]);
    const takeBack = () =>
      Promise.all([
        deps.counters.release(ipKey, SIGN_IN_WINDOW_MS),
        deps.counters.release(emailKey, SIGN_IN_WINDOW_MS),
      ]);
    if (byIp.count > SIGN_IN_LIMIT_PER_IP || byEmail.count > SIGN_IN_LIMIT_PER_EMAIL) {
      await takeBack();
      const resetAt = Math.max(
        byIp.count > SIGN_IN_LIMIT_PER_IP ? byIp.resetAt : 0,
        byEmail.count > SIGN_IN_LIMIT_PER_EMAIL ? byEmail.resetAt : 0,
      );
      const seconds = Math.max(1, Math.ceil((resetAt - Date.now()) / 1000));
      reply.header("Retry-After", String(seconds));
      return again(
        `Too many failed sign-ins. Try again in ${Math.ceil(seconds / 60)} minute${seconds > 60 ? "s" : ""}.`,
        429,
      );
    }
    const user = await userByEmail(deps.db, email);
    // An unknown email costs the same hash as a wrong password: the time says nothing.
    if (!user) await spendDecoy(password);
    const valid = user ? await verifyPassword(password, user.passwordHash) : false;
    if (!user || !valid) return again("Wrong email or password.", 401);
    await takeBack();
    const token = await startSession(deps.db, user.id, deps.clock());
    setSessionCookie(reply, request.web, token, SESSION_ABSOLUTE_MS);
    return reply.redirect(next, 303);
  });

  app.post("/sign-out", async (request, reply) => {
    const form = formOf(request);
    if (!form || !passesCsrf(request, form)) return formRefusedPage(reply);
    const everywhere = form.get("everywhere") === "1";
    if (request.web.signedIn && everywhere) await endAllSessions(deps.db, request.web.signedIn.userId);
    else if (request.web.token) await deps.sessions.end(request.web.token);
    clearSessionCookie(reply, request.web);
    return reply.redirect("/sign-in?done=signed-out", 303);
  });

  app.post("/switch-account", async (request, reply) => {
    const form = formOf(request);
    if (!form || !passesCsrf(request, form) || !request.web.token) return formRefusedPage(reply);
    await deps.sessions.switchAccount(request.web.token, form.get("account") ?? "");
    return reply.redirect("/", 303);
  });

  app.get("/forgot-password", async (request, reply) =>
    sendPage(reply, <ForgotView csrf={preSessionToken(request, reply)} mailConfigured={deps.mailer.sends} />),
  );
  app.post("/forgot-password", async (request, reply) => {
    const form = formOf(request);
    if (!form || !passesCsrf(request, form)) return formRefusedPage(reply);
    const email = normalizeEmail(form.get("email") ?? "");
    const csrf = preSessionToken(request, reply);
    if (!deps.mailer.sends) return sendPage(reply, <ForgotView csrf={csrf} mailConfigured={false} />);
    const hit = await deps.counters.hit(`reset-ip:${request.ip}`, SIGN_IN_WINDOW_MS);
    if (hit.count > RESET_LIMIT_PER_IP) {
      return sendPage(
        reply,
        <ForgotView csrf={csrf} mailConfigured error="Too many requests from here. Try again later." />,
        429,
      );
    }
    // The same answer, in the same time, whether or not the email is known: the mail leaves after
    // the page has answered, and nothing on the page depends on it.
    const user = await userByEmail(deps.db, email);
    if (user) {
      const token = await deps.db.admin(null, (tx) => issueLink(tx, user.id, "reset", deps.clock()));
      const url = setPasswordUrl(deps.siteUrl(), token);
      void deps.mailer.send(linkMail(user.email, url, "reset")).catch((err: unknown) => {
        request.log.error({ err }, "reset mail failed");
      });
    }
    return sendPage(reply, <ForgotView csrf={csrf} mailConfigured sent={email} />);
  });

  const linkGone = (reply: FastifyReply) =>
    sendPage(
      reply,
      <MessageView
        title="This link no longer works"
        message="It was already used, it expired, or a newer link replaced it. Ask for a new one."
        link={{ href: "/forgot-password", label: "Get a new link" }}
      />,
      410,
    );

  app.get<{ Params: { token: string } }>("/set-password/:token", async (request, reply) => {
    const holder = await linkHolder(deps.db, request.params.token, deps.clock());
    if (!holder) return linkGone(reply);
    return sendPage(
      reply,
      <SetPasswordView
        csrf={preSessionToken(request, reply)}
        token={request.params.token}
        email={holder.email}
        purpose={holder.purpose}
      />,
    );
  });
  app.post<{ Params: { token: string } }>("/set-password/:token", async (request, reply) => {
    const form = formOf(request);
    if (!form || !passesCsrf(request, form)) return formRefusedPage(reply);
    const holder = await linkHolder(deps.db, request.params.token, deps.clock());
    if (!holder) return linkGone(reply);
    const password = form.get("password") ?? "";
    const problem =
      passwordProblem(password) ?? (password === form.get("confirm") ? null : "the two passwords differ");
    if (problem) {
      return sendPage(
        reply,
        <SetPasswordView
          csrf={preSessionToken(request, reply)}
          token={request.params.token}
          email={holder.email}
          purpose={holder.purpose}
          error={`Password not saved: ${problem}.`}
        />,
        400,
      );
    }
    const redeemed = await redeemLink(
      deps.db,
      request.params.token,
      await hashPassword(password),
      deps.clock(),
    );
    if (!redeemed) return linkGone(reply);
    const token = await startSession(deps.db, redeemed.userId, deps.clock());
    setSessionCookie(reply, request.web, token, SESSION_ABSOLUTE_MS);
    return reply.redirect("/", 303);
  });
}
