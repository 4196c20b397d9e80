import type { ConnectorKind } from "../../admin/connectors.ts";
import { CONNECTOR_KINDS } from "../../admin/connectors.ts";
import {
  type ConnectionField,
  type ConnectionFormState,
  GOOGLE_FIELDS,
  KIND_HELP,
  KIND_NAMES,
  META_FIELDS,
  WEBHOOK_FIELDS,
} from "../connection-form.ts";
import { formatTime, type Viewer } from "../page-guard.tsx";
import { CopyLine, Csrf, Notice, ScrollRegion } from "./layout.tsx";
import { SettingsPage } from "./settings-layout.tsx";

export interface AddedConnectionFlash {
  kind: "connection-added";
  userId: string;
  id: string;
  connector: ConnectorKind;
  webhookUrl: string | null;
  secret: string | null;
}

export interface RemovedConnectionFlash {
  kind: "connection-removed";
  id: string;
  connector: ConnectorKind;
}

export interface ConnectionRow {
  id: string;
  kind: ConnectorKind;
  created_at: string;
  last_event_at: string | null;
  last_sync_at: string | null;
  last_error: string | null;
  last_error_at: string | null;
  webhook_url: string | null;
  /** The last error is newer than the last event or sync (errorIsCurrent). */
  errorCurrent: boolean;
  status: "ok" | "failing" | "never received" | "never synced";
  /** Why it is failing, when it is. */
  reason: string | null;
}

/** Where docs/connectors.md walks through the vendor's side, and what to do there now. */
const SET_UP: Record<ConnectorKind, { section: string; next: string }> = {
  stripe: {
    section: "Stripe → Set-up",
    next: "In the Stripe Dashboard, set the webhook endpoint's URL to the hook URL above.",
  },
  calendly: {
    section: "Calendly → Set-up",
    next: "Create a Calendly webhook subscription with the hook URL and the secret as its signing_key.",
  },
  calcom: {
    section: "Cal.com → Set-up",
    next: "In Cal.com, Settings → Developer → Webhooks → New: the hook URL as Subscriber URL, the secret as Secret.",
  },
  meta: {
    section: "Meta Ads spend sync → Set-up",
    next: "The scheduled sync fetches its spend; for the history run ascribe spend sync --platform meta --since YYYY-MM-DD.",
  },
  google: {
    section: "Google Ads spend sync → Set-up",
    next: "The scheduled sync fetches its spend; for the history run ascribe spend sync --platform google --since YYYY-MM-DD.",
  },
};

function AddedNotice({ added }: { added: AddedConnectionFlash }) {
  const setUp = SET_UP[added.connector];
  return (
    <Notice kind="ok">
      <p>
        {KIND_NAMES[added.connector]} connection <code>{added.id}</code> added.
        {added.secret && " Copy its signing secret now: it is shown only this once."}
      </p>
      {added.webhookUrl && <CopyLine id="new-hook-url" label="Hook URL" value={added.webhookUrl} />}
      {added.secret && <CopyLine id="new-secret" label="Signing secret" value={added.secret} />}
      <p>
        {setUp.next} Step by step: <code>docs/connectors.md</code>, “{setUp.section}”.
      </p>
    </Notice>
  );
}

function Field({ field, state }: { field: ConnectionField; state: ConnectionFormState }) {
  const id = `connection-${field.name}`;
  return (
    <>
      <label for={id}>{field.label}</label>
      {field.secret ? (
        <input id={id} name={field.name} type="password" autocomplete="off" maxlength={4096} />
      ) : (
        <input
          id={id}
          name={field.name}
          type="text"
          autocomplete="off"
          maxlength={100}
          value={state.values?.[field.name] ?? ""}
        />
      )}
      {field.help && <span class="help">{field.help}</span>}
    </>
  );
}

function FieldGroup(props: {
  legend: string;
  fields: readonly ConnectionField[];
  state: ConnectionFormState;
}) {
  return (
    <fieldset>
      <legend>{props.legend}</legend>
      {props.fields.map((f) => (
        <Field field={f} state={props.state} />
      ))}
    </fieldset>
  );
}

