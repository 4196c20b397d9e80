import { z } from "zod";
import { callsPage as callsPageQuery } from "../../queries/calls-list.ts";
import { limitParam, offsetParam, optionalWindow } from "../../reports/window.ts";
import { defineReportPage } from "../report-page.tsx";
import type { Column } from "../views/report-parts.tsx";
import { ListFilters, optionalRange, Pager } from "./list-parts.tsx";

/** GET /calls's paging, as the route defines it. */
const DEFAULT_LIMIT = 50;

const params = z.object({ ...optionalRange, limit: limitParam(DEFAULT_LIMIT, 200), offset: offsetParam() });

/** A call's row in a list (here and in a contact's journey); its start opens the call. */
export const CALL_TABLE_COLUMNS: readonly Column[] = [
  { key: "starts_at", label: "Started", kind: "time" },
  { key: "title", label: "Title", kind: "text" },
  { key: "duration_sec", label: "Duration (seconds)", kind: "count" },
  { key: "call_type", label: "Type", kind: "text" },
  { key: "is_qualified", label: "Qualified", kind: "text" },
  { key: "icp_fit_score", label: "Ideal-customer fit", kind: "number" },
  { key: "scorecard_total", label: "Scorecard", kind: "number" },
  { key: "next_step_type", label: "Next step", kind: "text" },
  { key: "rep_id", label: "Sales rep", kind: "text" },
];

export const callHref = (row: Record<string, unknown>) =>
  typeof row.artifact_id === "number" ? `/calls/view?id=${row.artifact_id}` : null;

/** `/calls`: GET /calls, newest first, with its paging; each call opens its own page. */
export const callsPage = defineReportPage({
  path: "/calls",
  title: "Calls",
  params,
  windowed: false,
  load: ({ tx, tenant, query, now }) =>
    callsPageQuery(tx, tenant.accountId, {
      window: optionalWindow(query, tenant, now),
      limit: query.limit,
      offset: query.offset,
    }),
  tables: (rows) => ({
    calls: {
      caption: "Analyzed calls, newest first",
      columns: CALL_TABLE_COLUMNS,
      rows,
      link: { column: "starts_at", href: callHref },
    },
  }),
  view: ({ data, query, table }) => (
    <>
      <ListFilters
        path="/calls"
        query={query}
        rangeLabel="Started between (optional)"
        defaultLimit={DEFAULT_LIMIT}
      />
      {table("calls")}
      <Pager
        path="/calls"
        query={{
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
