import type { PGlite } from "@electric-sql/pglite";

/*
 * PGlite runs PostgreSQL without its autovacuum launcher. Left alone, an embedded database never
 * vacuums (the rollups' delta logs and the rollups themselves, rewritten by every fold, bloat until
 * each report walks many dead versions per live row: 420 ms instead of 20 at scale 100) and never
 * analyzes (the planner guesses every table's size). The process applies PostgreSQL's own
 * autovacuum rule instead, from the same statistics and with each table's own autovacuum settings
 * (the delta logs' in migration 0008): vacuum when the dead rows, or the rows inserted since the
 * last vacuum, pass threshold + scale factor × rows; analyze when the rows changed since the last
 * analyze pass theirs, or when a table holding rows was never analyzed. PGlite keeps no statistics
 * across restarts, so the counts of what another process wrote are lost: the first pass analyzes
 * what was never analyzed, and vacuums each table that has pages not marked all-visible (rows that
 * process wrote or rewrote after its last pass, below its thresholds: the newest rows, which every
 * report over recent days reads, fetched from the heap behind each index-only scan). A table whose
 * pages are all visible is not revisited.
 *
 * The statistics of `account_id` are dropped as soon as they are taken. Passes come between bursts
 * of writes, not during them: statistics taken after one account's load say that any other account
 * has no rows, and the next account's load (a second demo, an import into a new account) was planned
 * as one row against one row — nested loops over all of that account's rows for each of its rows (a
 * second demo account at scale 1: 825 s instead of 17). Without them, the planner takes an account
 * for a fixed share of each table (1/200), as it did before this process analyzed anything; the
 * other columns' statistics and the tables' sizes are what the reports' plans need. (An ANALYZE of a
 * column list would keep the changes counted, so the table would stay due; `SET STATISTICS 0` would
 * keep statistics already taken. PGlite's one user is a superuser and may edit pg_statistic.)
 */
const DUE = `
  with t as (
    select
      format('%I.%I', s.schemaname, s.relname) as name,
      greatest(c.reltuples, 0) as row_estimate,
      c.reltuples < 0 and pg_relation_size(c.oid) > 0 as never_analyzed,
      s.last_vacuum is null
        and c.relallvisible < pg_relation_size(c.oid) / current_setting('block_size')::int as unvisited,
      s.n_live_tup, s.n_dead_tup, s.n_ins_since_vacuum, s.n_mod_since_analyze,
      (select jsonb_object_agg(o.option_name, o.option_value) from pg_options_to_table(c.reloptions) o) as opt,
      (select format('DELETE FROM pg_statistic WHERE starelid = %L::regclass AND staattnum = %s',
                     format('%I.%I', s.schemaname, s.relname), a.attnum)
       from pg_attribute a where a.attrelid = c.oid and a.attname = 'account_id' and not a.attisdropped)
        as forget_accounts
    from pg_stat_user_tables s
    join pg_class c on c.oid = s.relid
  )
  select name, forget_accounts,
    n_dead_tup > coalesce((opt->>'autovacuum_vacuum_threshold')::float8, 50)
        + coalesce((opt->>'autovacuum_vacuum_scale_factor')::float8, 0.2) * row_estimate
      or n_ins_since_vacuum > coalesce((opt->>'autovacuum_vacuum_insert_threshold')::float8, 1000)
        + coalesce((opt->>'autovacuum_vacuum_insert_scale_factor')::float8, 0.2) * row_estimate
      or unvisited
      or ($1 and (n_dead_tup > 0 or n_ins_since_vacuum > 0))
      as vacuum,
    n_mod_since_analyze > coalesce((opt->>'autovacuum_analyze_threshold')::float8, 50)
        + coalesce((opt->>'autovacuum_analyze_scale_factor')::float8, 0.1) * row_estimate
      or never_analyzed
      or ($1 and n_mod_since_analyze > 0)
      as analyze
  from t
  order by name`;

/**
 * What a bulk write leaves below the thresholds (a seed's or an import's last updates: 7,000 events
 * rewritten at the end of a scale-10 demo, the last month's rows, 3,396 of its 4,777 meetings then
 * fetched from the heap by every report) is what its readers read first. After one, a pass takes
 * every change instead (`afterBulkWrite`), as PostgreSQL's manual advises after a bulk load: a
 * VACUUM skips the pages still all-visible, so it costs what was written.
 */
export interface MaintenanceOptions {
  afterBulkWrite?: boolean;
}

/** The statements one maintenance pass runs now, e.g. `VACUUM public.events`, `ANALYZE public.events; DELETE …`. */
export async function dueMaintenance(client: PGlite, options: MaintenanceOptions = {}): Promise<string[]> {
  // A backend hands its counts to the shared statistics at most once a second, when idle: this one
  // makes it hand them over as this statement ends, so that the query below sees the latest writes.
  await client.exec("select pg_stat_force_next_flush()");
  const due = await client.query<{
    name: string;
    forget_accounts: string | null;
    vacuum: boolean;
    analyze: boolean;
  }>(DUE, [options.afterBulkWrite ?? false]);
  return due.rows.flatMap((t) => [
    ...(t.vacuum ? [`VACUUM ${t.name}`] : []),
    // One statement string, one transaction: no plan is made between the two.
    ...(t.analyze ? [[`ANALYZE ${t.name}`, t.forget_accounts].filter(Boolean).join("; ")] : []),
  ]);
}

/**
 * One pass: each due table in its own statement (VACUUM cannot run inside a transaction, and
 * requests get PGlite's lock between two tables rather than waiting for the whole pass).
 */
export async function maintainEmbedded(client: PGlite, options: MaintenanceOptions = {}): Promise<string[]> {
  const statements = await dueMaintenance(client, options);
  for (const statement of statements) await client.exec(statement);
  return statements;
}
