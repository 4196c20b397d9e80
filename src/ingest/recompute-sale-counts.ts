import type { Sql } from "../db/client.ts";
import { saleEvents } from "../queries/sale-events.ts";
import { saleRule } from "../queries/sale-rule.ts";
import { updateSaleCounts } from "../queries/update-sale-counts.ts";
import { countSales, type SaleCount, type SaleRule } from "./sale-counting.ts";

const WRITE_CHUNK = 1000;

/**
 * Materializes sale counting (counted, drop_reason, group_key, contact_seq) on the account's sale
 * and payment events — all of them after a rule change, or those of the contacts an ingest touched.
 * Runs inside the caller's transaction. Events with no contact each stand alone.
 */
export async function recomputeSaleCounts(
  tx: Sql,
  accountId: string,
  options: { contactIds?: readonly string[]; rule?: SaleRule } = {},
): Promise<{ events: number }> {
  const rule = options.rule ?? (await saleRule(tx, accountId));
  const events = await saleEvents(tx, accountId, { contactIds: options.contactIds });
  const counts: SaleCount[] = [];
  let start = 0;
  while (start < events.length) {
    const contactId = events[start]?.contact_id ?? null;
    let end = start + 1;
    if (contactId !== null) {
      while (end < events.length && events[end]?.contact_id === contactId) end += 1;
    }
    const batch = events.slice(start, end);
    const contactKey = contactId ?? `event:${batch[0]?.id ?? ""}`;
    counts.push(...countSales(contactKey, batch, rule).counts);
    start = end;
  }
  for (let i = 0; i < counts.length; i += WRITE_CHUNK) {
    await updateSaleCounts(tx, accountId, { counts: counts.slice(i, i + WRITE_CHUNK) });
  }
  return { events: events.length };
}
