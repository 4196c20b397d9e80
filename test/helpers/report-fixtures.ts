import type { Database } from "../../src/db/client.ts";
import { type ImportKind, type ImportKindName, importKinds } from "../../src/import/kinds.ts";
import { reResolveAds } from "../../src/ingest/re-resolve-ads.ts";
import { testSecrets } from "./harness.ts";

/** An ISO instant in UTC: `at("2026-03-02")` is 10:00 that day. */
export const at = (day: string, time = "10:00:00") => `${day}T${time}Z`;

/**
 * Hand-built report data, written through the same import path as `ascribe import` (validation,
 * identity, enrichment, ad resolution, sale counting), kind by kind in the order given. Records are
 * the README's import shapes. Throws on a record the import would refuse, so a fixture typo fails
 * loudly instead of quietly missing from the expected figures.
 */
export type Fixture = Partial<Record<ImportKindName, readonly Record<string, unknown>[]>>;

export async function loadFixture(db: Database, accountId: string, fixture: Fixture): Promise<void> {
  await db.tenant(accountId, async (tx) => {
    let adsChanged = 0;
    for (const [name, records] of Object.entries(fixture) as [ImportKindName, Record<string, unknown>[]][]) {
      // Each kind writes its own record type; the schema just above produced it.
      const kind = importKinds[name] as ImportKind<unknown>;
      const parsed = records.map((record, i) => {
        const result = kind.schema.safeParse(record);
        if (!result.success) throw new Error(`fixture ${name}[${i}]: ${result.error.message}`);
        return result.data;
      });
      // As `ascribe import` does: a record named twice keeps its last version.
      const latest = new Map(parsed.map((record) => [kind.identity(record), record]));
      const written = await kind.write(tx, accountId, [...latest.values()], { secrets: testSecrets });
      adsChanged += written.adsChanged ?? 0;
    }
    if (adsChanged > 0) await reResolveAds(tx, accountId);
  });
}
