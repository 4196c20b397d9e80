import nodemailer from "nodemailer";

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

/** How one-time links reach people: SMTP when SMTP_URL is set; otherwise they are only printed. */
export interface Mailer {
  readonly sends: boolean;
  send(message: MailMessage): Promise<void>;
}

export const printOnlyMailer: Mailer = { sends: false, async send() {} };

export function createSmtpMailer(url: string, from: string): Mailer {
  const transport = nodemailer.createTransport(url);
  return {
    sends: true,
    async send(message) {
      await transport.sendMail({ from, ...message });
    },
  };
}

/** The mail carrying a one-time link. */
export function linkMail(to: string, url: string, purpose: "invite" | "reset", accountName?: string) {
  const subject =
    purpose === "invite" ? `You are invited to ${accountName ?? "Ascribe"}` : "Reset your Ascribe password";
  const text =
    purpose === "invite"
      ? `You have been invited to ${accountName ?? "an account"} on Ascribe.\n\nChoose your password here (the link works once, for 7 days):\n${url}\n`
      : `Someone asked to reset the password of ${to} on Ascribe.\n\nChoose a new password here (the link works once, for one hour):\n${url}\n\nIf it was not you, ignore this mail: your password stays as it is.\n`;
  return { to, subject, text };
}
