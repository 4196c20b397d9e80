import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { after, before, describe, test } from "node:test";
import type { LightMyRequestResponse } from "fastify";
import { SMTPServer } from "smtp-server";
import { inviteMember } from "../../src/admin/members.ts";
import { createSmtpMailer, type Mailer, printOnlyMailer } from "../../src/people/mailer.ts";
import { linkHolder } from "../../src/people/one-time-links.ts";
import {
  createTestApp,
  openTestDatabase,
  seedAccount,
  TEST_SITE_URL,
  type TestApp,
} from "../helpers/harness.ts";

/** A mail as the SMTP server received it: the envelope's recipients, headers and decoded body. */
interface ReceivedMail {
  from: string;
  to: string[];
  headers: string;
  text: string;
}

/** The body of a single-part mail as nodemailer writes it (7bit, quoted-printable or base64). */
function decodeBody(headers: string, body: string): string {
  const encoding = /^content-transfer-encoding:\s*(\S+)/im.exec(headers)?.[1]?.toLowerCase() ?? "7bit";
  if (encoding === "base64") return Buffer.from(body.replace(/\s+/g, ""), "base64").toString("utf8");
  if (encoding !== "quoted-printable") return body;
  const bytes = body
    .replace(/=\r?\n/g, "")
    .replace(/=([0-9A-F]{2})/gi, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
  return Buffer.from(bytes, "latin1").toString("utf8");
}

function parseMail(raw: string, from: string, to: string[]): ReceivedMail {
  const split = raw.indexOf("\r\n\r\n");
  const headers = raw.slice(0, split);
  return { from, to, headers, text: decodeBody(headers, raw.slice(split + 4)).replace(/\r\n/g, "\n") };
}

/** A real SMTP server on a free port of 127.0.0.1, keeping every mail it accepts. */
async function startSmtp() {
  const mails: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : "";
        const to = session.envelope.rcptTo.map((r) => r.address);
        mails.push(parseMail(Buffer.concat(chunks).toString("utf8"), from, to));
        callback();
      });
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  return {
    mails,
    url: `smtp://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const FROM = "Ascribe <no-reply@example.com>";

let smtp: Awaited<ReturnType<typeof startSmtp>>;
let db: Awaited<ReturnType<typeof openTestDatabase>>;
let app: TestApp;
let mailer: Mailer;

before(async () => {
  smtp = await startSmtp();
  mailer = createSmtpMailer(smtp.url, FROM);
  db = await openTestDatabase();
  app = await createTestApp(db, { mailer });
});
after(async () => {
  await app?.close();
  await app?.audit.close();
  await db?.close();
  await smtp?.close();
});

const mailsTo = (email: string) => smtp.mails.filter((m) => m.to.includes(email));

/** The mails to `email` once at least one has arrived (at most 5 s). */
async function arrived(email: string): Promise<ReceivedMail[]> {
  for (const deadline = Date.now() + 5_000; Date.now() < deadline; ) {
    if (mailsTo(email).length > 0) return mailsTo(email);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return mailsTo(email);
}

describe("invitations by SMTP", () => {
  test("inviting a member mails them the one-time link it returns", async () => {
    const account = await seedAccount(db, { name: "Mailed Account" });
    const email = `invited.${account.accountId.slice(0, 8)}@example.com`;
    const invited = await inviteMember(
      { db, mailer, siteUrl: () => TEST_SITE_URL },
      { account: account.accountId, email, role: "member" },
    );
    assert.equal(invited.mailed, true);
    assert.match(invited.invite_url, /^http:\/\/localhost:3000\/set-password\/[A-Za-z0-9_-]{43}$/);
    const mails = mailsTo(email);
    assert.equal(mails.length, 1);
    const [mail] = mails;
    assert.deepEqual(mail?.to, [email]);
    assert.equal(mail?.from, "no-reply@example.com");
    assert.match(mail?.headers ?? "", /^From: Ascribe <no-reply@example\.com>$/m);
    assert.match(mail?.headers ?? "", /^Subject: You are invited to Mailed Account$/m);
    assert.ok(mail?.text.includes(`\n${invited.invite_url}\n`), mail?.text);
  });

  test("a mail server that refuses leaves the invitation made, its link returned and the failure named", async () => {
    const account = await seedAccount(db);
    const email = `unmailed.${account.accountId.slice(0, 8)}@example.com`;
    // Port 1 on loopback: nothing listens there, the connection is refused at once.
    const down = createSmtpMailer("smtp://127.0.0.1:1", "Ascribe <no-reply@example.com>");
    const invited = await inviteMember(
      { db, mailer: down, siteUrl: () => TEST_SITE_URL },
      { account: account.accountId, email, role: "member" },
    );
    assert.equal(invited.mailed, false);
    assert.match(invited.mail_error ?? "", /ECONNREFUSED/);
    assert.ok(await linkHolder(db, invited.invite_url.split("/").pop() ?? "", new Date()));
  });

  test("without SMTP nothing is sent: the link is only returned", async () => {
    const account = await seedAccount(db);
    const email = `printed.${account.accountId.slice(0, 8)}@example.com`;
    const before = smtp.mails.length;
    const invited = await inviteMember(
      { db, mailer: printOnlyMailer, siteUrl: () => TEST_SITE_URL },
      { account: account.accountId, email, role: "member" },
    );
    assert.equal(invited.mailed, false);
    assert.match(invited.invite_url, /^http:\/\/localhost:3000\/set-password\//);
    assert.equal(smtp.mails.length, before);
  });
});

function cookieValue(res: LightMyRequestResponse, name: string): string | null {
  for (const c of [res.headers["set-cookie"] ?? []].flat()) {
    const match = new RegExp(`^${name}=([^;]*)`).exec(String(c));
    if (match) return match[1] ?? "";
  }
  return null;
}

/** A signed-out form: its CSRF field and the form cookie that must come back with it. */
async function openForm(path: string, cookie?: string) {
  const page = await app.inject({ method: "GET", url: path, headers: cookie ? { cookie } : {} });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? "";
  const formCookie = cookieValue(page, "ascribe_form");
  return { page, csrf, cookie: formCookie === null ? (cookie ?? "") : `ascribe_form=${formCookie}` };
}

function postForm(path: string, cookie: string, fields: Record<string, string>) {
  return app.inject({
    method: "POST",
    url: path,
    headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
    payload: new URLSearchParams(fields).toString(),
  });
}

/** The page's words, without markup: what a reader sees. */
const pageText = (html: string) =>
  html
    .replace(/<[^>]+>/g, " ")
    .replace(/\s+/g, " ")
    .trim();

describe("forgot password, with SMTP", () => {
  test("the reset mail's link sets a new password once and signs in", async () => {
    const account = await seedAccount(db);
    const form = await openForm("/forgot-password");
    assert.equal(form.page.statusCode, 200);
    assert.ok(form.csrf, "a _csrf field");
    assert.match(form.cookie, /^ascribe_form=.+/);

    const sent = await postForm("/forgot-password", form.cookie, { _csrf: form.csrf, email: account.owner });
    assert.equal(sent.statusCode, 200);
    // The mail leaves after the page answered (the answer's time says nothing about the email).
    const mails = await arrived(account.owner);
    assert.equal(mails.length, 1);
    assert.match(mails[0]?.headers ?? "", /^Subject: Reset your Ascribe password$/m);
    const link = /http:\/\/localhost:3000(\/set-password\/[A-Za-z0-9_-]{43})\n/.exec(
      mails[0]?.text ?? "",
    )?.[1];
    assert.ok(link, mails[0]?.text);

    const setForm = await openForm(link, form.cookie);
    assert.equal(setForm.page.statusCode, 200);
    assert.match(setForm.page.body, /Choose a new password/);
    const password = "a brand new long password";
    const set = await postForm(link, setForm.cookie, { _csrf: setForm.csrf, password, confirm: password });
    assert.equal(set.statusCode, 303, set.body);
    assert.equal(set.headers.location, "/");
    assert.match(cookieValue(set, "ascribe_session") ?? "", /^[A-Za-z0-9_-]{43}$/);

    const again = await app.inject({ method: "GET", url: link });
    assert.equal(again.statusCode, 410);
  });

  test("an unknown email gets the same page, and no mail", async () => {
    const account = await seedAccount(db);
    const form = await openForm("/forgot-password");
    const known = await postForm("/forgot-password", form.cookie, { _csrf: form.csrf, email: account.owner });
    const unknownEmail = `nobody.${account.accountId.slice(0, 8)}@example.com`;
    assert.equal((await arrived(account.owner)).length, 1);
    const before = smtp.mails.length;
    const unknown = await postForm("/forgot-password", form.cookie, {
      _csrf: form.csrf,
      email: unknownEmail,
    });
    assert.equal(unknown.statusCode, known.statusCode);
    assert.equal(
      pageText(unknown.body).replace(unknownEmail, "EMAIL"),
      pageText(known.body).replace(account.owner, "EMAIL"),
    );
    // Time for a mail that should not leave to arrive anyway.
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.equal(smtp.mails.length, before);
    assert.equal(mailsTo(unknownEmail).length, 0);
  });
});
