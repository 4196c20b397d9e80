import type { Sql } from "../db/client.ts";
import { saleEvents } from "../queries/sale-events.ts";
import { saleRule } from "../queries/sale-rule.ts";
import { type SaleVerdict, updateSaleCounts } from "../queries/update-sale-counts.ts";
import { countSales, type SaleRule } from "./sale-counting.ts";

const WRITE_CHUNK = 1000;

const round2 = (n: number): number => Math.round(n * 100) / 100;

/**
 * Materializes sale counting (counted, drop_reason, group_key, contact_seq, and each purchase's
 * revenue, refunds and disputes on its opening event) on the account's sale and payment events — all of them after a rule change, or those of the contacts an ingest touched.
 * Runs inside the caller's transaction. Events with no contact each stand alone.
 */
export async function recomputeSaleCounts(
  tx: Sql,
  accountId: string,
  options: { contactIds?: readonly string[]; rule?: SaleRule } = {},
): Promise<{ events: number }> {
  const rule = options.rule ?? (await saleRule(tx, accountId));
  const events = await saleEvents(tx, accountId, { contactIds: options.contactIds });
  const counts: SaleVerdict[] = [];
  let start = 0;
  while (start < events.length) {
    const contactId = events[start]?.contact_id ?? null;
    let end = start + 1;
    if (contactId !== null) {
      while (end < events.length && events[end]?.contact_id === contactId) end += 1;
    }
    const batch = events.slice(start, end);
    const contactKey = contactId ?? `event:${batch[0]?.id ?? ""}`;
    const { counts: verdicts, groups } = countSales(contactKey, batch, rule);
    const totals = new Map(groups.map((g) => [g.group_key, g]));
    for (const v of verdicts) {
      const group = v.group_key === v.id ? totals.get(v.id) : undefined;
      counts.push({
        ...v,
        group_revenue: group ? round2(group.revenue) : null,
        group_refunds: group ? round2(group.refunds) : null,
        group_disputes: group ? round2(group.disputes) : null,
      });
    }
    start = end;
  }
  for (let i = 0; i < counts.length; i += WRITE_CHUNK) {
    await updateSaleCounts(tx, accountId, { counts: counts.slice(i, i + WRITE_CHUNK) });
  }
  return { events: events.length };
}
