import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { sql } from "drizzle-orm";
import { seedDemo } from "../../src/admin/demo.ts";
import { type Database, rows, type Sql } from "../../src/db/client.ts";
import { contactsCustomers } from "../../src/queries/contacts-customers.ts";
import { openTestDatabase, seedAccount } from "../helpers/harness.ts";

/*
 * customer_totals (migration 0027): /contacts/customers' read model, kept by statement triggers on
 * customers, purchases and events. Rows are written with plain SQL in request transactions (the
 * request role, as imports and webhooks write), so nothing but the triggers maintains the table; the
 * expected figures are worked out by hand.
 */

let db: Database;
before(async () => {
  db = await openTestDatabase();
});
after(async () => {
  await db.close();
});

interface Totals {
  customer_id: string;
  created_at: string;
  commission_status: string | null;
  commission_expires_at: string | null;
  first_event_type: string | null;
  first_event_at: string | null;
  latest_lead_at: string | null;
  first_payment_at: string | null;
  total_revenue: number;
  total_purchases: number;
  total_commission: number;
  products: string[];
}

const iso = (column: string) =>
  sql.raw(`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as ${column}`);

async function totals(tx: Sql, accountId: string, contactId: string): Promise<Totals | null> {
  const found = await rows<Totals>(
    tx,
    sql`select customer_id::text, ${iso("created_at")}, commission_status, ${iso("commission_expires_at")},
               first_event_type, ${iso("first_event_at")}, ${iso("latest_lead_at")}, ${iso("first_payment_at")},
               total_revenue::float8 as total_revenue, total_purchases, total_commission::float8 as total_commission,
               products
        from customer_totals where account_id = ${accountId} and contact_id = ${contactId}::uuid`,
  );
  const row = found[0];
  // The list does not order products (docs/metrics.md); sorted here so the figures compare exactly.
  return row ? { ...row, products: [...row.products].sort() } : null;
}

const iso2 = (expression: string) =>
  sql.raw(`to_char(${expression} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`);

const at = (day: string, time = "10:00:00") => `2026-${day}T${time}.000Z`;

async function contact(tx: Sql, accountId: string, email: string): Promise<string> {
  const id = randomUUID();
  await tx.execute(sql`insert into contacts (account_id, id, email) values (${accountId}, ${id}, ${email})`);
  return id;
}

async function customer(
  tx: Sql,
  accountId: string,
  contactId: string,
  terms: { createdAt: string; status?: string; expires?: string },
): Promise<string> {
  const id = randomUUID();
  await tx.execute(sql`
    insert into customers (account_id, id, contact_id, commission_status, commission_expires_at, created_at)
    values (${accountId}, ${id}, ${contactId}, ${terms.status ?? null}, ${terms.expires ?? null}::timestamptz,
            ${terms.createdAt}::timestamptz)`);
  return id;
}

interface Purchase {
  id: string;
  date: string;
  amount: number;
  key?: string;
  name?: string;
  commissionable?: boolean;
  rate?: number;
  commission?: number;
}

async function purchase(tx: Sql, accountId: string, contactId: string, p: Purchase) {
  await tx.execute(sql`
    insert into purchases (account_id, id, contact_id, purchase_date, product_key, product_name, amount,
                           commissionable, commission_rate, commission_amount)
    values (${accountId}, ${p.id}, ${contactId}, ${p.date}::timestamptz, ${p.key ?? null}, ${p.name ?? null},
            ${p.amount}, ${p.commissionable ?? false}, ${p.rate ?? null}, ${p.commission ?? null})`);
}

async function event(tx: Sql, accountId: string, contactId: string, id: string, type: string, when: string) {
  await tx.execute(sql`insert into events (account_id, id, contact_id, event_type, event_datetime, origin)
                       values (${accountId}, ${id}, ${contactId}, ${type}, ${when}::timestamptz, 'import')`);
}

const NO_EVENTS = { first_event_type: null, first_event_at: null, latest_lead_at: null };

