import type { LightMyRequestResponse } from "fastify";
import type { Database } from "../../src/db/client.ts";
import { userByEmail } from "../../src/people/one-time-links.ts";
import { startSession } from "../../src/people/sessions.ts";
import type { TestApp } from "./harness.ts";

/**
 * The application's pages without a browser: a session for a member (made as sign-in makes it),
 * its cookie, and the CSRF token its forms carry.
 */
export interface WebSession {
  cookie: string;
  csrf: string;
  get(path: string): Promise<LightMyRequestResponse>;
  post(path: string, fields: Record<string, string | string[]>): Promise<LightMyRequestResponse>;
}

export async function signedIn(app: TestApp, db: Database, email: string): Promise<WebSession> {
  const user = await userByEmail(db, email);
  if (!user) throw new Error(`no user ${email}`);
  const token = await startSession(db, user.id, new Date());
  const cookie = `ascribe_session=${token}`;
  const csrfPage = await app.inject({ method: "GET", url: "/settings/account", headers: { cookie } });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(csrfPage.body)?.[1];
  if (!csrf) throw new Error(`no CSRF token on /settings/account (${csrfPage.statusCode})`);
  return {
    cookie,
    csrf,
    get: (path) => app.inject({ method: "GET", url: path, headers: { cookie } }),
    post: (path, fields) => {
      const body = new URLSearchParams();
      body.set("_csrf", csrf);
      for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) body.append(k, one);
      return app.inject({
        method: "POST",
        url: path,
        headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
        payload: body.toString(),
      });
    },
  };
}
