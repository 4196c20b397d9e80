import type { ReportWindow } from "../../reports/window.ts";
import { addDays } from "../../reports/window.ts";
import { ScrollRegion } from "./layout.tsx";

export type ColumnKind = "count" | "money" | "rate" | "number" | "text" | "date" | "time";

export interface Column {
  key: string;
  label: string;
  kind: ColumnKind;
}

/** A table of a report page: rendered, and downloadable as CSV with the same columns. */
export interface TableSpec {
  caption: string;
  columns: readonly Column[];
  /** Rows whose fields are the columns' keys (the query files' rows as they are). */
  rows: readonly object[];
  /** A column whose cells link somewhere (a contact's journey…). */
  link?: { column: string; href: (row: Record<string, unknown>) => string | null };
}

export interface Formats {
  currency: string;
  timezone: string;
}

/*
 * Formatters are built once per currency or timezone and kept: building an Intl formatter costs
 * tens of microseconds, and `toLocaleString` with options builds one per call — on a table of a
 * few thousand cells, that was most of a page's server time.
 */
const formatters = new Map<string, Intl.NumberFormat | Intl.DateTimeFormat>();
function formatter<T extends Intl.NumberFormat | Intl.DateTimeFormat>(key: string, make: () => T): T {
  let found = formatters.get(key);
  if (!found) {
    found = make();
    formatters.set(key, found);
  }
  return found as T;
}
const integer = () => formatter("count", () => new Intl.NumberFormat("en-US"));
const money = (currency: string) =>
  formatter(`money:${currency}`, () => new Intl.NumberFormat("en-US", { style: "currency", currency }));
const percent = () => formatter("rate", () => new Intl.NumberFormat("en-US", { maximumFractionDigits: 1 }));
export const dateTimeIn = (timezone: string) =>
  formatter(
    `time:${timezone}`,
    () =>
      new Intl.DateTimeFormat("en-CA", {
        timeZone: timezone,
        dateStyle: "short",
        timeStyle: "short",
        hourCycle: "h23",
      }),
  );

/** A value as the page shows it (the CSV keeps raw values). */
export function formatValue(value: unknown, kind: ColumnKind, f: Formats): string {
  if (value === null || value === undefined || value === "") return "—";
  switch (kind) {
    case "count":
    case "number":
      return typeof value === "number" ? integer().format(value) : String(value);
    case "money":
      return money(f.currency).format(Number(value));
    case "rate":
      return `${percent().format(Number(value) * 100)} %`;
    case "time":
      return dateTimeIn(f.timezone).format(new Date(String(value)));
    default:
      return Array.isArray(value) ? value.join(", ") : String(value);
  }
}

/** The page's own address with other query parameters (date range kept). */
export function withQuery(path: string, query: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== "") params.set(k, v);
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

const isNumeric = (kind: ColumnKind) => kind !== "text" && kind !== "time" && kind !== "date";

export function DataTable(props: { name: string; spec: TableSpec; formats: Formats; exportHref: string }) {
  const { spec, formats } = props;
  // Per column, once: a table of a thousand cells is most of a list page's rendering.
  const classes = spec.columns.map((c) => (isNumeric(c.kind) ? "num" : undefined));
  const linked = spec.link?.column;
  return (
    <div class="table-block">
      <div class="table-head">
        <h2 id={`${props.name}-caption`}>{spec.caption}</h2>
        <a class="export" href={props.exportHref} download={`${props.name}.csv`}>
          Download CSV<span class="visually-hidden"> of {spec.caption}</span>
        </a>
      </div>
      <ScrollRegion label={spec.caption}>
        <table data-table={props.name}>
          <thead>
            <tr>
              {spec.columns.map((c, i) => (
                <th scope="col" class={classes[i]}>
                  {c.label}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {spec.rows.length === 0 && (
              <tr>
                <td colSpan={spec.columns.length}>Nothing in this period.</td>
              </tr>
            )}
            {(spec.rows as readonly Record<string, unknown>[]).map((row) => (
              <tr>
                {spec.columns.map((c, i) => {
                  const text = formatValue(row[c.key], c.kind, formats);
                  const href = linked === c.key ? spec.link?.href(row) : null;
                  return <td class={classes[i]}>{href ? <a href={href}>{text}</a> : text}</td>;
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </ScrollRegion>
    </div>
  );
}

/** Presets of the date-range picker, computed in the account's timezone. */
function presets(today: string): { label: string; from: string; to: string }[] {
  const thisMonth = `${today.slice(0, 8)}01`;
  const lastMonthEnd = addDays(thisMonth, -1);
  return [
    { label: "Last 7 days", from: addDays(today, -6), to: today },
    { label: "Last 30 days", from: addDays(today, -29), to: today },
    { label: "Last 90 days", from: addDays(today, -89), to: today },
    { label: "This month", from: thisMonth, to: today },
    { label: "Last month", from: `${lastMonthEnd.slice(0, 8)}01`, to: lastMonthEnd },
  ];
}

/** The date-range picker: two dates in the account's timezone and the usual presets. */
export function DateRange(props: {
  path: string;
  window: ReportWindow;
  extra?: Record<string, string | undefined>;
}) {
  const w = props.window;
  return (
    <form method="get" action={props.path} class="range" aria-label="Date range">
      {Object.entries(props.extra ?? {}).map(([k, v]) =>
        v ? <input type="hidden" name={k} value={v} /> : null,
      )}
      <label for="range-from">From</label>
      <input id="range-from" type="date" name="from" value={w.from} max={w.today} />
      <label for="range-to">To</label>
      <input id="range-to" type="date" name="to" value={w.to} />
      <button type="submit">Apply</button>
      <ul class="presets">
        {presets(w.today).map((p) => (
          <li>
            <a
              href={withQuery(props.path, { ...props.extra, from: p.from, to: p.to })}
              aria-current={p.from === w.from && p.to === w.to ? "true" : undefined}
            >
              {p.label}
            </a>
          </li>
        ))}
      </ul>
      <p class="help">
        {w.from} to {w.to}, days in {w.timezone}
      </p>
    </form>
  );
}

/**
 * Data for an island, in a JSON block the browser does not execute. `<` is escaped so no value
 * can close the element.
 */
export function JsonData({ id, value }: { id: string; value: unknown }) {
  const json = JSON.stringify(value).replace(/</g, "\\u003c");
  return <script type="application/json" id={id} dangerouslySetInnerHTML={{ __html: json }} />;
}
