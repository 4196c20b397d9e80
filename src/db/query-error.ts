import pino from "pino";

/**
 * A failed query, told without the values bound to it. Drizzle's error carries the statement and
 * its parameters (`Failed query: … params: alice@example.com,Alice`), and the database's own
 * message and detail can quote a value (`invalid input syntax for type integer: "alice@…"`, `Key
 * (email)=(alice@…) already exists`): printed as they are, a log line or the CLI's answer holds
 * contacts' emails and names. What is kept names no value: the SQLSTATE code, the table, column and
 * constraint, the message with its quoted value cut, and the statement with its literals cut.
 */
export interface QueryFailure {
  /** SQLSTATE (`23505`), when the database answered. */
  code: string | null;
  /** The database's message, a quoted value after a colon replaced by `"…"`. */
  reason: string;
  table: string | null;
  column: string | null;
  constraint: string | null;
  /** The statement with `$n` placeholders, string literals cut, one line, at most 300 characters. */
  statement: string | null;
}

interface ErrorFields {
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  query?: unknown;
  params?: unknown;
  table?: unknown;
  column?: unknown;
  constraint?: unknown;
}

// SQLSTATE classes (00–58, F0, HV, P0, XX): not to be taken for a system error's code (EPIPE).
const SQLSTATE = /^([0-5][0-9A-Z]|F0|HV|P0|XX)[0-9A-Z]{3}$/;
const STATEMENT_MAX = 300;

function chainOf(err: unknown): ErrorFields[] {
  const chain: ErrorFields[] = [];
  let current: unknown = err;
  while (current !== null && typeof current === "object" && chain.length < 10) {
    const fields = current as ErrorFields;
    chain.push(fields);
    current = fields.cause;
  }
  return chain;
}

const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : null);

/** `…: "value"` (how PostgreSQL quotes a refused input) → `…: "…"`; identifiers elsewhere stay. */
export function withoutQuotedValue(message: string): string {
  return message.replace(/:\s*"(?:[^"]|"")*"/g, ': "…"').replace(/\s+/g, " ");
}

/** The statement without literals: placeholders stay, `'…'` strings are cut, whitespace collapsed. */
export function statementWithoutValues(query: string): string {
  const bare = query
    .replace(/'(?:[^']|'')*'/g, "'…'")
    .replace(/\s+/g, " ")
    .trim();
  return bare.length > STATEMENT_MAX ? `${bare.slice(0, STATEMENT_MAX)}…` : bare;
}

/** The failure's value-free fields, or null when `err` is not a failed query. */
export function queryFailureOf(err: unknown): QueryFailure | null {
  const chain = chainOf(err);
  const withStatement = chain.find((e) => typeof e.query === "string" && "params" in e);
  const fromDatabase = chain.find((e) => typeof e.code === "string" && SQLSTATE.test(e.code));
  if (withStatement === undefined && fromDatabase === undefined) return null;
  const inner = fromDatabase ?? chain[chain.length - 1];
  // Drizzle's own message is the statement and its values: the database's (or nothing) replaces it.
  const reason = inner === withStatement ? "query failed" : withoutQuotedValue(String(inner?.message ?? ""));
  return {
    code: text(fromDatabase?.code),
    reason,
    table: text(fromDatabase?.table),
    column: text(fromDatabase?.column),
    constraint: text(fromDatabase?.constraint),
    statement: typeof withStatement?.query === "string" ? statementWithoutValues(withStatement.query) : null,
  };
}

/** One line for a person: `database error 23505: duplicate key … (table events, constraint events_pkey)`. */
export function describeQueryFailure(failure: QueryFailure): string {
  const where = [
    failure.table && `table ${failure.table}`,
    failure.column && `column ${failure.column}`,
    failure.constraint && `constraint ${failure.constraint}`,
  ].filter(Boolean);
  const code = failure.code ? ` ${failure.code}` : "";
  return `database error${code}: ${failure.reason}${where.length > 0 ? ` (${where.join(", ")})` : ""}`;
}

/**
 * An error fit to print or send: a failed query becomes one line without its values (its name
 * kept as QueryFailedError); any other error is returned as it is.
 */
export function withoutBoundValues(err: unknown): unknown {
  const failure = queryFailureOf(err);
  if (failure === null) return err;
  const clean = new Error(describeQueryFailure(failure));
  clean.name = "QueryFailedError";
  return clean;
}

/** The stack's frames only: its first line repeats the message, which for Drizzle holds the values. */
function framesOf(err: unknown): string | undefined {
  const stack = err instanceof Error ? err.stack : undefined;
  return stack
    ?.split("\n")
    .filter((line) => /^\s+at /.test(line))
    .join("\n");
}

/**
 * The logger's `err` serializer: a failed query is logged by its value-free fields and frames,
 * anything else as pino logs errors by default.
 */
export function serializeLoggedError(err: unknown): unknown {
  const failure = queryFailureOf(err);
  if (failure === null) return err instanceof Error ? pino.stdSerializers.err(err) : err;
  return {
    type: "QueryFailedError",
    message: describeQueryFailure(failure),
    ...failure,
    stack: framesOf(err),
  };
}
