import { isManager } from "../../people/person.ts";
import type { Viewer } from "../page-guard.tsx";
import { Csrf, Notice } from "./layout.tsx";
import { SettingsPage } from "./settings-layout.tsx";

const TIMEZONES = ["UTC", ...Intl.supportedValuesOf("timeZone")];

export function AccountView(props: { viewer: Viewer; saved?: boolean; error?: string }) {
  const { viewer } = props;
  const a = viewer.account;
  const manager = isManager(a.role);
  return (
    <SettingsPage title="Account" path="/settings/account" viewer={viewer}>
      {props.saved && <Notice kind="ok">Saved.</Notice>}
      {props.error && <Notice kind="error">{props.error}</Notice>}
      <dl class="facts">
        <dt>Account id</dt>
        <dd>
          <code>{a.accountId}</code>
        </dd>
        <dt>Plan</dt>
        <dd>{a.plan}</dd>
        <dt>Currency</dt>
        <dd>{a.currency}</dd>
        <dt>Your role</dt>
        <dd>{a.role}</dd>
      </dl>
      {manager ? (
        <form method="post" action="/settings/account" class="stack">
          <Csrf token={viewer.signedIn.csrfToken} />
          <label for="account-name">Name</label>
          <input id="account-name" name="name" required maxlength={200} value={a.name} />
          <label for="account-timezone">Timezone</label>
          <select id="account-timezone" name="timezone" aria-describedby="timezone-help">
            {(TIMEZONES.includes(a.timezone) ? TIMEZONES : [a.timezone, ...TIMEZONES]).map((tz) => (
              <option value={tz} selected={tz === a.timezone}>
                {tz}
              </option>
            ))}
          </select>
          <p id="timezone-help" class="help">
            Reports count days in this timezone.
          </p>
          <button type="submit">Save</button>
        </form>
      ) : (
        <dl class="facts">
          <dt>Name</dt>
          <dd>{a.name}</dd>
          <dt>Timezone</dt>
          <dd>{a.timezone}</dd>
        </dl>
      )}
      <form method="post" action="/sign-out" class="stack">
        <Csrf token={viewer.signedIn.csrfToken} />
        <input type="hidden" name="everywhere" value="1" />
        <button type="submit" class="secondary">
          Sign out everywhere
        </button>
        <p class="help">Ends your sessions on every device and browser.</p>
      </form>
    </SettingsPage>
  );
}
