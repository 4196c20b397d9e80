/**
 * Tenant barrier (SPEC: "one row not belonging to the key's account blocks the whole response").
 * Queries tag each row with its owner; the response path checks every tag before sending, so a
 * faulty WHERE clause fails closed instead of leaking another account's data.
 */
import { ApiError } from "./errors.ts";

/**
 * Owner tag of a row, holding its account id. A symbol so JSON never serialises it, and it cannot
 * collide with a column name.
 */
export const OWNER: unique symbol = Symbol("ascribe.owner");

/**
 * Tags `row` as owned by `accountId` and returns it. Non-enumerable so spreads and logs do not
 * carry it; non-writable and non-configurable so a row cannot later be relabelled to another
 * tenant (re-tagging with a different id throws a TypeError).
 */
export function markOwner<T extends object>(row: T, accountId: string): T {
  Object.defineProperty(row, OWNER, {
    value: accountId,
    enumerable: false,
    writable: false,
    configurable: false,
  });
  return row;
}

/**
 * For rows fresh from SQL that selected `account_id`: returns copies without `account_id` (never
 * returned to callers), each tagged with that account id. The input rows are left untouched.
 */
export function ownedRows<T extends { account_id: string }>(rows: T[]): Omit<T, "account_id">[] {
  return rows.map((row) => {
    const { account_id, ...rest } = row;
    return markOwner(rest, account_id);
  });
}

/**
 * Throws `tenant_barrier` if any object or array, at any depth, is tagged with an owner other than
 * `accountId`. Untagged objects (aggregates, envelopes) pass. The error carries nothing of the
 * offending row: the response must not leak it even through the error path.
 */
export function assertSingleTenant(data: unknown, accountId: string): void {
  // Explicit stack: response bodies may be deep, and a shared sub-tree is checked once.
  const stack: unknown[] = [data];
  const seen = new WeakSet<object>();
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== "object" || v === null || seen.has(v)) continue;
    seen.add(v);
    // `in` also sees a tag inherited through the prototype chain; a tag holding a non-string
    // (e.g. a row whose account_id came back NULL) fails closed as well.
    if (OWNER in v && (v as { [OWNER]?: unknown })[OWNER] !== accountId) {
      throw new ApiError("tenant_barrier");
    }
    for (const child of Object.values(v)) {
      if (typeof child === "object" && child !== null) stack.push(child);
    }
  }
}

/**
 * `assertSingleTenant(rows, accountId)` for a list of rows, the same verdict, cheaper: each row's tag
 * is read directly, its scalar fields skipped without collecting them, and only its object fields
 * (an array of products, a nested object) walked in full. A streamed list checks tens of thousands
 * of rows a request this way.
 */
export function assertRowsOwned(rows: readonly unknown[], accountId: string): void {
  if (OWNER in rows && (rows as { [OWNER]?: unknown })[OWNER] !== accountId) {
    throw new ApiError("tenant_barrier");
  }
  for (const row of rows) {
    if (typeof row !== "object" || row === null) continue;
    if (OWNER in row && (row as { [OWNER]?: unknown })[OWNER] !== accountId) {
      throw new ApiError("tenant_barrier");
    }
    for (const key in row) {
      if (!Object.hasOwn(row, key)) continue;
      const child = (row as Record<string, unknown>)[key];
      if (typeof child === "object" && child !== null) assertSingleTenant(child, accountId);
    }
  }
}

/**
 * The barrier for rows that carry their account in an `account_id` column rather than a tag
 * (db/account-rows.ts): every row must hold `accountId`. Their other fields came from SQL as
 * scalars, arrays or parsed JSON, none of which can carry a tag.
 */
export function assertAccountRows(rows: readonly { account_id: string }[], accountId: string): void {
  for (const row of rows) {
    if (row.account_id !== accountId) throw new ApiError("tenant_barrier");
  }
}
