import type { ComponentChildren, VNode } from "preact";
import { render } from "preact-render-to-string";
import type { SignedIn } from "../../people/sessions.ts";
import { assetPath } from "../assets.ts";

/** A whole document: the doctype and the rendered tree. */
export function documentHtml(page: VNode): string {
  return `<!doctype html>${render(page)}`;
}

export const NAV = [
  { href: "/", label: "Overview" },
  { href: "/reports/attribution", label: "Attribution" },
  { href: "/reports/sales", label: "Sales reps" },
  { href: "/reports/funnel", label: "Funnel" },
  { href: "/contacts", label: "Contacts" },
  { href: "/calls", label: "Calls" },
  { href: "/settings/api-keys", label: "Settings" },
] as const;

function Head({
  title,
  scripts,
  styles = [],
}: {
  title: string;
  scripts: readonly string[];
  styles?: readonly string[];
}) {
  return (
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{`${title} · Ascribe`}</title>
      <link rel="icon" href="data:," />
      <link rel="stylesheet" href={assetPath("app.css")} />
      {styles.map((s) => (
        <link rel="stylesheet" href={assetPath(s)} />
      ))}
      {scripts.map((s) => (
        <script src={assetPath(s)} defer />
      ))}
    </head>
  );
}

/** A page for someone signed out (sign-in, reset, set-password, errors). */
export function PublicPage({ title, children }: { title: string; children: ComponentChildren }) {
  return (
    <html lang="en">
      <Head title={title} scripts={[]} />
      <body class="public">
        <main id="main" class="card narrow">
          <p class="brand">Ascribe</p>
          <h1>{title}</h1>
          {children}
        </main>
      </body>
    </html>
  );
}

/** The token field every state-changing form carries. */
export function Csrf({ token }: { token: string }) {
  return <input type="hidden" name="_csrf" value={token} />;
}

export interface AppPageProps {
  title: string;
  signedIn: SignedIn;
  /** The page's own path, marked in the navigation. */
  path: string;
  /** Islands this page needs besides app.js (e.g. the chart). */
  scripts?: readonly string[];
  children: ComponentChildren;
}

function isCurrent(href: string, path: string): boolean {
  if (href === "/") return path === "/";
  // Every settings tab lights the one Settings link; other links light on their own pages.
  if (href.startsWith("/settings/")) return path.startsWith("/settings/");
  return path === href || path.startsWith(`${href}/`);
}

/** A page of the application: header with the navigation, account switcher and sign-out. */
export function AppPage({ title, signedIn, path, scripts = [], children }: AppPageProps) {
  const account = signedIn.account;
  return (
    <html lang="en">
      <Head
        title={title}
        scripts={["app.js", ...scripts]}
        styles={scripts.includes("uplot.js") ? ["uplot.css"] : []}
      />
      <body>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header class="top">
          <a class="brand" href="/">
            Ascribe
          </a>
          <nav aria-label="Main">
            <ul>
              {NAV.map((item) => (
                <li>
                  <a href={item.href} aria-current={isCurrent(item.href, path) ? "page" : undefined}>
                    {item.label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <div class="who">
            {signedIn.memberships.length > 1 ? (
              <form method="post" action="/switch-account" class="inline">
                <Csrf token={signedIn.csrfToken} />
                <label for="account-switch" class="visually-hidden">
                  Account
                </label>
                <select id="account-switch" name="account" data-autosubmit="">
                  {signedIn.memberships.map((m) => (
                    <option value={m.accountId} selected={m.accountId === account?.accountId}>
                      {m.name}
                    </option>
                  ))}
                </select>
                <button type="submit" class="secondary">
                  Switch
                </button>
              </form>
            ) : (
              <span class="account-name">{account?.name}</span>
            )}
            <span class="email">{signedIn.email}</span>
            <form method="post" action="/sign-out" class="inline">
              <Csrf token={signedIn.csrfToken} />
              <button type="submit" class="secondary">
                Sign out
              </button>
            </form>
          </div>
        </header>
        <main id="main">
          <h1>{title}</h1>
          {children}
        </main>
      </body>
    </html>
  );
}

/** A notice above a page's content: `status` is announced by screen readers. */
export function Notice({ kind, children }: { kind: "ok" | "error" | "info"; children: ComponentChildren }) {
  return (
    <div class={`notice ${kind}`} role={kind === "error" ? "alert" : "status"}>
      {children}
    </div>
  );
}

/**
 * A wide table's frame: it scrolls sideways inside the page on a narrow screen, and keyboard users
 * reach the scroll with Tab (axe's scrollable-region-focusable).
 */
export function ScrollRegion({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region must be focusable (WCAG 2.1.1)
    <section class="scroll" tabIndex={0} aria-label={label}>
      {children}
    </section>
  );
}

/** A value shown whole, with a button that copies it (app.js's `data-copy`). */
export function CopyLine({ id, label, value }: { id: string; label?: string; value: string }) {
  return (
    <p class="secret">
      {label && `${label}: `}
      <code id={id}>{value}</code>{" "}
      <button type="button" class="secondary" data-copy={id}>
        Copy
      </button>
    </p>
  );
}
