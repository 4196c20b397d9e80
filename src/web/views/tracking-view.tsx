import type { CaptureHealth } from "../../attribution/capture-health.ts";
import { isManager } from "../../people/person.ts";
import { REQUIRED_FIELDS, type UtmField, type UtmVerdict } from "../../tracking/utm-grade.ts";
import type { Viewer } from "../page-guard.tsx";
import { CopyLine, Csrf, Notice, ScrollRegion } from "./layout.tsx";
import { SettingsPage } from "./settings-layout.tsx";
import { Grader, Health } from "./tracking-checks.tsx";

export interface HostAddedFlash {
  kind: "host-added";
  userId: string;
  host: string;
}

export interface HostFormState {
  host?: string;
  error?: string;
}

/** A tracking host and what the certificate endpoint (`/api/tls/ask`) answers for it. */
export interface HostState {
  host: string;
  certificate: boolean;
}

/** The grader's form: the pasted address and its verdict, or why it could not be graded. */
export interface GraderState {
  url: string;
  verdict: UtmVerdict | null;
  error?: string;
}

export interface TrackingViewProps {
  viewer: Viewer;
  /** `{site_url}`, where track.js is served. */
  siteUrl: string;
  /** What a first-party host's CNAME record points at: the site's host name. */
  cnameTarget: string;
  clientKey: string;
  hosts: HostState[];
  added: string | null;
  hostForm: HostFormState;
  grader: GraderState;
  health: CaptureHealth;
}

/** SPEC "Hidden form fields", in its order: the name, what it holds, whether attribution needs it. */
const HIDDEN_FIELDS: readonly { name: UtmField; meaning: string }[] = [
  { name: "utm_source", meaning: "traffic source" },
  { name: "utm_medium", meaning: "traffic type" },
  { name: "utm_campaign", meaning: "campaign name" },
  { name: "utm_content", meaning: "ad name" },
  { name: "utm_term", meaning: "ad set name" },
  { name: "utm_campaign_id", meaning: "numeric campaign id" },
  { name: "utm_ad_id", meaning: "numeric ad id" },
  { name: "utm_adset_id", meaning: "numeric ad set id" },
];

/** The tag docs/tracking.md tells users to paste, with this account's key. */
export function trackingTag(siteUrl: string, clientKey: string): string {
  return `<script src="${siteUrl}/api/track.js" data-client="${clientKey}"></script>`;
}

function Install({ siteUrl, clientKey }: { siteUrl: string; clientKey: string }) {
  return (
    <section aria-labelledby="install">
      <h2 id="install">Install the script</h2>
      <p>
        Paste this tag in the <code>&lt;head&gt;</code> of every page, before any booking, form or chat
        widget, so that it is ready when they arrive.
      </p>
      <CopyLine id="tracking-tag" value={trackingTag(siteUrl, clientKey)} />
      <p class="help">
        <code>{clientKey}</code> is this account's client key. It is not a secret: every page carrying the tag
        shows it.
      </p>
    </section>
  );
}

function HiddenFields({ clientKey }: { clientKey: string }) {
  return (
    <section aria-labelledby="hidden-fields">
      <h2 id="hidden-fields">Hidden form fields</h2>
      <p>
        Give each form hidden fields with these exact names (lowercase, underscores: <code>UTM_Source</code>{" "}
        or <code>utmSource</code> are not recognized). They are how the attribution reaches your CRM with the
        contact.
      </p>
      <ScrollRegion label="Hidden fields and what fills them">
        <table>
          <caption class="visually-hidden">Hidden form fields and what fills them</caption>
          <thead>
            <tr>
              <th scope="col">Field</th>
              <th scope="col">Holds</th>
              <th scope="col">Needed</th>
              <th scope="col">Filled by</th>
            </tr>
          </thead>
          <tbody>
            {HIDDEN_FIELDS.map((f) => (
              <tr>
                <td>
                  <code>{f.name}</code>
                </td>
                <td>{f.meaning}</td>
                <td>
                  {(REQUIRED_FIELDS as readonly string[]).includes(f.name) ? "required" : "recommended"}
                </td>
                <td>the script</td>
              </tr>
            ))}
            <tr>
              <td>
                <code>client_key</code>
              </td>
              <td>this account's client key, for form tools that need it</td>
              <td>
                set to <code>{clientKey}</code>
              </td>
              <td>the script, from the tag's data-client</td>
            </tr>
          </tbody>
        </table>
      </ScrollRegion>
      <p class="help">
        The script fills the fields from its cookies when the page loads, and again just before the form is
        sent; a form tool that pre-fills from URL parameters fills them too. On a first-party host whose tag
        has no data-client, give <code>client_key</code> its value yourself.
      </p>
    </section>
  );
}

