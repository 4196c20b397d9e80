import type { Sql } from "../db/client.ts";
import { type SaleEventRow, saleEvents } from "../queries/sale-events.ts";
import { saleRule } from "../queries/sale-rule.ts";
import { type SaleVerdict, updateSaleCounts } from "../queries/update-sale-counts.ts";
import { countSales, type SaleRule } from "./sale-counting.ts";

const WRITE_CHUNK = 1000;

const round2 = (n: number): number => Math.round(n * 100) / 100;

/**
 * Sale counting's verdicts for sale-type events grouped by contact (consecutive), each purchase's
 * revenue, refunds and disputes on its opening event. Events with no contact each stand alone.
 */
function saleVerdicts(events: readonly SaleEventRow[], rule: SaleRule): SaleVerdict[] {
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
  return counts;
}

/**
 * Materializes sale counting (counted, drop_reason, group_key, contact_seq, and each purchase's
 * revenue, refunds and disputes on its opening event) on the account's sale and payment events —
 * all of them after a rule change, or those of the contacts an ingest touched. Writes only the
 * verdicts that changed. Runs inside the caller's transaction.
 */
export async function recomputeSaleCounts(
  tx: Sql,
  accountId: string,
  options: { contactIds?: readonly string[]; rule?: SaleRule } = {},
): Promise<{ events: number }> {
  const rule = options.rule ?? (await saleRule(tx, accountId));
  const events = await saleEvents(tx, accountId, { contactIds: options.contactIds });
  const counts = saleVerdicts(events, rule);
  for (let i = 0; i < counts.length; i += WRITE_CHUNK) {
    await updateSaleCounts(tx, accountId, { counts: counts.slice(i, i + WRITE_CHUNK) });
  }
  return { events: events.length };
}

/**
 * The verdicts that the sale-type events about to be written (each with its contact) will have
 * among their contacts' stored ones. `written` names every event the write replaces or adds, so a
 * stored sale about to become another type drops out. Written with the events, these verdicts leave
 * the recount after the write only the stored events they change (a purchase's opening event
 * gaining an installment or a refund): updating every new sale after its insert ran the events'
 * statement triggers a second time (bench/README.md, "Import"). Only a prediction: amounts are not
 * yet rounded as stored and instants not yet read back, so the recount still decides.
 */
export async function predictSaleCounts(
  tx: Sql,
  accountId: string,
  params: { sales: readonly (SaleEventRow & { contact_id: string })[]; written: ReadonlySet<string> },
  rule: SaleRule,
): Promise<Map<string, SaleVerdict>> {
  const byContact = new Map<string, SaleEventRow[]>();
  const add = (contactId: string, e: SaleEventRow) => {
    const events = byContact.get(contactId);
    if (events) events.push(e);
    else byContact.set(contactId, [e]);
  };
  const contactIds = [...new Set(params.sales.map((e) => e.contact_id))];
  for (const e of await saleEvents(tx, accountId, { contactIds })) {
    if (e.contact_id !== null && !params.written.has(e.id)) add(e.contact_id, e);
  }
  for (const e of params.sales) add(e.contact_id, e);
  const predicted = new Map<string, SaleVerdict>();
  for (const v of saleVerdicts([...byContact.values()].flat(), rule)) {
    if (params.written.has(v.id)) predicted.set(v.id, v);
  }
  return predicted;
}
