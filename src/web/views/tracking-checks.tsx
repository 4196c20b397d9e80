import type { CaptureHealth } from "../../attribution/capture-health.ts";
import type { UtmField, UtmVerdict } from "../../tracking/utm-grade.ts";
import { formatTime } from "../page-guard.tsx";
import { Notice, ScrollRegion } from "./layout.tsx";
import type { GraderState } from "./tracking-view.tsx";

/* Settings → tracking's two checks: the UTM grader's verdict on a pasted URL, and capture health. */

const STATUS_TEXT: Record<UtmVerdict["fields"][UtmField]["status"], string> = {
  ok: "usable",
  missing: "missing",
  unresolved_macro: "unresolved macro",
  not_numeric: "not a number",
};

const VERDICT_TEXT: Record<CaptureHealth["verdict"], string> = {
  good: "attribution is captured well.",
  degraded: "part of the attribution is lost: see the issues below.",
  broken: "attribution is not being captured: see the issues below.",
  no_data: "no event and no page view in the last 30 days.",
};

function FieldList({ fields }: { fields: readonly string[] }) {
  if (fields.length === 0) return <>none</>;
  return (
    <>
      {fields.map((f, i) => (
        <>
          {i > 0 && ", "}
          <code>{f}</code>
        </>
      ))}
    </>
  );
}

export function Grader({ grader }: { grader: GraderState }) {
  const v = grader.verdict;
  return (
    <section aria-labelledby="grader">
      <h2 id="grader">Grade an ad URL</h2>
      <form method="get" action="/settings/tracking" class="stack">
        <label for="grade-url">Landing-page address, as an ad opens it</label>
        <input
          id="grade-url"
          name="url"
          type="url"
          required
          autocomplete="off"
          spellcheck={false}
          placeholder={"https://example.com/offer?utm_source=facebook&utm_medium=paid&…"}
          value={grader.url}
        />
        <p class="help">
          Its parameters are graded as a landing page would receive them. Nothing is recorded.
        </p>
        <button type="submit">Grade</button>
      </form>
      {grader.error && <Notice kind="error">Not graded: {grader.error}</Notice>}
      {v && (
        <div id="utm-grade">
          <p>
            Grade <strong id="utm-grade-value">{v.grade}</strong>: {v.summary}
          </p>
          <dl class="facts">
            <dt>Found</dt>
            <dd>
              <FieldList fields={v.found} />
            </dd>
            <dt>Missing</dt>
            <dd>
              <FieldList fields={v.missing} />
            </dd>
          </dl>
          {v.warnings.length > 0 && (
            <Notice kind="info">
              <ul>
                {v.warnings.map((w) => (
                  <li>{w}</li>
                ))}
              </ul>
            </Notice>
          )}
          <ScrollRegion label="Each graded parameter">
            <table>
              <caption class="visually-hidden">Each parameter of the graded address</caption>
              <thead>
                <tr>
                  <th scope="col">Parameter</th>
                  <th scope="col">Value</th>
                  <th scope="col">Status</th>
                </tr>
              </thead>
              <tbody>
                {(Object.keys(v.fields) as UtmField[]).map((name) => {
                  const f = v.fields[name];
                  return (
                    <tr>
                      <td>
                        <code>{name}</code>{" "}
                        <span class="help">{f.required ? "required" : "recommended"}</span>
                      </td>
                      <td>{f.value === null ? "—" : <code>{f.value}</code>}</td>
                      <td>{STATUS_TEXT[f.status]}</td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </ScrollRegion>
        </div>
      )}
    </section>
  );
}

const percent = (n: number | null) => (n === null ? "—" : `${n} %`);

export function Health({ health, timezone }: { health: CaptureHealth; timezone: string }) {
  return (
    <section aria-labelledby="health">
      <h2 id="health">Capture health, last 30 days</h2>
      <p>
        Verdict <strong id="capture-verdict">{health.verdict}</strong>: {VERDICT_TEXT[health.verdict]}
      </p>
      <dl class="facts">
        <dt>Events with an ad signal</dt>
        <dd>{health.events_pub_30j}</dd>
        <dt>Resolved by exact ad id</dt>
        <dd>{percent(health.pct_exact_id)}</dd>
        <dt>Resolved by ad name</dt>
        <dd>{percent(health.pct_par_nom)}</dd>
        <dt>Not resolved</dt>
        <dd>{percent(health.pct_non_resolu)}</dd>
        <dt>Tracking-script sessions</dt>
        <dd>{health.pixel_sessions_30j}</dd>
        <dt>Sessions carrying an ad id</dt>
        <dd>{percent(health.pixel_pct_avec_id)}</dd>
        <dt>Last page view</dt>
        <dd>{formatTime(health.pixel_derniere_activite, timezone)}</dd>
      </dl>
      {health.issues.length > 0 && (
        <>
          <h3>Issues to fix</h3>
          <ul>
            {health.issues.map((i) => (
              <li>
                <code>{i.code}</code>: {i.message}
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}
