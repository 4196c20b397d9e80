import { z } from "zod";
import { contactsList } from "../../queries/contacts-list.ts";
import { limitParam, offsetParam, optionalWindow } from "../../reports/window.ts";
import { defineReportPage } from "../report-page.tsx";
import type { Column } from "../views/report-parts.tsx";
import { ListFilters, optionalRange, Pager, searchField } from "./list-parts.tsx";

/** GET /contacts's paging, as the route defines it. */
const DEFAULT_LIMIT = 100;

const params = z.object({
  ...optionalRange,
  search: searchField,
  limit: limitParam(DEFAULT_LIMIT, 500),
  offset: offsetParam(),
});

const COLUMNS: readonly Column[] = [
  { key: "email", label: "Email", kind: "text" },
  { key: "name", label: "Name", kind: "text" },
  { key: "phone", label: "Phone", kind: "text" },
  { key: "total_events", label: "Events", kind: "count" },
  { key: "event_types", label: "Event types", kind: "text" },
  { key: "first_event_date", label: "First event", kind: "time" },
  { key: "last_event_date", label: "Last event", kind: "time" },
  { key: "sources", label: "Sources", kind: "text" },
  { key: "assigned_user_name", label: "Sales rep", kind: "text" },
  { key: "value", label: "Value", kind: "money" },
  { key: "form_titles", label: "Forms", kind: "text" },
  { key: "tags", label: "Tags", kind: "text" },
];

export const journeyHref = (email: string) => `/contacts/journey?email=${encodeURIComponent(email)}`;

/** `/contacts`: GET /contacts, most recently active first, with its search and paging. */
export const contactsPage = defineReportPage({
  path: "/contacts",
  title: "Contacts",
  params,
  windowed: false,
  load: ({ tx, tenant, query, now }) =>
    contactsList(tx, tenant.accountId, {
      window: optionalWindow(query, tenant, now),
      search: query.search,
      limit: query.limit,
      offset: query.offset,
    }),
  tables: (rows) => ({
    contacts: {
      caption: "Contacts, most recently active first",
      columns: COLUMNS,
      rows,
      link: {
        column: "email",
        href: (row) => (typeof row.email === "string" ? journeyHref(row.email) : null),
      },
    },
  }),
  view: ({ data, query, table }) => (
    <>
      <ListFilters
        path="/contacts"
        query={query}
        search={{ label: "Search by email, name or phone" }}
        rangeLabel="Last event between (optional)"
        defaultLimit={DEFAULT_LIMIT}
      />
      {table("contacts")}
      <Pager
        path="/contacts"
        query={{
          search: query.search,
          from: query.from,
          to: query.to,
          limit: query.limit === DEFAULT_LIMIT ? undefined : String(query.limit),
        }}
        limit={query.limit}
        offset={query.offset}
        returned={data.length}
      />
    </>
  ),
});
