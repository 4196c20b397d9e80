import { z } from "zod";
import { dateParam } from "../../reports/window.ts";
import { searchParam } from "../../routes/contacts.ts";
import { withQuery } from "../views/report-parts.tsx";

/**
 * What the list pages (contacts, calls) share: like their API routes, no date range unless one is
 * given, and limit/offset paging.
 */

/** A form sends its empty fields as `name=`: on these pages that is the field left out. */
export const blankAsAbsent = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (typeof v === "string" && v.trim() === "" ? undefined : v), schema.optional());

/** The list's own from/to, as the API's list routes take them: absent means no date range. */
export const optionalRange = { from: blankAsAbsent(dateParam), to: blankAsAbsent(dateParam) };

/** The search box, with the API's own rules once it is not empty. */
export const searchField = blankAsAbsent(searchParam);

/** The filter form of a list: an optional search box and optional dates; GET, so it can be linked. */
export function ListFilters(props: {
  path: string;
  query: { from?: string; to?: string; search?: string; limit?: number };
  search?: { label: string };
  rangeLabel: string;
  defaultLimit: number;
}) {
  const q = props.query;
  return (
    <form method="get" action={props.path} class="range list-filters" aria-label="Filters">
      {props.search && (
        <>
          <label for="list-search">{props.search.label}</label>
          <input id="list-search" type="search" name="search" value={q.search ?? ""} />
        </>
      )}
      <fieldset>
        <legend>{props.rangeLabel}</legend>
        <label for="list-from">From</label>
        <input id="list-from" type="date" name="from" value={q.from ?? ""} />
        <label for="list-to">To</label>
        <input id="list-to" type="date" name="to" value={q.to ?? ""} />
      </fieldset>
      {q.limit !== undefined && q.limit !== props.defaultLimit && (
        <input type="hidden" name="limit" value={String(q.limit)} />
      )}
      <button type="submit">Apply</button>
      {(q.search || q.from || q.to) && <a href={props.path}>Clear</a>}
    </form>
  );
}

/** Previous and next pages of a list; a next page is offered while a page comes back full. */
export function Pager(props: {
  path: string;
  query: Record<string, string | undefined>;
  limit: number;
  offset: number;
  returned: number;
}) {
  const { limit, offset, returned } = props;
  const at = (o: number) =>
    withQuery(props.path, { ...props.query, offset: o === 0 ? undefined : String(o) });
  if (offset === 0 && returned < limit) return null;
  return (
    <nav aria-label="Pages" class="pager">
      <ul>
        {offset > 0 && (
          <li>
            <a href={at(Math.max(offset - limit, 0))} rel="prev">
              Previous page
            </a>
          </li>
        )}
        <li class="help">{returned === 0 ? "No rows here" : `Rows ${offset + 1} to ${offset + returned}`}</li>
        {returned === limit && (
          <li>
            <a href={at(offset + limit)} rel="next">
              Next page
            </a>
          </li>
        )}
      </ul>
    </nav>
  );
}