describe("customer_totals", () => {
  test("a purchase makes no row until its contact is a customer; then the row follows its purchases", async () => {
    const { accountId } = await seedAccount(db);
    await db.tenant(accountId, async (tx) => {
      const ann = await contact(tx, accountId, "ann@x.test");
      await purchase(tx, accountId, ann, {
        id: "a1",
        date: at("03-10"),
        amount: 1000,
        key: "coaching",
        name: "Coaching Program",
        commissionable: true,
        rate: 0.1,
      });
      assert.equal(await totals(tx, accountId, ann), null);

      const annCustomer = await customer(tx, accountId, ann, {
        createdAt: at("03-10", "12:00:00"),
        status: "active",
        expires: at("09-10", "00:00:00"),
      });
      const base = {
        customer_id: annCustomer,
        created_at: at("03-10", "12:00:00"),
        commission_status: "active",
        commission_expires_at: at("09-10", "00:00:00"),
        ...NO_EVENTS,
      };
      // 10 % of 1,000.
      assert.deepEqual(await totals(tx, accountId, ann), {
        ...base,
        first_payment_at: at("03-10"),
        total_revenue: 1000,
        total_purchases: 1,
        total_commission: 100,
        products: ["Coaching Program"],
      });

      // An earlier purchase of a product known by its key only, not commissionable.
      await purchase(tx, accountId, ann, { id: "a2", date: at("03-05"), amount: 250.55, key: "audit" });
      assert.deepEqual(await totals(tx, accountId, ann), {
        ...base,
        first_payment_at: at("03-05"),
        total_revenue: 1250.55,
        total_purchases: 2,
        total_commission: 100,
        products: ["Coaching Program", "audit"],
      });

      // A refund entered as a negative purchase of the same product, its commission given: −25.06.
      await purchase(tx, accountId, ann, {
        id: "a3",
        date: at("03-20"),
        amount: -250.55,
        key: "audit",
        commissionable: true,
        commission: -25.06,
      });
      assert.deepEqual(await totals(tx, accountId, ann), {
        ...base,
        first_payment_at: at("03-05"),
        total_revenue: 1000,
        total_purchases: 3,
        total_commission: 74.94,
        products: ["Coaching Program", "audit"],
      });

      // The first purchase corrected: 1,200 at 12.5 % = 150; its product renamed.
      await tx.execute(sql`update purchases set amount = 1200, commission_rate = 0.125, product_name = 'Coaching Plus'
                           where account_id = ${accountId} and id = 'a1'`);
      assert.deepEqual(await totals(tx, accountId, ann), {
        ...base,
        first_payment_at: at("03-05"),
        total_revenue: 1200,
        total_purchases: 3,
        total_commission: 124.94,
        products: ["Coaching Plus", "audit"],
      });

      // The earliest purchase deleted: the first payment moves to 10 March; "audit" stays (a3).
      await tx.execute(sql`delete from purchases where account_id = ${accountId} and id = 'a2'`);
      assert.deepEqual(await totals(tx, accountId, ann), {
        ...base,
        first_payment_at: at("03-10"),
        total_revenue: 949.45,
        total_purchases: 2,
        total_commission: 124.94,
        products: ["Coaching Plus", "audit"],
      });

      // Every purchase gone: the customer stays, with nothing bought.
      await tx.execute(sql`delete from purchases where account_id = ${accountId}`);
      assert.deepEqual(await totals(tx, accountId, ann), {
        ...base,
        first_payment_at: null,
        total_revenue: 0,
        total_purchases: 0,
        total_commission: 0,
        products: [],
      });
    });
  });

  test("a customer's first event (ties by id) and latest lead follow inserts, updates and deletes", async () => {
    const { accountId } = await seedAccount(db);
    await db.tenant(accountId, async (tx) => {
      const ann = await contact(tx, accountId, "ann@x.test");
      const eve = await contact(tx, accountId, "eve@x.test");
      await purchase(tx, accountId, ann, { id: "a1", date: at("03-10"), amount: 10 });
      await customer(tx, accountId, ann, { createdAt: at("03-10") });
      const events = async () => {
        const t = await totals(tx, accountId, ann);
        return t && { type: t.first_event_type, first: t.first_event_at, lead: t.latest_lead_at };
      };

      await event(tx, accountId, ann, "e-l1", "lead", at("02-01"));
      // At the first lead's instant: the smaller id ("e-ap" < "e-l1") comes first.
      await event(tx, accountId, ann, "e-ap", "application", at("02-01"));
      await event(tx, accountId, ann, "e-l2", "lead", at("02-20", "08:15:00"));
      await event(tx, accountId, ann, "e-bk", "booking", at("02-25"));
      // Events of a contact who bought nothing make no row.
      await event(tx, accountId, eve, "v-l1", "lead", at("01-01"));
      assert.equal(await totals(tx, accountId, eve), null);
      assert.deepEqual(await events(), {
        type: "application",
        first: at("02-01"),
        lead: at("02-20", "08:15:00"),
      });

      // The later lead moved before every other event: first event and latest lead both change.
      await tx.execute(sql`update events set event_datetime = ${at("01-15")}::timestamptz
                           where account_id = ${accountId} and id = 'e-l2'`);
      assert.deepEqual(await events(), { type: "lead", first: at("01-15"), lead: at("02-01") });

      // It becomes a booking: still the first event, no longer a lead.
      await tx.execute(
        sql`update events set event_type = 'booking' where account_id = ${accountId} and id = 'e-l2'`,
      );
      assert.deepEqual(await events(), { type: "booking", first: at("01-15"), lead: at("02-01") });

      // An update of anything the model does not read changes nothing.
      await tx.execute(sql`update events set utm_source = 'fb' where account_id = ${accountId}`);
      assert.deepEqual(await events(), { type: "booking", first: at("01-15"), lead: at("02-01") });

      await tx.execute(sql`delete from events where account_id = ${accountId} and id in ('e-l2', 'e-l1')`);
      assert.deepEqual(await events(), { type: "application", first: at("02-01"), lead: null });

      await tx.execute(sql`delete from events where account_id = ${accountId} and contact_id = ${ann}::uuid`);
      assert.deepEqual(await events(), { type: null, first: null, lead: null });
    });
  });

  test("two contacts merged: the survivor's row takes the other's events and purchases, the other's goes", async () => {
    const { accountId } = await seedAccount(db);
    await db.tenant(accountId, async (tx) => {
      const ann = await contact(tx, accountId, "ann@x.test");
      const dup = await contact(tx, accountId, "ann.work@x.test");
      await event(tx, accountId, ann, "a-l1", "lead", at("02-10"));
      await purchase(tx, accountId, ann, { id: "a1", date: at("03-10"), amount: 100, key: "coaching" });
      const annCustomer = await customer(tx, accountId, ann, { createdAt: at("03-10") });
      await event(tx, accountId, dup, "d-l1", "lead", at("02-20"));
      await event(tx, accountId, dup, "d-bk", "booking", at("01-30"));
      await purchase(tx, accountId, dup, {
        id: "d1",
        date: at("03-01"),
        amount: 40,
        key: "audit",
        name: "Audit",
        commissionable: true,
        commission: 4,
      });
      await customer(tx, accountId, dup, { createdAt: at("03-01") });
      assert.equal((await totals(tx, accountId, dup))?.total_revenue, 40);

      // The merge: the duplicate's rows re-pointed at the survivor, then its customer and contact removed.
      await tx.execute(
        sql`update events set contact_id = ${ann}::uuid where account_id = ${accountId} and contact_id = ${dup}::uuid`,
      );
      await tx.execute(
        sql`update purchases set contact_id = ${ann}::uuid where account_id = ${accountId} and contact_id = ${dup}::uuid`,
      );
      await tx.execute(
        sql`delete from customers where account_id = ${accountId} and contact_id = ${dup}::uuid`,
      );
      await tx.execute(sql`delete from contacts where account_id = ${accountId} and id = ${dup}::uuid`);

      assert.equal(await totals(tx, accountId, dup), null);
      assert.deepEqual(await totals(tx, accountId, ann), {
        customer_id: annCustomer,
        created_at: at("03-10"),
        commission_status: null,
        commission_expires_at: null,
        first_event_type: "booking",
        first_event_at: at("01-30"),
        latest_lead_at: at("02-20"),
        first_payment_at: at("03-01"),
        total_revenue: 140,
        total_purchases: 2,
        total_commission: 4,
        products: ["Audit", "coaching"],
      });
    });
  });

  test("the customer's own terms follow it; deleting the customer or its contact removes the row", async () => {
    const a = await seedAccount(db);
    const b = await seedAccount(db);
    const bobOfB = await db.tenant(b.accountId, async (tx) => {
      const bob = await contact(tx, b.accountId, "bob@x.test");
      await purchase(tx, b.accountId, bob, { id: "b1", date: at("03-02"), amount: 5 });
      await customer(tx, b.accountId, bob, { createdAt: at("03-02") });
      return bob;
    });
    await db.tenant(a.accountId, async (tx) => {
      const ann = await contact(tx, a.accountId, "ann@x.test");
      await purchase(tx, a.accountId, ann, { id: "a1", date: at("03-10"), amount: 10 });
      await customer(tx, a.accountId, ann, { createdAt: at("03-10"), status: "active" });
      await tx.execute(sql`update customers set commission_status = 'expired',
                             commission_expires_at = ${at("03-31", "00:00:00")}::timestamptz
                           where account_id = ${a.accountId} and contact_id = ${ann}::uuid`);
      const t = await totals(tx, a.accountId, ann);
      assert.deepEqual(
        [t?.commission_status, t?.commission_expires_at],
        ["expired", at("03-31", "00:00:00")],
      );

      await tx.execute(sql`delete from customers where account_id = ${a.accountId}`);
      assert.equal(await totals(tx, a.accountId, ann), null);
      // A customer again (a new purchase makes one): the row is back, figures recomputed.
      const again = await customer(tx, a.accountId, ann, { createdAt: at("03-20") });
      assert.equal((await totals(tx, a.accountId, ann))?.customer_id, again);
      assert.equal((await totals(tx, a.accountId, ann))?.total_revenue, 10);

      // The contact deleted (its purchases first: they hold a key to it): customer and row go with it.
      await tx.execute(sql`delete from purchases where account_id = ${a.accountId}`);
      await tx.execute(sql`delete from contacts where account_id = ${a.accountId}`);
      assert.equal(await totals(tx, a.accountId, ann), null);
    });
    // The other account's row never moved.
    const other = await db.tenant(b.accountId, (tx) => totals(tx, b.accountId, bobOfB));
    assert.equal(other?.total_revenue, 5);
  });

  test("two transactions adding purchases to one customer at once both count", async () => {
    const { accountId } = await seedAccount(db);
    const ann = await db.tenant(accountId, async (tx) => {
      const id = await contact(tx, accountId, "ann@x.test");
      await purchase(tx, accountId, id, { id: "a0", date: at("03-01"), amount: 1 });
      await customer(tx, accountId, id, { createdAt: at("03-01") });
      return id;
    });
    // The first holds its transaction open after its insert; the second inserts meanwhile (on
    // PostgreSQL it waits for the first's lock on the customer, on PGlite for its transaction).
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let inserted: () => void = () => {};
    const firstInserted = new Promise<void>((resolve) => {
      inserted = resolve;
    });
    const first = db.tenant(accountId, async (tx) => {
      await purchase(tx, accountId, ann, { id: "a1", date: at("03-02"), amount: 10 });
      inserted();
      await held;
    });
    await firstInserted;
    const second = db.tenant(accountId, (tx) =>
      purchase(tx, accountId, ann, { id: "a2", date: at("03-03"), amount: 100 }),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    release();
    await Promise.all([first, second]);
    const t = await db.tenant(accountId, (tx) => totals(tx, accountId, ann));
    assert.deepEqual([t?.total_revenue, t?.total_purchases], [111, 3]);
  });

  test("on the demo data set, the list from the model is the list computed from events and purchases", async () => {
    const { account_id: accountId } = await seedDemo(db, { seed: 4, days: 60, scale: 0.3 }, undefined, {
      today: "2026-03-31",
    });
    // The definition (docs/metrics.md "Contacts"), computed per customer from the tables themselves.
    const reference = await db.tenant(accountId, (tx) =>
      rows<Record<string, unknown>>(
        tx,
        sql`select cu.id::text as id, c.email as contact_email,
              coalesce(c.name, nullif(btrim(concat_ws(' ', c.first_name, c.last_name)), '')) as contact_name,
              c.phone as contact_phone, c.id::text as contact_id,
              (select e.event_type from events e where e.account_id = cu.account_id and e.contact_id = cu.contact_id
               order by e.event_datetime, e.id limit 1) as first_event_type,
              ${iso2("(select min(e.event_datetime) from events e where e.account_id = cu.account_id and e.contact_id = cu.contact_id)")} as first_event_date,
              ${iso2("(select max(e.event_datetime) from events e where e.account_id = cu.account_id and e.contact_id = cu.contact_id and e.event_type = 'lead')")} as latest_lead_date,
              ${iso2("(select min(x.purchase_date) from purchases x where x.account_id = cu.account_id and x.contact_id = cu.contact_id)")} as first_payment_date,
              cu.commission_status, ${iso2("cu.commission_expires_at")} as commission_expires_at,
              (select coalesce(sum(x.amount), 0)::float8 from purchases x
               where x.account_id = cu.account_id and x.contact_id = cu.contact_id) as total_revenue,
              (select count(*)::int from purchases x
               where x.account_id = cu.account_id and x.contact_id = cu.contact_id) as total_purchases,
              (select coalesce(sum(round(coalesce(x.commission_amount, x.amount * x.commission_rate, 0), 2)), 0)::float8
               from purchases x where x.account_id = cu.account_id and x.contact_id = cu.contact_id
                 and x.commissionable) as total_commission,
              (select coalesce(array_agg(distinct coalesce(x.product_name, x.product_key)), '{}') from purchases x
               where x.account_id = cu.account_id and x.contact_id = cu.contact_id
                 and coalesce(x.product_key, x.product_name) is not null) as products,
              ${iso2("cu.created_at")} as created_at
            from customers cu join contacts c on c.account_id = cu.account_id and c.id = cu.contact_id
            where cu.account_id = ${accountId}
            order by cu.created_at desc, cu.id desc`,
      ),
    );
    const listed = await db.tenant(accountId, (tx) => contactsCustomers(tx, accountId));
    assert.ok(reference.length > 50, `a demo with customers (${reference.length})`);
    const sortProducts = (r: Record<string, unknown>) => ({
      ...r,
      products: [...(r.products as string[])].sort(),
    });
    assert.deepEqual(listed.map(sortProducts), reference.map(sortProducts));
  });
});