function Hosts(props: TrackingViewProps & { manager: boolean }) {
  const { viewer, hosts, cnameTarget } = props;
  return (
    <section aria-labelledby="hosts">
      <h2 id="hosts">First-party tracking hosts</h2>
      <p>
        Serve the script and its beacons from a subdomain of your own site (<code>track.example.com</code>
        ): ad blockers then see first-party requests. Point the subdomain at this service with a DNS alias,
        then add it here; its tag needs no <code>data-client</code>.
      </p>
      <dl class="facts">
        <dt>DNS alias (CNAME) target</dt>
        <dd>
          <code id="cname-target">{cnameTarget}</code>
        </dd>
      </dl>
      {props.added && (
        <Notice kind="ok">
          {props.added} is added. Create its DNS record if it does not exist yet: beacons sent to it count for
          this account.
        </Notice>
      )}
      <ScrollRegion label="Hosts and their DNS records">
        <table>
          <caption class="visually-hidden">First-party tracking hosts of {viewer.account.name}</caption>
          <thead>
            <tr>
              <th scope="col">Host</th>
              <th scope="col">DNS record</th>
              <th scope="col">Certificate</th>
            </tr>
          </thead>
          <tbody>
            {hosts.length === 0 && (
              <tr>
                <td colSpan={3}>No host yet: the tag above loads the script from {cnameTarget}.</td>
              </tr>
            )}
            {hosts.map((h) => (
              <tr>
                <td>
                  <code>{h.host}</code>
                </td>
                <td>
                  <code>
                    {h.host}. CNAME {cnameTarget}.
                  </code>
                </td>
                <td>
                  {h.certificate
                    ? "accepted: the certificate endpoint lets the proxy request one"
                    : "refused: the certificate endpoint answers 404 for this host"}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
      {props.manager ? (
        <form method="post" action="/settings/tracking/hosts" class="stack">
          <h3>Add a host</h3>
          {props.hostForm.error && <Notice kind="error">{props.hostForm.error}</Notice>}
          <Csrf token={viewer.signedIn.csrfToken} />
          <label for="tracking-host">Host name</label>
          <input
            id="tracking-host"
            name="host"
            required
            maxlength={253}
            autocomplete="off"
            spellcheck={false}
            placeholder="track.example.com"
            value={props.hostForm.host ?? ""}
          />
          <p class="help">
            A host belongs to one account. Its record: <code>track.example.com. CNAME {cnameTarget}.</code>
          </p>
          <button type="submit">Add host</button>
        </form>
      ) : (
        <p class="help">Only the account's owners and administrators add tracking hosts.</p>
      )}
    </section>
  );
}

export function TrackingView(props: TrackingViewProps) {
  const { viewer } = props;
  return (
    <SettingsPage title="Tracking" path="/settings/tracking" viewer={viewer}>
      <Install siteUrl={props.siteUrl} clientKey={props.clientKey} />
      <HiddenFields clientKey={props.clientKey} />
      <Hosts {...props} manager={isManager(viewer.account.role)} />
      <Grader grader={props.grader} />
      <Health health={props.health} timezone={viewer.account.timezone} />
    </SettingsPage>
  );
}
