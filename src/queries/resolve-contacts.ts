import { randomUUID } from "node:crypto";
import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import type { ContactKey } from "../ingest/identity.ts";

export interface ContactFacts {
  key: ContactKey;
  email: string | null;
  phone: string | null;
  name: string | null;
  /** Titles of the forms the contact filled in, in order: added to its `form_titles` when new. */
  formTitles?: readonly string[];
}

/** `kind:key`, the map key of a contact identity. */
export const identityOf = (f: Pick<ContactFacts, "key">) => `${f.key.kind}:${f.key.key}`;

/**
 * The contacts of a batch of identities in one statement, whatever the batch size: existing ones
 * matched (email first, phone as the fallback), filled where they lack a phone or name and given the
 * form titles they lack, new ones created; two more when some got a phone or a name
 * (passOnContactFields). Returns identity → contact id.
 */
export async function resolveContacts(
  db: Sql,
  accountId: string,
  params: { facts: readonly ContactFacts[] },
): Promise<Map<string, string>> {
  // One entry per identity; what one event lacks (a phone, a name), a later one of the batch gives.
  const unique = new Map<string, ContactFacts>();
  for (const f of params.facts) {
    const seen = unique.get(identityOf(f));
    unique.set(
      identityOf(f),
      seen
        ? {
            ...seen,
            phone: seen.phone ?? f.phone,
            name: seen.name ?? f.name,
            formTitles: [...new Set([...(seen.formTitles ?? []), ...(f.formTitles ?? [])])],
          }
        : f,
    );
  }
  const resolved = new Map<string, string>();
  // A second round finds what a concurrent writer created while ours yielded (ON CONFLICT DO NOTHING).
  for (let round = 0; round < 2 && resolved.size < unique.size; round++) {
    const pending = [...unique].filter(([identity]) => !resolved.has(identity)).map(([, facts]) => facts);
    for (const [identity, id] of await matchOrCreate(db, accountId, pending)) resolved.set(identity, id);
  }
  if (resolved.size < unique.size) throw new Error("contacts could not be resolved");
  return resolved;
}

async function matchOrCreate(
  db: Sql,
  accountId: string,
  facts: readonly ContactFacts[],
): Promise<Map<string, string>> {
  const incoming = JSON.stringify(
    facts.map((f) => ({
      kind: f.key.kind,
      key: f.key.key,
      email: f.email,
      phone: f.phone,
      name: f.name,
      titles: f.formTitles ?? [],
      new_id: randomUUID(),
    })),
  );
  const found = await rows<{ kind: string; key: string; id: string }>(
    db,
    sql`
      with incoming as (
        select * from jsonb_to_recordset(${incoming}::jsonb)
          as f(kind text, key text, email text, phone text, name text, titles text[], new_id uuid)
      ), candidates as (
        -- Two equality joins rather than one OR: each can use its own index.
        select i.kind, i.key, c.id, c.created_at, i.phone, i.name, i.titles,
               (c.phone is null and i.phone is not null) or (c.name is null and i.name is not null) as fills
        from incoming i
        join contacts c on c.account_id = ${accountId} and c.email = i.key
        where i.kind = 'email'
        union all
        select i.kind, i.key, c.id, c.created_at, i.phone, i.name, i.titles,
               (c.phone is null and i.phone is not null) or (c.name is null and i.name is not null) as fills
        from incoming i
        join contacts c on c.account_id = ${accountId} and c.phone = i.key and c.email is null
        where i.kind = 'phone'
      ), matched as (
        select distinct on (kind, key) kind, key, id, phone, name, titles, fills
        from candidates
        order by kind, key, created_at, id
      ), filled as (
        -- fills was read before the row was locked: at worst it names a contact that a concurrent
        -- writer filled first, whose read models are then refreshed once more.
        update contacts c
        set phone = coalesce(c.phone, m.phone), name = coalesce(c.name, m.name),
            form_titles = c.form_titles || array(
              select u.title from unnest(m.titles) with ordinality as u(title, ord)
              where not (u.title = any(c.form_titles)) order by u.ord),
            updated_at = now()
        from matched m
        where c.account_id = ${accountId} and c.id = m.id
          and ((c.phone is null and m.phone is not null) or (c.name is null and m.name is not null)
               or not (m.titles <@ c.form_titles))
        returning c.id, m.fills
      ), created as (
        insert into contacts (account_id, id, email, phone, name, form_titles)
        select ${accountId}, i.new_id, i.email, i.phone, i.name, i.titles
        from incoming i
        where not exists (select 1 from matched m where m.kind = i.kind and m.key = i.key)
        on conflict (account_id, email) where email is not null do nothing
        returning id, email, phone
      )
      select kind, key, id from matched
      union all
      select case when email is not null then 'email' else 'phone' end, coalesce(email, phone), id from created
      union all
      select ${FILLED}, '', id from filled where fills`,
    { prepare: true },
  );
  const filled = found.filter((r) => r.kind === FILLED).map((r) => r.id);
  if (filled.length > 0) await passOnContactFields(db, accountId, filled);
  return new Map(found.filter((r) => r.kind !== FILLED).map((r) => [`${r.kind}:${r.key}`, r.id]));
}

/** The kind of the statement's rows naming the contacts it just gave a phone or a name. */
const FILLED = "filled";

/**
 * What the read models keep of a contact follows it getting a name or a phone (rare: each happens
 * once): its purchases that came without a name list its name (migration 0041), and its customer
 * row, if it is one, is recomputed with the contact's fields (0042). An event's write would recompute
 * the customer anyway, but a touchpoint's (a form collected on a landing page) does not.
 */
async function passOnContactFields(db: Sql, accountId: string, contactIds: readonly string[]): Promise<void> {
  const ids = `{${contactIds.join(",")}}`;
  await db.execute(sql`
    update purchases p set contact_name = c.name
    from contacts c
    where p.account_id = ${accountId} and c.account_id = p.account_id and c.id = p.contact_id
      and p.contact_id = any(${ids}::uuid[])
      and p.contact_name is null and c.name is not null`);
  await db.execute(sql`select ascribe_refresh_customer_totals(${accountId}::uuid, ${ids}::uuid[])`);
}

/** The contact of one identity, created when new. */
export async function findOrCreateContact(db: Sql, accountId: string, facts: ContactFacts): Promise<string> {
  const resolved = await resolveContacts(db, accountId, { facts: [facts] });
  const id = resolved.get(identityOf(facts));
  if (!id) throw new Error("contact could not be resolved");
  return id;
}
