import { isManager, ROLES } from "../../people/person.ts";
import { formatTime, type Viewer } from "../page-guard.tsx";
import { CopyLine, Csrf, Notice, ScrollRegion } from "./layout.tsx";
import { SettingsPage } from "./settings-layout.tsx";

export interface InvitedFlash {
  kind: "member-invited";
  userId: string;
  email: string;
  url: string;
  mailed: boolean;
  mailError?: string;
}

export interface MemberRow {
  email: string;
  role: (typeof ROLES)[number];
  joined_at: string;
  has_password: boolean;
}

export function MembersView(props: {
  viewer: Viewer;
  members: MemberRow[];
  invited: InvitedFlash | null;
  error?: string;
}) {
  const { viewer } = props;
  const manager = isManager(viewer.account.role);
  const owner = viewer.account.role === "owner";
  const roles = owner ? ROLES : ROLES.filter((r) => r !== "owner");
  return (
    <SettingsPage title="Members" path="/settings/members" viewer={viewer}>
      {props.error && <Notice kind="error">{props.error}</Notice>}
      {props.invited && (
        <Notice kind="ok">
          <p>
            {props.invited.email} is invited
            {props.invited.mailed ? " and was mailed this link" : ""}
            {props.invited.mailError ? ` (mailing it failed: ${props.invited.mailError})` : ""}. Their
            one-time link (valid 7 days) to choose a password:
          </p>
          <CopyLine id="invite-url" value={props.invited.url} />
        </Notice>
      )}
      <ScrollRegion label="Members">
        <table>
          <caption class="visually-hidden">Members of {viewer.account.name}</caption>
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Joined</th>
              <th scope="col">Password</th>
              {manager && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {props.members.map((m) => {
              const editable = manager && (owner || m.role !== "owner");
              return (
                <tr>
                  <td>{m.email}</td>
                  <td>
                    {editable ? (
                      <form method="post" action="/settings/members/role" class="inline">
                        <Csrf token={viewer.signedIn.csrfToken} />
                        <input type="hidden" name="email" value={m.email} />
                        <input type="hidden" name="current" value={m.role} />
                        <label class="visually-hidden" for={`role-${m.email}`}>
                          Role of {m.email}
                        </label>
                        <select id={`role-${m.email}`} name="role">
                          {roles.map((r) => (
                            <option value={r} selected={r === m.role}>
                              {r}
                            </option>
                          ))}
                        </select>{" "}
                        <button type="submit" class="secondary">
                          Change
                        </button>
                      </form>
                    ) : (
                      m.role
                    )}
                  </td>
                  <td>{formatTime(m.joined_at, viewer.account.timezone)}</td>
                  <td>{m.has_password ? "set" : "invited"}</td>
                  {manager && (
                    <td>
                      {editable && (
                        <a
                          href={`/settings/members/remove?email=${encodeURIComponent(m.email)}`}
                          aria-label={`Remove ${m.email}`}
                        >
                          Remove
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
      {manager ? (
        <form method="post" action="/settings/members" class="stack">
          <h2>Invite someone</h2>
          <Csrf token={viewer.signedIn.csrfToken} />
          <label for="invite-email">Email</label>
          <input id="invite-email" name="email" type="email" required />
          <label for="invite-role">Role</label>
          <select id="invite-role" name="role">
            {roles.map((r) => (
              <option value={r} selected={r === "member"}>
                {r}
              </option>
            ))}
          </select>
          <p class="help">
            Members read the reports and the key list. Administrators also manage keys and members. Owners
            also hand over ownership. The last owner can neither leave nor be demoted.
          </p>
          <button type="submit">Invite</button>
        </form>
      ) : (
        <p class="help">Only the account's owners and administrators invite and remove members.</p>
      )}
    </SettingsPage>
  );
}

export function RemoveMemberView(props: { viewer: Viewer; email: string }) {
  return (
    <SettingsPage title="Remove a member" path="/settings/members" viewer={props.viewer}>
      <p>
        Remove <strong>{props.email}</strong> from {props.viewer.account.name}? They lose access to its
        reports at once.
      </p>
      <form method="post" action="/settings/members/remove" class="inline">
        <Csrf token={props.viewer.signedIn.csrfToken} />
        <input type="hidden" name="email" value={props.email} />
        <button type="submit" class="danger">
          Remove member
        </button>{" "}
        <a href="/settings/members">Cancel</a>
      </form>
    </SettingsPage>
  );
}
