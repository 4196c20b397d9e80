import { PASSWORD_MIN_LENGTH } from "../../people/password.ts";
import { Notice, PublicPage } from "./layout.tsx";

function Hidden({ name, value }: { name: string; value: string }) {
  return <input type="hidden" name={name} value={value} />;
}

export function SignInView(props: {
  csrf: string;
  next: string;
  email?: string;
  error?: string;
  notice?: string;
}) {
  return (
    <PublicPage title="Sign in">
      {props.notice && <Notice kind="ok">{props.notice}</Notice>}
      {props.error && <Notice kind="error">{props.error}</Notice>}
      <form method="post" action="/sign-in" class="stack">
        <Hidden name="_csrf" value={props.csrf} />
        <Hidden name="next" value={props.next} />
        <label for="email">Email</label>
        <input
          id="email"
          name="email"
          type="email"
          autocomplete="username"
          required
          value={props.email ?? ""}
        />
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        <button type="submit">Sign in</button>
      </form>
      <p>
        <a href="/forgot-password">Forgot your password?</a>
      </p>
    </PublicPage>
  );
}

export function ForgotView(props: { csrf: string; sent?: string; mailConfigured: boolean; error?: string }) {
  return (
    <PublicPage title="Reset your password">
      {props.error && <Notice kind="error">{props.error}</Notice>}
      {props.sent !== undefined ? (
        <Notice kind="ok">
          If {props.sent} belongs to someone here, a link to choose a new password is on its way. It works
          once, for one hour.
        </Notice>
      ) : props.mailConfigured ? (
        <form method="post" action="/forgot-password" class="stack">
          <Hidden name="_csrf" value={props.csrf} />
          <label for="email">Email</label>
          <input id="email" name="email" type="email" autocomplete="username" required />
          <button type="submit">Send me a link</button>
        </form>
      ) : (
        <p>
          This server sends no mail (SMTP_URL is not set). Ask an administrator of your account to run{" "}
          <code>ascribe users invite --account ID --email YOU</code>, which prints a one-time link.
        </p>
      )}
      <p>
        <a href="/sign-in">Back to sign-in</a>
      </p>
    </PublicPage>
  );
}

export function SetPasswordView(props: {
  csrf: string;
  token: string;
  email: string;
  purpose: "invite" | "reset";
  error?: string;
}) {
  return (
    <PublicPage title={props.purpose === "invite" ? "Choose your password" : "Choose a new password"}>
      {props.error && <Notice kind="error">{props.error}</Notice>}
      <form method="post" action={`/set-password/${props.token}`} class="stack">
        <Hidden name="_csrf" value={props.csrf} />
        <label for="email">Email</label>
        <input id="email" type="email" autocomplete="username" value={props.email} readonly />
        <label for="password">New password</label>
        <input
          id="password"
          name="password"
          type="password"
          autocomplete="new-password"
          minlength={PASSWORD_MIN_LENGTH}
          required
          aria-describedby="password-help"
        />
        <p id="password-help" class="help">
          At least {PASSWORD_MIN_LENGTH} characters.
        </p>
        <label for="confirm">Repeat it</label>
        <input id="confirm" name="confirm" type="password" autocomplete="new-password" required />
        <button type="submit">Save and sign in</button>
      </form>
    </PublicPage>
  );
}

export function MessageView(props: {
  title: string;
  message: string;
  link?: { href: string; label: string };
}) {
  return (
    <PublicPage title={props.title}>
      <p>{props.message}</p>
      {props.link && (
        <p>
          <a href={props.link.href}>{props.link.label}</a>
        </p>
      )}
    </PublicPage>
  );
}
