/**
 * The SQL statements inside the database's own functions (triggers and helpers the migrations
 * create), read back from the migrated database: an SQL function's body as it is, and every query
 * and expression of a PL/pgSQL function (PL/pgSQL runs an expression as `SELECT expr`). A string of
 * a dynamic `EXECUTE format(…)` that parses as a statement once its `%s`/`%I`/`%L` are filled is
 * checked too; one that does not (a fragment passed to format) is left out.
 */
import { parsePlPgSQLSync, parseSync } from "libpg-query";

export interface FunctionStatement {
  fn: string;
  sql: string;
}

export interface FunctionSource {
  name: string;
  language: string;
  body: string;
  definition: string;
}

type Json = { [key: string]: unknown };

function collect(node: unknown, visit: (key: string, value: Json) => void): void {
  if (Array.isArray(node)) {
    for (const n of node) collect(n, visit);
    return;
  }
  if (node === null || typeof node !== "object") return;
  for (const [k, v] of Object.entries(node as Json)) {
    if (v !== null && typeof v === "object" && !Array.isArray(v)) visit(k, v as Json);
    collect(v, visit);
  }
}

/** A PL/pgSQL expression or statement as PostgreSQL would run it, or null if it is neither. */
function asStatement(query: string): string | null {
  for (const candidate of [query, `select ${query}`, `select ${query.replace(/^\s*[\w.]+\s*:=/, "")}`]) {
    try {
      parseSync(candidate);
      return candidate;
    } catch {
      // the next reading
    }
  }
  return null;
}

export function functionStatements(fns: FunctionSource[]): {
  statements: FunctionStatement[];
  unreadable: string[];
} {
  const statements: FunctionStatement[] = [];
  const unreadable: string[] = [];
  for (const f of fns) {
    if (f.language === "sql") {
      statements.push({ fn: f.name, sql: f.body });
      continue;
    }
    if (f.language !== "plpgsql") continue;
    collect(parsePlPgSQLSync(f.definition), (key, value) => {
      if (key !== "PLpgSQL_expr" || typeof value.query !== "string") return;
      const sql = asStatement(value.query);
      if (sql === null) {
        unreadable.push(`${f.name}: ${value.query.slice(0, 80)}`);
        return;
      }
      statements.push({ fn: f.name, sql });
      // Strings handed to EXECUTE format(…): statements once their placeholders are filled.
      collect(parseSync(sql), (k, v) => {
        const text = (k === "String" || k === "sval") && typeof v.sval === "string" ? v.sval : null;
        if (!text || !/\b(select|insert|update|delete)\b/i.test(text)) return;
        let unnumbered = 0;
        const filled = text.replace(/%(?:(\d+)\$)?[sIL]/g, (_m, n?: string) => {
          unnumbered += n === undefined ? 1 : 0;
          return `"fmt${n ?? `_${unnumbered}`}"`;
        });
        try {
          parseSync(filled);
          statements.push({ fn: `${f.name} (dynamic)`, sql: filled });
        } catch {
          // a fragment, not a statement
        }
      });
    });
  }
  return { statements, unreadable };
}
