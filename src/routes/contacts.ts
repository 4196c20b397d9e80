import { z } from "zod";
import { normalizeEmail } from "../ingest/identity.ts";
import { contactCalls } from "../queries/contact-calls.ts";
import { contactsCustomers } from "../queries/contacts-customers.ts";
import { contactsList } from "../queries/contacts-list.ts";
import { contactsPurchases } from "../queries/contacts-purchases.ts";
import { limitParam, offsetParam, optionalWindow, reportWindow, windowQuery } from "../reports/window.ts";
import { defineRoute } from "./route-def.ts";

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

export const searchParam = z.string().trim().min(1, "must not be empty").max(200);

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
    input: z.object({}),
    description:
      "Customers (contacts who bought), newest first: contact, first CRM event, latest lead, first payment, commission status and expiry, total revenue, purchases and commission, products.",
    handler: ({ tx, tenant }) => contactsCustomers(tx, tenant.accountId),
  }),
  defineRoute({
    methods: ["GET"],
    path: "/contacts/purchases",
    scope: "read:contacts",
    input: windowQuery({}),
    description:
      "Purchases dated in a window (from/to, default the last 30 days), newest first: product, contact, amount, commission terms and invoice.",
    handler: ({ tx, tenant, input, now }) =>
      contactsPurchases(tx, tenant.accountId, { window: reportWindow(input, tenant, now) }),
  }),
  defineRoute({
    methods: ["GET"],
    path: "/contacts/calls",
    scope: "read:calls",
    input: z.object({ email: emailParam.optional() }),
    description:
      "The calls of the last 365 days in which a contact took part (email, required), newest first, each with its analysis and the contact's email; artifact_id opens the transcript and the recording. Without email, an empty array.",
    handler: async ({ tx, tenant, input, now }) =>
      input.email === undefined ? [] : contactCalls(tx, tenant.accountId, { email: input.email, now }),
  }),
];
