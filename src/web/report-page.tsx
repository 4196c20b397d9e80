import { stringify } from "csv-stringify/sync";
import type { FastifyInstance } from "fastify";
import type { VNode } from "preact";
import { z } from "zod";
import type { Sql } from "../db/client.ts";
import { assertSingleTenant } from "../http/barrier.ts";
import { validationMessage } from "../http/pipeline.ts";
import { type ReportWindow, reportWindow, windowQuery } from "../reports/window.ts";
import type { Tenant } from "../routes/route-def.ts";
import type { ObjectStore } from "../storage/object-store.ts";
import { type Viewer, viewerOr } from "./page-guard.tsx";
import { sendPage } from "./send-page.tsx";
import { AppPage, Notice } from "./views/layout.tsx";
import { DataTable, DateRange, type Formats, type TableSpec, withQuery } from "./views/report-parts.tsx";
import type { WebDeps } from "./web-deps.ts";

export interface ReportContext<Q> {
  /** The tenant's transaction (request role, RLS): the same query files as the API's routes. */
  tx: Sql;
  tenant: Tenant;
  window: ReportWindow;
  query: Q;
  now: Date;
  files: ObjectStore;
}

export interface ReportViewProps<D, Q> {
  data: D;
  query: Q;
  window: ReportWindow;
  viewer: Viewer;
  formats: Formats;
  /** Renders one of the page's tables with its CSV link. */
  table(name: string): VNode;
}

/**
 * One declarative object per page of reports: its address, parameters, what it reads (through the
 * query files the API reads), its tables (shown and exported as CSV) and its view.
 */
export interface ReportPageDef<D, Q extends Record<string, unknown>> {
  path: string;
  title: string;
  /** The page's own query parameters, besides from/to (strings in, as in the API). */
  params?: z.ZodType<Q>;
  /** Whether the page has a date range (a contact's journey does not). */
  windowed?: boolean;
  scripts?: readonly string[];
  load(ctx: ReportContext<Q>): Promise<D>;
  tables(data: D, query: Q): Record<string, TableSpec>;
  view(props: ReportViewProps<D, Q>): VNode;
}

/** Keeps each page's types while the list holds them together. */
export function defineReportPage<D, Q extends Record<string, unknown> = Record<string, never>>(
  def: ReportPageDef<D, Q>,
): ReportPageDef<unknown, Record<string, unknown>> {
  return def as unknown as ReportPageDef<unknown, Record<string, unknown>>;
}

const exportParam = z.object({ export: z.string().optional() });

/**
 * Thrown by a page's `load` when what it was asked for is not the account's (or does not exist):
 * the page answers 404 with this message, and never says which of the two it was.
 */
export class PageNotFound extends Error {}

/** Registers a report page: GET renders it; `?export=NAME` answers that table as CSV. */
export function registerReportPage(
  app: FastifyInstance,
  deps: WebDeps,
  def: ReportPageDef<unknown, Record<string, unknown>>,
): void {
  app.get(def.path, async (request, reply) => {
    const viewer = viewerOr(request, reply);
    if (!viewer) return reply;
    const raw = (request.query ?? {}) as Record<string, unknown>;
    const a = viewer.account;
    const tenant: Tenant = {
      accountId: a.accountId,
      plan: a.plan,
      timezone: a.timezone,
      currency: a.currency,
    };
    const formats = { currency: a.currency, timezone: a.timezone };
    const now = deps.clock();
    // A GET form sends an empty date field as `from=`: that is no date, not a wrong one.
    const blank = (v: unknown) => (v === "" ? undefined : v);
    const windowParsed = windowQuery({}).safeParse({ from: blank(raw.from), to: blank(raw.to) });
    const paramsParsed = (def.params ?? z.object({})).safeParse(raw);
    const frame = (body: VNode, status: number) =>
      sendPage(
        reply,
        <AppPage title={def.title} signedIn={viewer.signedIn} path={def.path} scripts={def.scripts}>
          {body}
        </AppPage>,
        status,
      );
    if (!windowParsed.success || !paramsParsed.success) {
      const error = !windowParsed.success ? windowParsed.error : (paramsParsed.error as z.ZodError);
      const fallback = reportWindow({}, tenant, now);
      return frame(
        <>
          <Notice kind="error">Not shown: {validationMessage(error)}.</Notice>
          {def.windowed !== false && <DateRange path={def.path} window={fallback} />}
        </>,
        400,
      );
    }
    const window = reportWindow(windowParsed.data, tenant, now);
    const query = paramsParsed.data as Record<string, unknown>;
    let data: unknown;
    try {
      data = await deps.db.tenant(a.accountId, (tx) =>
        def.load({ tx, tenant, window, query, now, files: deps.files }),
      );
    } catch (error) {
      if (error instanceof PageNotFound) return frame(<Notice kind="error">{error.message}</Notice>, 404);
      throw error;
    }
    // The API's tenant barrier: a row tagged with another account stops the page, as it stops a response.
    assertSingleTenant(data, a.accountId);
    const tables = def.tables(data, query);
    const wanted = exportParam.safeParse(raw).data?.export;
    if (wanted !== undefined) {
      const spec = tables[wanted];
      if (!spec) return frame(<Notice kind="error">This page has no table {wanted}.</Notice>, 404);
      const csv = stringify(
        (spec.rows as readonly Record<string, unknown>[]).map((row) =>
          spec.columns.map((c) => csvCell(row[c.key])),
        ),
        { header: true, columns: spec.columns.map((c) => c.key) },
      );
      return reply
        .type("text/csv; charset=utf-8")
        .header("Content-Disposition", `attachment; filename="${wanted}-${window.from}-${window.to}.csv"`)
        .send(csv);
    }
    const kept = Object.fromEntries(
      Object.entries(raw).filter(([k, v]) => typeof v === "string" && k !== "export"),
    ) as Record<string, string>;
    const table = (name: string) => {
      const spec = tables[name];
      if (!spec) throw new Error(`page ${def.path} has no table ${name}`);
      return (
        <DataTable
          name={name}
          spec={spec}
          formats={formats}
          exportHref={withQuery(def.path, { ...kept, export: name })}
        />
      );
    };
    const extra = Object.fromEntries(Object.entries(kept).filter(([k]) => k !== "from" && k !== "to"));
    return frame(
      <>
        {def.windowed !== false && <DateRange path={def.path} window={window} extra={extra} />}
        {def.view({ data, query, window, viewer, formats, table })}
      </>,
      200,
    );
  });
}

/** CSV keeps raw values: numbers as numbers, lists joined, objects as JSON. */
function csvCell(value: unknown): string | number | boolean | null {
  if (value === null || value === undefined) return null;
  if (Array.isArray(value)) return value.join("; ");
  if (typeof value === "object") return JSON.stringify(value);
  // As the API's JSON writes them (the CSV writer's own default is 1 and empty).
  if (typeof value === "boolean") return String(value);
  // A text cell a spreadsheet would run as a formula is written as text.
  if (typeof value === "string" && /^[=+\-@\t\r]/.test(value)) return `'${value}`;
  return value as string | number | boolean;
}
