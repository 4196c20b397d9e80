import { timingSafeEqual } from "node:crypto";
import type {} from "@fastify/cookie";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { SecretBox } from "../crypto/secret-box.ts";
import { isWellFormedToken, newSecretToken } from "../people/secret-token.ts";
import type { SignedIn } from "../people/sessions.ts";
import type { WebDeps } from "./web-deps.ts";

/**
 * Cookies of the application. On https the session cookie takes the `__Host-` prefix: the browser
 * then refuses it unless Secure, host-only and for the whole site.
 */
export interface CookieNames {
  session: string;
  /** Before sign-in, the double-submit CSRF token of the sign-in, reset and set-password forms. */
  preSession: string;
  /** A sealed one-time message for the next page (a new key, shown once). */
  flash: string;
}

export function cookieNames(secure: boolean): CookieNames {
  const prefix = secure ? "__Host-" : "";
  return {
    session: `${prefix}ascribe_session`,
    preSession: `${prefix}ascribe_form`,
    flash: `${prefix}ascribe_flash`,
  };
}

export function isSecureSite(siteUrl: string): boolean {
  return siteUrl.startsWith("https://");
}

export interface WebState {
  /** The session cookie's value, when one was presented. */
  token: string | null;
  signedIn: SignedIn | null;
  cookies: CookieNames;
  secure: boolean;
}

declare module "fastify" {
  interface FastifyRequest {
    web: WebState;
  }
}

/** Reads the session cookie into `request.web` (a hook of the application's routes only). */
export async function loadWebState(deps: WebDeps, request: FastifyRequest): Promise<void> {
  const secure = isSecureSite(deps.siteUrl());
  const cookies = cookieNames(secure);
  const token = request.cookies[cookies.session] ?? null;
  const signedIn = token ? await deps.sessions.find(token, deps.clock()) : null;
  request.web = { token, signedIn, cookies, secure };
}

function cookieOptions(state: WebState, maxAgeSeconds?: number) {
  return {
    path: "/",
    httpOnly: true,
    sameSite: "lax" as const,
    secure: state.secure,
    ...(maxAgeSeconds === undefined ? {} : { maxAge: maxAgeSeconds }),
  };
}

export function setSessionCookie(reply: FastifyReply, state: WebState, token: string, maxAgeMs: number) {
  reply.setCookie(state.cookies.session, token, cookieOptions(state, Math.floor(maxAgeMs / 1000)));
}

export function clearSessionCookie(reply: FastifyReply, state: WebState) {
  reply.clearCookie(state.cookies.session, cookieOptions(state));
}

/** The signed-out forms' CSRF token: the cookie's, or a new one set now. */
export function preSessionToken(request: FastifyRequest, reply: FastifyReply): string {
  const existing = request.cookies[request.web.cookies.preSession];
  if (existing && isWellFormedToken(existing)) return existing;
  const token = newSecretToken();
  reply.setCookie(request.web.cookies.preSession, token, cookieOptions(request.web));
  return token;
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** A posted form's fields; anything but a urlencoded body is refused. */
export function formOf(request: FastifyRequest): URLSearchParams | null {
  const type = request.headers["content-type"] ?? "";
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) return null;
  return new URLSearchParams(typeof request.body === "string" ? request.body : "");
}

/**
 * CSRF: a state-changing request must carry the token of its session (or, signed out, of its
 * form cookie), and a browser's own word that it comes from another site is refused outright.
 */
export function passesCsrf(request: FastifyRequest, form: URLSearchParams): boolean {
  if (request.headers["sec-fetch-site"] === "cross-site") return false;
  const sent = form.get("_csrf") ?? "";
  const expected = request.web.signedIn
    ? request.web.signedIn.csrfToken
    : request.cookies[request.web.cookies.preSession];
  return Boolean(expected) && sameSecret(sent, expected ?? "");
}

/** A one-time message sealed into a cookie for the page a redirect leads to. */
export function setFlash(reply: FastifyReply, state: WebState, secrets: SecretBox, value: unknown) {
  const sealed = secrets.seal(JSON.stringify(value), "web-flash");
  reply.setCookie(state.cookies.flash, sealed, cookieOptions(state, 300));
}

/** Reads and clears the flash: a reload no longer shows it. */
export function takeFlash<T>(request: FastifyRequest, reply: FastifyReply, secrets: SecretBox): T | null {
  const sealed = request.cookies[request.web.cookies.flash];
  if (!sealed) return null;
  reply.clearCookie(request.web.cookies.flash, cookieOptions(request.web));
  try {
    return JSON.parse(secrets.open(sealed, "web-flash")) as T;
  } catch {
    return null;
  }
}

/** A path of this site to return to after sign-in; anything else goes to the overview. */
export function safeNext(next: string | null | undefined): string {
  return next && /^\/(?![/\\])/.test(next) ? next : "/";
}