function AddForm({ viewer, state }: { viewer: Viewer; state: ConnectionFormState }) {
  return (
    <form method="post" action="/settings/connections" class="stack add-connection">
      <h2>Add a connection</h2>
      {state.error && <Notice kind="error">{state.error}</Notice>}
      <Csrf token={viewer.signedIn.csrfToken} />
      <label for="connection-kind">Kind</label>
      <select id="connection-kind" name="kind">
        {CONNECTOR_KINDS.map((k) => (
          <option value={k} selected={state.kind === k}>
            {KIND_NAMES[k]}: {KIND_HELP[k]}
          </option>
        ))}
      </select>
      <p class="help">Fill in only the fields of the kind chosen.</p>
      <FieldGroup legend="Stripe, Calendly, Cal.com" fields={WEBHOOK_FIELDS} state={state} />
      <FieldGroup legend="Meta Ads" fields={META_FIELDS} state={state} />
      <FieldGroup legend="Google Ads" fields={GOOGLE_FIELDS} state={state} />
      <button type="submit">Add connection</button>
    </form>
  );
}

function ConnectionTr({ c, tz, manager }: { c: ConnectionRow; tz: string; manager: boolean }) {
  return (
    <tr>
      <td>{KIND_NAMES[c.kind]}</td>
      <td>
        <code>{c.id}</code>
      </td>
      <td>{c.webhook_url ? <code>{c.webhook_url}</code> : "— (sync)"}</td>
      <td>{formatTime(c.created_at, tz)}</td>
      <td>{formatTime(c.last_event_at, tz)}</td>
      <td>{formatTime(c.last_sync_at, tz)}</td>
      <td>
        {c.last_error ? (
          <>
            {formatTime(c.last_error_at, tz)}: {c.last_error}
            {c.errorCurrent ? " (current)" : " (since resolved)"}
          </>
        ) : (
          "—"
        )}
      </td>
      <td>{c.reason ? `${c.status}: ${c.reason}` : c.status}</td>
      {manager && (
        <td>
          <a
            href={`/settings/connections/${c.id}/remove`}
            aria-label={`Remove ${KIND_NAMES[c.kind]} connection ${c.id}`}
          >
            Remove
          </a>
        </td>
      )}
    </tr>
  );
}

export function ConnectionsView(props: {
  viewer: Viewer;
  connections: ConnectionRow[];
  added: AddedConnectionFlash | null;
  removed: RemovedConnectionFlash | null;
  form: ConnectionFormState;
  manager: boolean;
}) {
  const { viewer, manager } = props;
  const tz = viewer.account.timezone;
  return (
    <SettingsPage title="Connections" path="/settings/connections" viewer={viewer}>
      {props.added && <AddedNotice added={props.added} />}
      {props.removed && (
        <Notice kind="ok">
          {KIND_NAMES[props.removed.connector]} connection <code>{props.removed.id}</code> removed: its hook
          URL answers 404 from now on. What it already stored stays.
        </Notice>
      )}
      <p>
        Connections bring in sales, bookings and ad spend from the tools this account already runs. The same
        is done from the command line with <code>ascribe connectors add|list|remove|test</code>.
      </p>
      <ScrollRegion label="Connections">
        <table>
          <caption class="visually-hidden">Connections of {viewer.account.name}</caption>
          <thead>
            <tr>
              <th scope="col">Kind</th>
              <th scope="col">Id</th>
              <th scope="col">Hook URL</th>
              <th scope="col">Created</th>
              <th scope="col">Last event</th>
              <th scope="col">Last sync</th>
              <th scope="col">Last error</th>
              <th scope="col">Status</th>
              {manager && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {props.connections.length === 0 && (
              <tr>
                <td colSpan={manager ? 9 : 8}>No connection yet.</td>
              </tr>
            )}
            {props.connections.map((c) => (
              <ConnectionTr c={c} tz={tz} manager={manager} />
            ))}
          </tbody>
        </table>
      </ScrollRegion>
      {manager ? (
        <AddForm viewer={viewer} state={props.form} />
      ) : (
        <p class="help">Only the account's owners and administrators add and remove connections.</p>
      )}
    </SettingsPage>
  );
}

export function RemoveConnectionView(props: { viewer: Viewer; connection: ConnectionRow }) {
  const c = props.connection;
  return (
    <SettingsPage title="Remove a connection" path="/settings/connections" viewer={props.viewer}>
      <p>
        Remove the {KIND_NAMES[c.kind]} connection <code>{c.id}</code>?{" "}
        {c.webhook_url
          ? "Its hook URL answers 404 from then on: the vendor's deliveries are refused."
          : "Its spend is no longer synced."}{" "}
        What it already stored stays. This cannot be undone.
      </p>
      <form method="post" action={`/settings/connections/${c.id}/remove`} class="inline">
        <Csrf token={props.viewer.signedIn.csrfToken} />
        <button type="submit" class="danger">
          Remove connection
        </button>{" "}
        <a href="/settings/connections">Cancel</a>
      </form>
    </SettingsPage>
  );
}
