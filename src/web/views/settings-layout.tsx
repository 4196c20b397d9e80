import type { ComponentChildren } from "preact";
import type { Viewer } from "../page-guard.tsx";
import { AppPage } from "./layout.tsx";

const TABS = [
  { href: "/settings/api-keys", label: "API keys" },
  { href: "/settings/members", label: "Members" },
  { href: "/settings/tracking", label: "Tracking" },
  { href: "/settings/connections", label: "Connections" },
  { href: "/settings/account", label: "Account" },
] as const;

/** A settings page: the application's frame with the settings tabs. */
export function SettingsPage(props: {
  title: string;
  path: string;
  viewer: Viewer;
  children: ComponentChildren;
}) {
  return (
    <AppPage title={props.title} signedIn={props.viewer.signedIn} path={props.path}>
      <nav aria-label="Settings" class="tabs">
        <ul>
          {TABS.map((t) => (
            <li>
              <a href={t.href} aria-current={t.href === props.path ? "page" : undefined}>
                {t.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      {props.children}
    </AppPage>
  );
}
