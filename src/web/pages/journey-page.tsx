import { z } from "zod";
import { contactCalls } from "../../queries/contact-calls.ts";
import { journeyOfContact } from "../../queries/journey-contact.ts";
import { flagParam } from "../../reports/window.ts";
import { emailParam } from "../../routes/contacts.ts";
import { formatTime } from "../page-guard.tsx";
import { defineReportPage, PageNotFound } from "../report-page.tsx";
import { type Column, withQuery } from "../views/report-parts.tsx";
import { CALL_TABLE_COLUMNS, callHref } from "./calls-page.tsx";

const params = z.object({ email: emailParam, pageviews: flagParam() });

/** A point's nested UTM and ad ids are flattened to `utm.source`…, the API's field paths. */
const TOUCH_COLUMNS: readonly Column[] = [
  { key: "occurred_at", label: "When", kind: "time" },
  { key: "kind", label: "Kind", kind: "text" },
  { key: "event_type", label: "What", kind: "text" },
  { key: "utm.source", label: "Source", kind: "text" },
  { key: "utm.medium", label: "Medium", kind: "text" },
  { key: "utm.campaign", label: "Campaign", kind: "text" },
  { key: "utm.content", label: "Content", kind: "text" },
  { key: "channel", label: "Channel", kind: "text" },
  { key: "platform", label: "Platform", kind: "text" },
  { key: "ad_ids.ad_id", label: "Ad id", kind: "text" },
  { key: "resolved_ad_id", label: "Ad credited", kind: "text" },
  // The value is in the touch's own currency, not necessarily the account's.
  { key: "value", label: "Value", kind: "number" },
  { key: "currency", label: "Currency", kind: "text" },
  { key: "product", label: "Product", kind: "text" },
  { key: "url", label: "Page", kind: "text" },
];

const flatten = (prefix: string, object: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(object).map(([k, v]) => [`${prefix}.${k}`, v]));

/** `/contacts/journey?email=`: GET /journeys/contact and GET /contacts/calls for one contact. */
export const journeyPage = defineReportPage({
  path: "/contacts/journey",
  title: "Contact journey",
  params,
  windowed: false,
  async load({ tx, tenant, query, now }) {
    const journey = await journeyOfContact(tx, tenant.accountId, query);
    // Unknown here and another account's contact read the same: nothing of it is shown.
    if (journey.contact === null) throw new PageNotFound("This account has no contact with this email.");
    const calls = await contactCalls(tx, tenant.accountId, { email: query.email, now });
    return { ...journey, contact: journey.contact, calls };
  },
  tables: (data) => ({
    touchpoints: {
      caption: "Touchpoints and events, in time order",
      columns: TOUCH_COLUMNS,
      rows: data.touchpoints.map((t) => ({ ...t, ...flatten("utm", t.utm), ...flatten("ad_ids", t.ad_ids) })),
    },
    calls: {
      caption: "Calls of the last 365 days",
      columns: CALL_TABLE_COLUMNS,
      rows: data.calls,
      link: { column: "starts_at", href: callHref },
    },
  }),
  view: ({ data, query, formats, table }) => {
    const c = data.contact;
    const name = [c.first_name, c.last_name].filter(Boolean).join(" ");
    const time = (iso: string | null) => formatTime(iso, formats.timezone);
    // The API's field, its label, its raw value (data-value) and how it reads.
    const facts: [string, string, string | number | null, string][] = [
      ["email", "Email", c.email, c.email ?? "—"],
      ["name", "Name", name || null, name || "—"],
      ["phone", "Phone", c.phone, c.phone ?? "—"],
      ["first_touch_at", "First touch", data.first_touch_at, time(data.first_touch_at)],
      ["last_touch_at", "Last touch", data.last_touch_at, time(data.last_touch_at)],
      ["counts.total", "Touchpoints", data.counts.total, String(data.counts.total)],
      ["counts.web", "Web visits", data.counts.web, String(data.counts.web)],
      ["counts.conversion", "Conversions", data.counts.conversion, String(data.counts.conversion)],
      ["counts.page_view", "Page views", data.counts.page_view, String(data.counts.page_view)],
    ];
    return (
      <>
        <p>
          <a href={withQuery("/contacts", { search: c.email ?? undefined })}>Back to contacts</a>
        </p>
        <section aria-labelledby="contact-title">
          <h2 id="contact-title">Contact</h2>
          <dl class="facts">
            {facts.map(([key, label, value, shown]) => (
              <>
                <dt>{label}</dt>
                <dd data-field={key} data-value={value === null ? "" : String(value)}>
                  {shown}
                </dd>
              </>
            ))}
          </dl>
        </section>
        <p>
          <a
            href={withQuery("/contacts/journey", {
              email: query.email,
              pageviews: query.pageviews ? undefined : "true",
            })}
          >
            {query.pageviews ? "Hide page views" : "Show page views too"}
          </a>
        </p>
        {table("touchpoints")}
        {data.calls.length > 0 ? table("calls") : <p>No call with this contact in the last 365 days.</p>}
      </>
    );
  },
});
