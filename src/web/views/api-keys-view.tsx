import type { ComponentChildren } from "preact";
import { READ_SCOPES, SCOPE_DOCS, type Scope, WRITE_SCOPES } from "../../auth/scopes.ts";
import type { AccountKeyRow } from "../../queries/account-keys.ts";
import { formatTime, type Viewer } from "../page-guard.tsx";
import { CopyLine, Csrf, Notice, ScrollRegion } from "./layout.tsx";
import { SettingsPage } from "./settings-layout.tsx";

export interface CreatedKeyFlash {
  kind: "key-created";
  userId: string;
  key: string;
  name: string;
}

export interface KeyFormState {
  name?: string;
  scopes?: readonly string[];
  error?: string;
}

function status(k: AccountKeyRow, now: Date): string {
  if (k.revoked_at) return "revoked";
  if (k.expires_at && Date.parse(k.expires_at) <= now.getTime()) return "expired";
  return "active";
}

function ScopeChecklist(props: {
  legend: string;
  scopes: readonly Scope[];
  chosen: ReadonlySet<string>;
  children?: ComponentChildren;
}) {
  return (
    <fieldset>
      <legend>{props.legend}</legend>
      {props.children}
      {props.scopes.map((s) => (
        <label class="check">
          <input type="checkbox" name="scopes" value={s} checked={props.chosen.has(s)} /> <code>{s}</code>{" "}
          <span class="help">{SCOPE_DOCS[s]}</span>
        </label>
      ))}
    </fieldset>
  );
}

function CreateForm({ viewer, form }: { viewer: Viewer; form: KeyFormState }) {
  const chosen: ReadonlySet<string> = new Set(form.scopes ?? READ_SCOPES);
  return (
    <form method="post" action="/settings/api-keys" class="stack create-key">
      <h2>Create a key</h2>
      {form.error && <Notice kind="error">{form.error}</Notice>}
      <Csrf token={viewer.signedIn.csrfToken} />
      <label for="key-name">Name</label>
      <input
        id="key-name"
        name="name"
        required
        maxlength={100}
        value={form.name ?? ""}
        placeholder="Reporting script"
      />
      <ScopeChecklist legend="Read access" scopes={READ_SCOPES} chosen={chosen} />
      <ScopeChecklist legend="Write access" scopes={WRITE_SCOPES} chosen={chosen}>
        <p class="help">
          Write scopes let the key change this account's settings, goals and ad rules. Grant one only to a
          script that must write.
        </p>
      </ScopeChecklist>
      <fieldset>
        <legend>Full access</legend>
        <label class="check">
          <input type="checkbox" name="full" value="1" /> Grant <code>*</code>: every scope, read and write,
          including scopes added later. Use the checklist above unless the key really needs everything.
        </label>
      </fieldset>
      <label for="key-expires">Expires</label>
      <select id="key-expires" name="expires">
        <option value="90d">in 90 days</option>
        <option value="1y">in 1 year</option>
        <option value="never">never</option>
      </select>
      <button type="submit">Create key</button>
    </form>
  );
}

export function ApiKeysView(props: {
  viewer: Viewer;
  keys: AccountKeyRow[];
  now: Date;
  created: CreatedKeyFlash | null;
  revoked: string | null;
  form: KeyFormState;
  manager: boolean;
}) {
  const { viewer, keys } = props;
  const tz = viewer.account.timezone;
  return (
    <SettingsPage title="API keys" path="/settings/api-keys" viewer={viewer}>
      {props.created && (
        <Notice kind="ok">
          <p>
            Key <strong>{props.created.name}</strong> created. Copy it now: it is shown only this once.
          </p>
          <CopyLine id="new-key" value={props.created.key} />
        </Notice>
      )}
      {props.revoked && (
        <Notice kind="ok">Key {props.revoked} is revoked: the API refuses it from now on.</Notice>
      )}
      <p>
        Keys let scripts and agents read this account through the API (<a href="/docs">reference</a>). Send
        one as <code>Authorization: Bearer KEY</code>.
      </p>
      <ScrollRegion label="API keys">
        <table>
          <caption class="visually-hidden">API keys of {viewer.account.name}</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Prefix</th>
              <th scope="col">Scopes</th>
              <th scope="col">Created</th>
              <th scope="col">Expires</th>
              <th scope="col">Last used</th>
              <th scope="col">Status</th>
              {props.manager && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {keys.length === 0 && (
              <tr>
                <td colSpan={props.manager ? 8 : 7}>No key yet.</td>
              </tr>
            )}
            {keys.map((k) => {
              const state = status(k, props.now);
              return (
                <tr>
                  <td>{k.name}</td>
                  <td>
                    <code>{k.prefix}</code>
                  </td>
                  <td>{k.scopes.join(", ")}</td>
                  <td>{formatTime(k.created_at, tz)}</td>
                  <td>{k.expires_at ? formatTime(k.expires_at, tz) : "never"}</td>
                  <td>{formatTime(k.last_used_at, tz)}</td>
                  <td>{state === "revoked" ? `revoked ${formatTime(k.revoked_at, tz)}` : state}</td>
                  {props.manager && (
                    <td>
                      {state !== "revoked" && (
                        <a
                          href={`/settings/api-keys/${k.id}/revoke`}
                          aria-label={`Revoke ${k.name} (${k.prefix})`}
                        >
                          Revoke
                        </a>
                      )}
                    </td>
                  )}
                </tr>
              );
            })}
          </tbody>
        </table>
      </ScrollRegion>
      {viewer.account.plan === "free" ? (
        <Notice kind="info">
          <p>
            <strong>plan_free_no_api</strong>: the free plan has no API access, so no key can be created, and
            the API refuses the keys listed above. Move to the pro or business plan to use the API.
          </p>
        </Notice>
      ) : props.manager ? (
        <CreateForm viewer={viewer} form={props.form} />
      ) : (
        <p class="help">Only the account's owners and administrators create and revoke keys.</p>
      )}
    </SettingsPage>
  );
}

export function RevokeKeyView(props: { viewer: Viewer; apiKey: AccountKeyRow }) {
  return (
    <SettingsPage title="Revoke a key" path="/settings/api-keys" viewer={props.viewer}>
      <p>
        Revoke <strong>{props.apiKey.name}</strong> (<code>{props.apiKey.prefix}</code>)? Every script using
        it stops working at its next request. This cannot be undone.
      </p>
      <form method="post" action={`/settings/api-keys/${props.apiKey.id}/revoke`} class="inline">
        <Csrf token={props.viewer.signedIn.csrfToken} />
        <button type="submit" class="danger">
          Revoke key
        </button>{" "}
        <a href="/settings/api-keys">Cancel</a>
      </form>
    </SettingsPage>
  );
}
