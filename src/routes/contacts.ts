import { z } from "zod";
import { normalizeEmail } from "../ingest/identity.ts";
import { contactCalls } from "../queries/contact-calls.ts";
import { contactsCustomers, contactsCustomersBatches } from "../queries/contacts-customers.ts";
import { contactsList } from "../queries/contacts-list.ts";
import { contactsPurchases, contactsPurchasesBatches } from "../queries/contacts-purchases.ts";
import {
  limitParam,
  offsetParam,
  optionalIntParam,
  optionalWindow,
  queryParamDocs,
  reportWindow,
  windowQuery,
} from "../reports/window.ts";
import { callShape } from "./calls.ts";
import { defineRoute } from "./route-def.ts";
import { count, instant, money, text } from "./shapes.ts";

/** An email parameter, normalized as contacts are keyed (identity.ts); refused when it is not one. */
export const emailParam = z
  .string({ error: (issue) => (issue.input === undefined ? "is required" : "must be a string") })
  .transform((value, ctx) => {
    const email = normalizeEmail(value);
    if (email === null) {
      ctx.addIssue({ code: "custom", message: "must be an email address" });
      return z.NEVER;
    }
    return email;
  });
queryParamDocs.add(emailParam, { format: "email" });

export const searchParam = z.string().trim().min(1, "must not be empty").max(200);

/**
 * The optional paging of the lists SPEC returns whole (customers, purchases): without `limit` the
 * whole list (after `offset`), streamed; a limit outside 1–500 is refused, not clamped.
 */
const MAX_LIMIT = 500;
/**
 * Rows per fetch of a streamed list: one batch is checked and written while the next is read. 2,000
 * rather than 500: fewer round trips, and each fetch long enough for the database's reading to
 * overlap the process's serialising (docs/scaling.md); two batches of ~600 bytes a row in memory.
 */
const STREAM_BATCH = 2000;
const listPaging = () => ({
  limit: optionalIntParam({
    min: 1,
    max: MAX_LIMIT,
    description: `Rows in the page, 1 to ${MAX_LIMIT} (refused outside, not clamped); without it, the whole list from \`offset\` on, streamed.`,
  }),
  offset: optionalIntParam({ min: 0 }),
});
const PAGING_TEXT = "limit optional, max 500 (without it, the whole list from offset on); offset default 0.";

export const contactsRoutes = [
  defineRoute({
    methods: ["GET"],
    path: "/contacts",
    scope: "read:contacts",
    input: windowQuery({
      limit: limitParam(100, 500),
      offset: offsetParam(),
      search: searchParam.optional(),
    }),
    output: z.array(
      z.object({
        email: text(),
        total_events: count(),
        event_types: z.array(z.string()),
        first_event_date: instant().nullable(),
        last_event_date: instant().nullable(),
        name: text(),
        phone: text(),
        sources: z.array(z.string()),
        assigned_user_name: text(),
        value: money().nullable(),
        form_titles: z.array(z.string()),
        has_campaign: z.boolean(),
        tags: z.array(z.string()),
        form_response: z.unknown(),
      }),
    ),
    description:
      "Contacts, most recently active first (last CRM event; contacts without events last), with their event counts and types, first and last event, sources, rep, value, form titles and answers, tags. from/to keep contacts whose last event falls in the window (no window without them); search matches a fragment of the email, name or phone. limit default 100, max 500; offset default 0.",
    handler: ({ tx, tenant, input, now }) =>
      contactsList(tx, tenant.accountId, {
        window: optionalWindow(input, tenant, now),
        search: input.search,
        limit: input.limit,
        offset: input.offset,
      }),
  }),
  defineRoute({
    methods: ["GET"],
    path: "/contacts/customers",
    scope: "read:contacts",
    input: z.object(listPaging()),
    output: z.array(
      z.object({
        id: z.string(),
        contact_email: text(),
        contact_name: text(),
        contact_phone: text(),
        contact_id: z.string(),
        first_event_type: text(),
        first_event_date: instant().nullable(),
        latest_lead_date: instant().nullable(),
        first_payment_date: instant().nullable(),
        commission_status: text(),
        commission_expires_at: instant().nullable(),
        total_revenue: money(),
        total_purchases: count(),
        total_commission: money(),
        products: z.array(z.string()),
        created_at: instant(),
      }),
    ),
    description: `Customers (contacts who bought), newest first (then id): contact, first CRM event, latest lead, first payment, commission status and expiry, total revenue, purchases and commission, products. ${PAGING_TEXT}`,
    handler: ({ tx, tenant, input }) =>
      contactsCustomers(tx, tenant.accountId, { limit: input.limit, offset: input.offset }),
    stream: ({ tenant, input }) =>
      input.limit !== undefined
        ? null
        : (tx) =>
            contactsCustomersBatches(tx, tenant.accountId, { offset: input.offset, batch: STREAM_BATCH }),
  }),
  defineRoute({
    methods: ["GET"],
    path: "/contacts/purchases",
    scope: "read:contacts",
    input: windowQuery(listPaging()),
    output: z.array(
      z.object({
        id: z.string(),
        purchase_date: instant(),
        product_key: text(),
        product_name: text(),
        contact_email: text(),
        contact_name: text(),
        amount: money(),
        commissionable: z.boolean(),
        commission_rate: z.number().nullable(),
        commission_amount: money().nullable(),
        invoice_id: text(),
      }),
    ),
    description: `Purchases dated in a window (from/to, default the last 30 days), newest first (then id): product, contact, amount, commission terms and invoice. ${PAGING_TEXT}`,
    handler: ({ tx, tenant, input, now }) =>
      contactsPurchases(tx, tenant.accountId, {
        window: reportWindow(input, tenant, now),
        limit: input.limit,
        offset: input.offset,
      }),
    stream: ({ tenant, input, now }) => {
      if (input.limit !== undefined) return null;
      const window = reportWindow(input, tenant, now);
      return (tx) =>
        contactsPurchasesBatches(tx, tenant.accountId, { window, offset: input.offset, batch: STREAM_BATCH });
    },
  }),
  defineRoute({
    methods: ["GET"],
    path: "/contacts/calls",
    scope: "read:calls",
    input: z.object({ email: emailParam.optional() }),
    output: z.array(z.object({ ...callShape, contact_email: z.string() })),
    example: { email: "lucas.durand@example.com" },
    description:
      "The calls of the last 365 days in which a contact took part (email, required), newest first, each with its analysis and the contact's email; artifact_id opens the transcript and the recording. Without email, an empty array.",
    handler: async ({ tx, tenant, input, now }) =>
      input.email === undefined ? [] : contactCalls(tx, tenant.accountId, { email: input.email, now }),
  }),
];
