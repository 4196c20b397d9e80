import { createReadStream } from "node:fs";
import { extname } from "node:path";
import { createInterface } from "node:readline";
import { parse } from "csv-parse";

export type ImportFormat = "jsonl" | "csv";

/** One line of an import file: its 1-based line number and either the record or why it is unreadable. */
export type ReadLine = { line: number; record: Record<string, unknown> } | { line: number; error: string };

export function formatOf(path: string): ImportFormat {
  const ext = extname(path).toLowerCase();
  if (ext === ".jsonl" || ext === ".ndjson" || ext === ".json") return "jsonl";
  if (ext === ".csv") return "csv";
  throw new Error(`${path}: unknown format (use .jsonl or .csv)`);
}

/** Streams the records of a JSON-lines or CSV (header row) file, never holding the whole file. */
export async function* readRecords(
  path: string,
  format: ImportFormat = formatOf(path),
): AsyncGenerator<ReadLine> {
  if (format === "jsonl") {
    const lines = createInterface({
      input: createReadStream(path, "utf8"),
      crlfDelay: Number.POSITIVE_INFINITY,
    });
    let line = 0;
    for await (const text of lines) {
      line += 1;
      const trimmed = line === 1 ? text.replace(/^\uFEFF/, "").trim() : text.trim();
      if (trimmed === "") continue;
      try {
        const value: unknown = JSON.parse(trimmed);
        if (typeof value !== "object" || value === null || Array.isArray(value)) {
          yield { line, error: "not a JSON object" };
        } else {
          yield { line, record: value as Record<string, unknown> };
        }
      } catch {
        yield { line, error: "not valid JSON" };
      }
    }
    return;
  }
  const parser = createReadStream(path).pipe(
    parse({
      columns: true,
      bom: true,
      skip_empty_lines: true,
      trim: true,
      info: true,
      relax_column_count: true,
    }),
  );
  try {
    for await (const row of parser as AsyncIterable<{
      record: Record<string, string>;
      info: { lines: number };
    }>) {
      // Empty cells are absent values, not empty strings.
      const record = Object.fromEntries(Object.entries(row.record).filter(([, v]) => v !== ""));
      yield { line: row.info.lines, record };
    }
  } catch (err) {
    const line = (err as { lines?: number }).lines ?? 0;
    yield { line, error: `unreadable CSV: ${(err as Error).message}` };
  }
}
