import { sql } from "drizzle-orm";
import {
  bigint,
  boolean,
  customType,
  date,
  doublePrecision,
  foreignKey,
  index,
  integer,
  json,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  text,
  timestamp,
  unique,
  uniqueIndex,
  uuid,
} from "drizzle-orm/pg-core";

/*
 * Every tenant table has `account_id` first in its primary key (and in every foreign key) so the
 * schema can be distributed by account (Citus) without change. Row-level security on these tables
 * is applied by the hand-written migration that follows the generated ones.
 */

const createdAt = () => timestamp("created_at", { withTimezone: true }).notNull().defaultNow();

export const accounts = pgTable("accounts", {
  id: uuid("id").primaryKey(),
  name: text("name").notNull(),
  plan: text("plan", { enum: ["free", "pro", "business"] }).notNull(),
  timezone: text("timezone").notNull(),
  currency: text("currency").notNull(),
  clientKey: text("client_key").notNull().unique(),
  createdAt: createdAt(),
});

/** Facts about the instance itself (not about any tenant). */
export const serviceState = pgTable("service_state", {
  name: text("name").primaryKey(),
  value: jsonb("value").notNull(),
});

export const users = pgTable("users", {
  id: uuid("id").primaryKey(),
  email: text("email").notNull().unique(),
  /** scrypt, self-describing (`scrypt$N$r$p$salt$hash`); null until the user follows a one-time link. */
  passwordHash: text("password_hash"),
  createdAt: createdAt(),
});

/**
 * Signed-in browsers. Only the SHA-256 of the cookie's value is kept. Not a tenant table: a person
 * may belong to several accounts; `current_account` is the one the pages show.
 */
export const webSessions = pgTable(
  "web_sessions",
  {
    idHash: text("id_hash").primaryKey(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    currentAccount: uuid("current_account"),
    /** The synchronizer token every state-changing form carries. */
    csrfToken: text("csrf_token").notNull(),
    createdAt: createdAt(),
    lastSeenAt: timestamp("last_seen_at", { withTimezone: true }).notNull(),
  },
  (t) => [index("web_sessions_user_idx").on(t.userId)],
);

/** One-time links (an invitation, a password reset): only the SHA-256 of the token is kept. */
export const userTokens = pgTable(
  "user_tokens",
  {
    tokenHash: text("token_hash").primaryKey(),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    purpose: text("purpose", { enum: ["invite", "reset"] }).notNull(),
    createdAt: createdAt(),
    expiresAt: timestamp("expires_at", { withTimezone: true }).notNull(),
    usedAt: timestamp("used_at", { withTimezone: true }),
  },
  (t) => [index("user_tokens_user_idx").on(t.userId)],
);

export const members = pgTable(
  "members",
  {
    accountId: uuid("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    userId: uuid("user_id")
      .notNull()
      .references(() => users.id),
    role: text("role", { enum: ["owner", "admin", "member"] }).notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.userId] })],
);

export const apiKeys = pgTable(
  "api_keys",
  {
    accountId: uuid("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    id: uuid("id").notNull(),
    prefix: text("prefix").notNull(),
    keyHash: text("key_hash").notNull(),
    name: text("name").notNull(),
    scopes: text("scopes").array().notNull(),
    createdBy: uuid("created_by")
      .notNull()
      .references(() => users.id),
    createdAt: createdAt(),
    expiresAt: timestamp("expires_at", { withTimezone: true }),
    revokedAt: timestamp("revoked_at", { withTimezone: true }),
    lastUsedAt: timestamp("last_used_at", { withTimezone: true }),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.id] }),
    index("api_keys_prefix_idx").on(t.accountId, t.prefix),
    // Unique per account (each shard enforces it: docs/scaling.md); found by hash alone at sign-in.
    unique("api_keys_account_id_key_hash_unique").on(t.accountId, t.keyHash),
    index("api_keys_key_hash_idx").on(t.keyHash),
  ],
);

export const auditLog = pgTable(
  "audit_log",
  {
    accountId: uuid("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    id: bigint("id", { mode: "number" }).generatedAlwaysAsIdentity(),
    keyId: uuid("key_id").notNull(),
    method: text("method").notNull(),
    path: text("path").notNull(),
    scope: text("scope").notNull(),
    status: integer("status").notNull(),
    ip: text("ip").notNull(),
    occurredAt: timestamp("occurred_at", { withTimezone: true }).notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.id] }),
    index("audit_log_key_idx").on(t.accountId, t.keyId, t.occurredAt),
  ],
);

export const icpCriteria = pgTable("icp_criteria", {
  accountId: uuid("account_id")
    .primaryKey()
    .references(() => accounts.id, { onDelete: "cascade" }),
  criteria: jsonb("criteria").notNull().default(sql`'{}'::jsonb`),
  updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
});

export const kpiGoals = pgTable(
  "kpi_goals",
  {
    accountId: uuid("account_id")
      .notNull()
      .references(() => accounts.id, { onDelete: "cascade" }),
    period: date("period", { mode: "string" }).notNull(),
    metricKey: text("metric_key").notNull(),
    targetValue: numeric("target_value", { mode: "number" }).notNull(),
    updatedAt: timestamp("updated_at", { withTimezone: true }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.period, t.metricKey] })],
);

/* ---------------------------------------------------------------------------------------------
 * The data model (issue 3). Platform ids (ad, ad set, campaign, pixel, click ids) are text end to
 * end: Meta's 18-digit ids exceed 2^53. Money is numeric(14,2). Column names are the API's field
 * names wherever the spec names them, so report SQL needs no mapping layer.
 * ------------------------------------------------------------------------------------------- */

const money = (name: string) => numeric(name, { precision: 14, scale: 2, mode: "number" });
const at = (name: string) => timestamp(name, { withTimezone: true });
const updatedAt = () => timestamp("updated_at", { withTimezone: true }).notNull().defaultNow();
const accountRef = () =>
  uuid("account_id")
    .notNull()
    .references(() => accounts.id, { onDelete: "cascade" });

/** Per-account settings that are one value each (ICP and goals have their own tables). */
export const accountSettings = pgTable("account_settings", {
  accountId: accountRef().primaryKey(),
  saleRule: jsonb("sale_rule"),
  /** Sealed with the instance's secret box; never returned. */
  webhookSecretSealed: text("webhook_secret_sealed"),
  updatedAt: updatedAt(),
});

/** An ad with its ad set and campaign (denormalized: the spec's rows carry all three). */
export const ads = pgTable(
  "ads",
  {
    accountId: accountRef(),
    platform: text("platform").notNull(),
    adId: text("ad_id").notNull(),
    adName: text("ad_name").notNull(),
    adsetId: text("adset_id"),
    adsetName: text("adset_name"),
    campaignId: text("campaign_id"),
    campaignName: text("campaign_name"),
    isExcluded: boolean("is_excluded").notNull().default(false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.platform, t.adId] }),
    // Resolution by name: utm_content against ad names, case-insensitive and trimmed.
    index("ads_name_idx").on(t.accountId, sql`lower(btrim(${t.adName}))`),
    index("ads_ad_id_idx").on(t.accountId, t.adId),
  ],
);

/** Daily spend of one ad on one platform; import identity: platform + ad_id + date. */
export const adSpendDaily = pgTable(
  "ad_spend_daily",
  {
    accountId: accountRef(),
    platform: text("platform").notNull(),
    adId: text("ad_id").notNull(),
    spendDate: date("spend_date", { mode: "string" }).notNull(),
    spend: money("spend").notNull(),
    clicks: integer("clicks").notNull().default(0),
    impressions: integer("impressions").notNull().default(0),
    reach: integer("reach").notNull().default(0),
    currency: text("currency"),
    updatedAt: updatedAt(),
    /** The spend connector (ad account) that synced the row; null: imported (migration 0032). */
    connectorId: uuid("connector_id"),
  },
  (t) => [
    foreignKey({
      columns: [t.accountId, t.platform, t.adId],
      foreignColumns: [ads.accountId, ads.platform, ads.adId],
    }).onDelete("cascade"),
    primaryKey({ columns: [t.accountId, t.platform, t.adId, t.spendDate] }),
    index("ad_spend_daily_date_idx").on(t.accountId, t.spendDate),
  ],
);

/** A person the account deals with; keyed by normalized email, phone as the fallback. */
export const contacts = pgTable(
  "contacts",
  {
    accountId: accountRef(),
    id: uuid("id").notNull(),
    email: text("email"),
    phone: text("phone"),
    firstName: text("first_name"),
    lastName: text("last_name"),
    name: text("name"),
    tags: text("tags").array().notNull().default(sql`'{}'::text[]`),
    formTitles: text("form_titles").array().notNull().default(sql`'{}'::text[]`),
    formResponse: jsonb("form_response"),
    assignedUserName: text("assigned_user_name"),
    value: money("value"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    /**
     * What `search` looks in (email, name, phone, first and last name), lowercased once at write:
     * a search that matches no one reads every contact of the account, and one strpos over this
     * instead of four ILIKEs over the columns takes it from 56 to 17-22 ms (p50, PostgreSQL, 21,000
     * contacts). A filter before the exact ILIKEs, never instead of them (a fragment spanning two
     * fields matches here, not there). Not a trigram index: under row-level security PostgreSQL
     * cannot use one for ILIKE or strpos (not leakproof); contacts_search_idx (migration 0020,
     * INCLUDE is beyond drizzle's schema) carries it, so a search reads the account's index range.
     */
    searchText: text("search_text")
      .notNull()
      .generatedAlwaysAs(
        sql`lower(coalesce(email, '') || chr(10) || coalesce(name, '') || chr(10) || coalesce(phone, '') || chr(10) || coalesce(first_name || ' ' || last_name, ''))`,
      ),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.id] }),
    uniqueIndex("contacts_email_uq").on(t.accountId, t.email).where(sql`${t.email} is not null`),
    index("contacts_phone_idx").on(t.accountId, t.phone),
  ],
);

/** A CRM event (lead, application, booking, no_show, sale, cancel, payment, sale_lost). */
export const events = pgTable(
  "events",
  {
    accountId: accountRef(),
    /** The sender's id: the import and webhook identity (a replay updates). */
    id: text("id").notNull(),
    contactId: uuid("contact_id"),
    eventType: text("event_type", {
      enum: ["lead", "application", "booking", "no_show", "sale", "cancel", "payment", "sale_lost"],
    }).notNull(),
    /** `qualified` (application), `marketing` / `follow_up` (booking). */
    eventSubtype: text("event_subtype"),
    eventDatetime: at("event_datetime").notNull(),
    contactEmail: text("contact_email"),
    contactName: text("contact_name"),
    contactPhone: text("contact_phone"),
    value: money("value"),
    amount: money("amount"),
    currency: text("currency"),
    productKey: text("product_key"),
    productName: text("product_name"),
    assignedUserName: text("assigned_user_name"),
    isPaid: boolean("is_paid"),
    paymentStatus: text("payment_status"),
    bookingDate: date("booking_date", { mode: "string" }),
    bookingTime: text("booking_time"),
    utmSource: text("utm_source"),
    utmMedium: text("utm_medium"),
    utmCampaign: text("utm_campaign"),
    utmContent: text("utm_content"),
    utmTerm: text("utm_term"),
    utmCampaignId: text("utm_campaign_id"),
    utmAdsetId: text("utm_adset_id"),
    utmAdId: text("utm_ad_id"),
    campaignName: text("campaign_name"),
    calendarName: text("calendar_name"),
    metaAdId: text("meta_ad_id"),
    isBaseline: boolean("is_baseline").notNull().default(false),
    cancelledAt: at("cancelled_at"),
    /** Where it came from: `webhook`, `import`, `collect`, `demo`. */
    origin: text("origin").notNull(),
    /** SHA-256 of the event as received: a replay of the same content writes nothing. */
    payloadHash: text("payload_hash"),
    /** UTMs inherited from the contact's earlier web sessions (server-side enrichment). */
    utmEnriched: boolean("utm_enriched").notNull().default(false),
    // Ad resolution (DESIGN §6), computed at ingest and again when ads change.
    resolution: text("resolution", { enum: ["exact", "by_name", "unresolved"] })
      .notNull()
      .default("unresolved"),
    resolvedPlatform: text("resolved_platform"),
    resolvedAdId: text("resolved_ad_id"),
    /**
     * The ad of record (docs/attribution.md): the resolved ad, else the contact's last ad touch at
     * or before the event within 365 days. Kept by triggers (migration 0006) as events and
     * touchpoints change.
     */
    recordPlatform: text("record_platform"),
    recordAdId: text("record_ad_id"),
    /**
     * On sale and payment events: the first ad touch of the contact in the 365 days up to it, and
     * the other distinct ads touched then (neither first nor of record), as `platform/ad_id`:
     * first-touch and assisted credit. Kept by the same triggers.
     */
    firstTouchAd: text("first_touch_ad"),
    assistAds: text("assist_ads").array(),
    // Sale counting (docs/metrics.md), materialized on sale-type events.
    counted: boolean("counted"),
    dropReason: text("drop_reason"),
    groupKey: text("group_key"),
    contactSeq: integer("contact_seq"),
    // On a purchase's opening event only (group_key = id): its revenue (paid amounts of the group
    // under the rule), refunds and disputes — so reports read one row per purchase.
    groupRevenue: money("group_revenue"),
    groupRefunds: money("group_refunds"),
    groupDisputes: money("group_disputes"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    foreignKey({ columns: [t.accountId, t.contactId], foreignColumns: [contacts.accountId, contacts.id] }),
    primaryKey({ columns: [t.accountId, t.id] }),
    index("events_datetime_idx").on(t.accountId, t.eventDatetime),
    index("events_type_datetime_idx").on(t.accountId, t.eventType, t.eventDatetime),
    index("events_contact_idx").on(t.accountId, t.contactId, t.eventDatetime),
    index("events_ad_idx").on(t.accountId, t.resolvedAdId),
    // Enriched conversions (no touch of their own in the attribution models): events_utm_enriched_idx,
    // partial, made by migration 0036.
    // Counted purchases of a window: events_counted_cover_idx, made by migration 0008 (it carries
    // INCLUDE columns, which the schema builder does not express).
    // Meetings by booking day: events_meetings_cover_idx (migration 0008); the sales summary reads
    // cancelled meetings from the rollup.
  ],
);

/** The measures of the report rollup and of its pending deltas. */
const rollupMeasures = () => ({
  leads: integer("leads").notNull().default(0),
  applications: integer("applications").notNull().default(0),
  bookings: integer("bookings").notNull().default(0),
  noShows: integer("no_shows").notNull().default(0),
  cancels: integer("cancels").notNull().default(0),
  cancelledBookings: integer("cancelled_bookings").notNull().default(0),
  salesLost: integer("sales_lost").notNull().default(0),
  sales: integer("sales").notNull().default(0),
  revenue: money("revenue").notNull().default(0),
  refunds: money("refunds").notNull().default(0),
  disputes: money("disputes").notNull().default(0),
  meetings: integer("meetings").notNull().default(0),
  /** Cancelled bookings on their booking day (`meetings` holds the others). */
  cancelledMeetings: integer("cancelled_meetings").notNull().default(0),
  // Capture health (docs/metrics.md "Capture health"): every event, those with an ad signal, and by
  // how their ad resolved; leads without any UTM or ad id.
  events: integer("events").notNull().default(0),
  signalEvents: integer("signal_events").notNull().default(0),
  exactEvents: integer("exact_events").notNull().default(0),
  byNameEvents: integer("by_name_events").notNull().default(0),
  unresolvedEvents: integer("unresolved_events").notNull().default(0),
  leadsWithoutUtm: integer("leads_without_utm").notNull().default(0),
  // Web sessions present that day and those with an ad id or click id (`total` rows only, counted
  // when web_session_daily is folded: migration 0008).
  webSessions: integer("web_sessions").notNull().default(0),
  webSessionsWithId: integer("web_sessions_with_id").notNull().default(0),
});

/**
 * Daily event aggregates the reports read instead of scanning events (docs/metrics.md "Rollup").
 * One row per account, dimension, key and day: `dim` is `total` (key ''), `ad` (key
 * `platform/ad_id` of the event's ad of record, '' none), `source`, `campaign` (events without
 * an ad of record only), `product`, `rep` ('' = none), `ad_rep` (key `platform/ad_id` U+001F
 * rep, events with both), `ad_ft` and `ad_assist` (sale events' first-touch and assisting ads). Event counts sit on the event's day in the
 * account's timezone, `meetings` on the booking day.
 */
export const reportRollupDaily = pgTable(
  "report_rollup_daily",
  {
    accountId: accountRef(),
    dim: text("dim").notNull(),
    day: date("day", { mode: "string" }).notNull(),
    key: text("key").notNull(),
    ...rollupMeasures(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.dim, t.day, t.key] })],
);

/**
 * What writes to `events` changed, not yet folded into report_rollup_daily. Statement-level
 * triggers on events append here (insert only: concurrent writers never wait on each other, so
 * they cannot deadlock on the rollup's hot rows); a report folds its account's deltas into the
 * rollup before reading it (migration 0006).
 */
export const reportRollupDelta = pgTable(
  "report_rollup_delta",
  {
    accountId: accountRef(),
    id: bigint("id", { mode: "number" }).generatedAlwaysAsIdentity(),
    dim: text("dim").notNull(),
    day: date("day", { mode: "string" }).notNull(),
    key: text("key").notNull(),
    ...rollupMeasures(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.id] })],
);

/**
 * Per contact, what the funnel, the sales cycle and the pipeline read (docs/metrics.md "Funnel",
 * "Sales"), so that they range-scan one narrow row per contact instead of every contact's events.
 * Kept by a statement trigger on events that recomputes the contacts a statement touched
 * (migration 0008). Stages count from the contact's first lead: its first application, first
 * booking (cancelled or not) and first counted sale at or after it; its show is its (n+1)-th
 * non-cancelled meeting booked at or after the lead, n = its no-shows since the lead, once that
 * meeting's day is over — which only the read can tell, so the row holds the candidate and its day.
 */
export const contactMilestones = pgTable(
  "contact_milestones",
  {
    accountId: accountRef(),
    contactId: uuid("contact_id").notNull(),
    firstLeadAt: at("first_lead_at"),
    leadSource: text("lead_source"),
    leadCampaign: text("lead_campaign"),
    applicationAt: at("application_at"),
    bookingAt: at("booking_at"),
    showAt: at("show_at"),
    showDay: date("show_day", { mode: "string" }),
    saleAt: at("sale_at"),
    saleProductKey: text("sale_product_key"),
    saleProductName: text("sale_product_name"),
    /** The furthest stage reached but the show: 1 lead, 2 application, 3 booking, 5 sale. */
    stage: integer("stage"),
    /**
     * Days between consecutive stages (lead→application, →booking, →show, →sale), null unless
     * both are reached in order; the last two hold for the show candidate.
     */
    leadToApplication: doublePrecision("lead_to_application"),
    applicationToBooking: doublePrecision("application_to_booking"),
    bookingToShow: doublePrecision("booking_to_show"),
    showToSale: doublePrecision("show_to_sale"),
    /** The first counted sale ever, and where its sales cycle starts (docs/metrics.md "Sales"). */
    firstSaleAt: at("first_sale_at"),
    cycleStartedAt: at("cycle_started_at"),
    /** The latest application ever, and the latest booking ever (the pipeline's open applications). */
    lastApplicationAt: at("last_application_at"),
    lastBookingAt: at("last_booking_at"),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.contactId] }),
    // The funnel's cohort is contact_milestones_cohort_idx (migration 0008: INCLUDE columns, which
    // the schema builder does not express).
    index("contact_milestones_sale_idx").on(t.accountId, t.firstSaleAt),
    // Open applications of a window, read index-only.
    index("contact_milestones_application_idx").on(t.accountId, t.lastApplicationAt, t.lastBookingAt),
  ],
);

/**
 * Contacts an import wrote whose activity, milestones and customer totals are not yet up to date:
 * an import's batches note them here instead of recomputing them at every batch, and the import
 * brings them up to date once at its end (migration 0046, src/import/fold-backlog.ts).
 */
export const contactMaintenanceBacklog = pgTable(
  "contact_maintenance_backlog",
  {
    accountId: accountRef(),
    contactId: uuid("contact_id").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.contactId] })],
);

/**
 * When each contact was active, for the contact list and the journeys (ordered and filtered by last
 * activity, paged by offset): its first and last CRM event, and its first and last sighting
 * (events and touchpoints). One row per contact, made with it; kept by statement triggers on
 * events and touchpoints that recompute the contacts a statement touched (migration 0010).
 */
export const contactActivity = pgTable(
  "contact_activity",
  {
    accountId: accountRef(),
    contactId: uuid("contact_id").notNull(),
    firstEventAt: at("first_event_at"),
    lastEventAt: at("last_event_at"),
    firstSeenAt: at("first_seen_at"),
    lastSeenAt: at("last_seen_at"),
  },
  (t) => [
    foreignKey({
      columns: [t.accountId, t.contactId],
      foreignColumns: [contacts.accountId, contacts.id],
    }).onDelete("cascade"),
    primaryKey({ columns: [t.accountId, t.contactId] }),
    index("contact_activity_event_idx").on(
      t.accountId,
      sql`${t.lastEventAt} desc nulls last`,
      sql`${t.contactId} desc`,
    ),
    index("contact_activity_seen_idx")
      .on(t.accountId, sql`${t.lastSeenAt} desc`, sql`${t.contactId} desc`)
      .where(sql`${t.lastSeenAt} is not null`),
  ],
);

/** The key and measure of the touchpoint rollup and of its pending deltas ('' stands for none). */
const touchpointRollupColumns = () => ({
  day: date("day", { mode: "string" }).notNull(),
  kind: text("kind").notNull(),
  platform: text("platform").notNull(),
  adId: text("ad_id").notNull(),
  source: text("source").notNull(),
  campaign: text("campaign").notNull(),
  touchpoints: integer("touchpoints").notNull().default(0),
});

/**
 * Daily touchpoint counts the attribution report reads instead of scanning touchpoints
 * (docs/metrics.md "Rollup"): per account, day (account timezone), kind, resolved ad
 * (`platform`, `ad_id`), source (`utm.source`, else `channel`, else `(none)`) and campaign
 * (`utm.campaign`). Kept like report_rollup_daily: statement triggers on touchpoints append to
 * touchpoint_rollup_delta, reads fold it first (migration 0008).
 */
export const touchpointRollupDaily = pgTable(
  "touchpoint_rollup_daily",
  { accountId: accountRef(), ...touchpointRollupColumns() },
  (t) => [primaryKey({ columns: [t.accountId, t.day, t.kind, t.platform, t.adId, t.source, t.campaign] })],
);

export const touchpointRollupDelta = pgTable(
  "touchpoint_rollup_delta",
  {
    accountId: accountRef(),
    id: bigint("id", { mode: "number" }).generatedAlwaysAsIdentity(),
    ...touchpointRollupColumns(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.id] })],
);

/**
 * Web sessions per day (account timezone) for capture health's distinct sessions: the session key
 * is `session_id`, else `tp:<touchpoint id>` (a touchpoint without a session counts alone);
 * `touchpoints` and `with_id` (those carrying an ad id or click id) are counts, so deltas add up
 * and a session is present on a day while `touchpoints` > 0. Folded from web_session_delta.
 */
export const webSessionDaily = pgTable(
  "web_session_daily",
  {
    accountId: accountRef(),
    day: date("day", { mode: "string" }).notNull(),
    sessionKey: text("session_key").notNull(),
    touchpoints: integer("touchpoints").notNull().default(0),
    withId: integer("with_id").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.day, t.sessionKey] })],
);

export const webSessionDelta = pgTable(
  "web_session_delta",
  {
    accountId: accountRef(),
    id: bigint("id", { mode: "number" }).generatedAlwaysAsIdentity(),
    day: date("day", { mode: "string" }).notNull(),
    sessionKey: text("session_key").notNull(),
    touchpoints: integer("touchpoints").notNull().default(0),
    withId: integer("with_id").notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.id] })],
);

/** A touch of a contact (or a not yet known visitor): a web visit or a conversion. */
export const touchpoints = pgTable(
  "touchpoints",
  {
    accountId: accountRef(),
    id: uuid("id").notNull(),
    /** Import identity, when the touchpoint came from a file. */
    externalId: text("external_id"),
    contactId: uuid("contact_id"),
    visitorId: text("visitor_id"),
    sessionId: text("session_id"),
    kind: text("kind", { enum: ["web", "conversion"] }).notNull(),
    /** `page_view`, `form_submit`, `booking`, or the CRM event type of a conversion. */
    eventType: text("event_type").notNull(),
    occurredAt: at("occurred_at").notNull(),
    url: text("url"),
    referrer: text("referrer"),
    /** The spec's UTM object: source, medium, campaign, content, term, campaign_name, … */
    utm: jsonb("utm").notNull().default(sql`'{}'::jsonb`),
    /** Ad ids captured at that moment: ad_id, adset_id, campaign_id, meta_ad_id (strings). */
    adIds: jsonb("ad_ids").notNull().default(sql`'{}'::jsonb`),
    /** Click ids: gclid, fbclid, ttclid, … (case kept). */
    clickIds: jsonb("click_ids").notNull().default(sql`'{}'::jsonb`),
    channel: text("channel"),
    platform: text("platform"),
    isPaid: boolean("is_paid").notNull().default(false),
    value: money("value"),
    currency: text("currency"),
    product: text("product"),
    isImported: boolean("is_imported").notNull().default(false),
    /** The CRM event a conversion touchpoint stands for. */
    eventId: text("event_id"),
    resolution: text("resolution", { enum: ["exact", "by_name", "unresolved"] })
      .notNull()
      .default("unresolved"),
    resolvedPlatform: text("resolved_platform"),
    resolvedAdId: text("resolved_ad_id"),
    createdAt: createdAt(),
  },
  (t) => [
    foreignKey({ columns: [t.accountId, t.contactId], foreignColumns: [contacts.accountId, contacts.id] }),
    primaryKey({ columns: [t.accountId, t.id] }),
    uniqueIndex("touchpoints_external_uq")
      .on(t.accountId, t.externalId)
      .where(sql`${t.externalId} is not null`),
    // With the id: the feed's order (newest first, then id) straight from the index, keys only, so
    // that a deep offset skips index entries rather than fetching rows (GET /touchpoints).
    index("touchpoints_occurred_idx").on(t.accountId, t.occurredAt, t.id),
    // Capture health's last page view and "pixel silent" check, whatever the conversions' volume.
    index("touchpoints_web_idx").on(t.accountId, t.occurredAt, t.id).where(sql`${t.kind} = 'web'`),
    // A contact's touches, and below its ad touches, in the order their probes ask for (time, then
    // id): were the order only in the account-wide indexes above, a plan made while the account had
    // few rows (a new account's first load, a cached generic plan) walks the account's touchpoints
    // from the instant back, filtering on the contact — a scan per probe, minutes for one demo at
    // scale 10 on PostgreSQL instead of seconds.
    index("touchpoints_contact_idx").on(t.accountId, t.contactId, t.occurredAt, t.id),
    index("touchpoints_visitor_idx").on(t.accountId, t.visitorId),
    // A contact's ad touches in time order: the ad of record's fallback, first touch, assists.
    // Migration 0036 adds INCLUDE columns (resolved ad, kind, event id), which the schema builder
    // does not express: the attribution models read ad touches index-only.
    index("touchpoints_ad_touch_idx")
      .on(t.accountId, t.contactId, t.occurredAt, t.id)
      .where(sql`${t.resolvedAdId} is not null`),
  ],
);

/**
 * The ids of the beacons an account has stored (a client's `id`, the same on every resend). A
 * beacon's transaction claims its id first, so a resent copy is skipped before it touches anything,
 * and a copy racing the first (another batch, another instance) waits on the key until that commits.
 */
export const beaconReceipts = pgTable(
  "beacon_receipts",
  {
    accountId: accountRef(),
    beaconId: text("beacon_id").notNull(),
    receivedAt: at("received_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.beaconId] })],
);

/**
 * Moves on with every statement that writes the account's ads (migration 0039's triggers): the ad
 * index cache checks it at every beacon batch instead of a digest of the whole catalog.
 */
export const adCatalogVersions = pgTable("ad_catalog_versions", {
  accountId: accountRef().primaryKey(),
  version: bigint("version", { mode: "number" }).notNull().default(0),
});

/** A transaction id (PostgreSQL's `xid8`), asked whether a snapshot saw it; text in JavaScript. */
const xid8 = customType<{ data: string }>({ dataType: () => "xid8" });
/** A snapshot (PostgreSQL's `pg_snapshot`: xmin, xmax and the transactions running); text in JavaScript. */
const pgSnapshot = customType<{ data: string }>({ dataType: () => "pg_snapshot" });

/**
 * One row per writing transaction and account: the earliest instant of a touch or an event it
 * changed (migration 0040's triggers). The attribution models' stored day credit is stale for every
 * day that instant is before the end of.
 */
export const journeyChanges = pgTable(
  "journey_changes",
  {
    accountId: accountRef(),
    xid: xid8("xid").notNull(),
    fromAt: at("from_at").notNull(),
    notedAt: at("noted_at").notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.xid] }),
    index("journey_changes_noted_idx").on(t.accountId, t.notedAt),
  ],
);

/** A day's credit under a per-sale attribution model (src/reports/attribution-day-credit.ts). */
export const attributionDayCredits = pgTable(
  "attribution_day_credits",
  {
    accountId: accountRef(),
    level: text("level").notNull(),
    model: text("model").notNull(),
    lookbackDays: integer("lookback_days").notNull(),
    day: date("day", { mode: "string" }).notNull(),
    timezone: text("timezone").notNull(),
    catalogVersion: bigint("catalog_version", { mode: "number" }).notNull(),
    seenSnapshot: pgSnapshot("seen_snapshot").notNull(),
    computedAt: at("computed_at").notNull(),
    credit: jsonb("credit").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.level, t.model, t.lookbackDays, t.day] })],
);

/** A window's Markov paths to null (src/reports/attribution-models.ts, migration 0043). */
export const attributionNullPaths = pgTable(
  "attribution_null_paths",
  {
    accountId: accountRef(),
    level: text("level").notNull(),
    lookbackDays: integer("lookback_days").notNull(),
    windowStart: at("window_start").notNull(),
    windowEnd: at("window_end").notNull(),
    catalogVersion: bigint("catalog_version", { mode: "number" }).notNull(),
    seenSnapshot: pgSnapshot("seen_snapshot").notNull(),
    computedAt: at("computed_at").notNull(),
    paths: json("paths").notNull(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.level, t.lookbackDays, t.windowStart, t.windowEnd] })],
);

export const purchases = pgTable(
  "purchases",
  {
    accountId: accountRef(),
    id: text("id").notNull(),
    contactId: uuid("contact_id"),
    purchaseDate: at("purchase_date").notNull(),
    productKey: text("product_key"),
    productName: text("product_name"),
    contactEmail: text("contact_email"),
    contactName: text("contact_name"),
    amount: money("amount").notNull(),
    currency: text("currency"),
    commissionable: boolean("commissionable").notNull().default(false),
    commissionRate: numeric("commission_rate", { precision: 6, scale: 4, mode: "number" }),
    commissionAmount: money("commission_amount"),
    invoiceId: text("invoice_id"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    foreignKey({ columns: [t.accountId, t.contactId], foreignColumns: [contacts.accountId, contacts.id] }),
    primaryKey({ columns: [t.accountId, t.id] }),
    index("purchases_date_idx").on(t.accountId, t.purchaseDate),
    index("purchases_contact_idx").on(t.accountId, t.contactId),
    // The P&L's commissions of a window: purchases_commission_cover_idx, partial, made by migration
    // 0045 (it carries INCLUDE columns, which the schema builder does not express).
  ],
);

/** A contact who bought, with the commission terms that follow them. */
export const customers = pgTable(
  "customers",
  {
    accountId: accountRef(),
    id: uuid("id").notNull(),
    contactId: uuid("contact_id").notNull(),
    commissionStatus: text("commission_status"),
    commissionExpiresAt: at("commission_expires_at"),
    createdAt: createdAt(),
  },
  (t) => [
    foreignKey({
      columns: [t.accountId, t.contactId],
      foreignColumns: [contacts.accountId, contacts.id],
    }).onDelete("cascade"),
    primaryKey({ columns: [t.accountId, t.id] }),
    uniqueIndex("customers_contact_uq").on(t.accountId, t.contactId),
  ],
);

/**
 * /contacts/customers' read model: one row per customer with what the list shows of it — the
 * customer's terms, its contact's first CRM event and latest lead, its purchases' totals and
 * products, its contact's email, name and phone (docs/metrics.md "Contacts"). Kept by statement triggers
 * on customers, purchases and events that recompute the customers a statement touched (migration 0027),
 * and by contact resolution when a contact gets a name or phone (0042); the list reads it in its order.
 */
export const customerTotals = pgTable(
  "customer_totals",
  {
    accountId: accountRef(),
    contactId: uuid("contact_id").notNull(),
    customerId: uuid("customer_id").notNull(),
    createdAt: timestamp("created_at", { withTimezone: true }).notNull(),
    commissionStatus: text("commission_status"),
    commissionExpiresAt: at("commission_expires_at"),
    firstEventType: text("first_event_type"),
    firstEventAt: at("first_event_at"),
    latestLeadAt: at("latest_lead_at"),
    firstPaymentAt: at("first_payment_at"),
    totalRevenue: numeric("total_revenue", { mode: "number" }).notNull().default(0),
    totalPurchases: integer("total_purchases").notNull().default(0),
    totalCommission: numeric("total_commission", { mode: "number" }).notNull().default(0),
    products: text("products").array().notNull().default(sql`'{}'::text[]`),
    // The contact's, as the list shows them (migration 0042).
    contactEmail: text("contact_email"),
    contactName: text("contact_name"),
    contactPhone: text("contact_phone"),
  },
  (t) => [
    foreignKey({
      columns: [t.accountId, t.contactId],
      foreignColumns: [customers.accountId, customers.contactId],
    })
      .onDelete("cascade")
      .onUpdate("cascade"),
    primaryKey({ columns: [t.accountId, t.contactId] }),
    index("customer_totals_created_idx").on(t.accountId, sql`${t.createdAt} desc`, sql`${t.customerId} desc`),
  ],
);

export const reps = pgTable(
  "reps",
  {
    accountId: accountRef(),
    id: text("id").notNull(),
    name: text("name").notNull(),
    email: text("email"),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.id] })],
);

/** An analyzed call. `artifact_id` is one sequence for the instance, so ids never collide across accounts. */
export const calls = pgTable(
  "calls",
  {
    accountId: accountRef(),
    artifactId: bigint("artifact_id", { mode: "number" }).generatedAlwaysAsIdentity(),
    externalId: text("external_id").notNull(),
    startsAt: at("starts_at").notNull(),
    title: text("title"),
    durationSec: integer("duration_sec"),
    callAnalysisId: text("call_analysis_id"),
    summary: text("summary"),
    callType: text("call_type"),
    isQualified: boolean("is_qualified"),
    icpFitScore: numeric("icp_fit_score", { precision: 5, scale: 2, mode: "number" }),
    qualificationReasoning: text("qualification_reasoning"),
    nextStepType: text("next_step_type"),
    nextStepSummary: text("next_step_summary"),
    nextStepProposed: text("next_step_proposed"),
    scorecardTotal: numeric("scorecard_total", { precision: 6, scale: 2, mode: "number" }),
    repId: text("rep_id"),
    /** Array of { ts, label, status }. */
    markers: jsonb("markers").notNull().default(sql`'[]'::jsonb`),
    /** Normalized emails of the participants (call_participants indexes them for contacts/calls). */
    participantEmails: text("participant_emails").array().notNull().default(sql`'{}'::text[]`),
    /** Object-store paths, inside the account's folder. */
    audioPath: text("audio_path"),
    audioContentType: text("audio_content_type"),
    videoPath: text("video_path"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.artifactId] }),
    uniqueIndex("calls_external_uq").on(t.accountId, t.externalId),
    index("calls_starts_idx").on(t.accountId, t.startsAt),
    // The /calls page (analyzed calls, newest first), cut from the index alone however deep the offset.
    index("calls_analyzed_idx")
      .on(t.accountId, sql`${t.startsAt} desc`, sql`${t.artifactId} desc`)
      .where(sql`${t.callAnalysisId} is not null`),
  ],
);

/**
 * One row per (call, participant email), kept by triggers on calls (migration 0020): contacts/calls
 * finds an email's calls through this btree. A GIN index on calls.participant_emails cannot serve
 * it: under row-level security PostgreSQL only uses an index for leakproof operators, and array
 * containment is not one (text equality is).
 */
export const callParticipants = pgTable(
  "call_participants",
  {
    accountId: accountRef(),
    email: text("email").notNull(),
    startsAt: at("starts_at").notNull(),
    artifactId: bigint("artifact_id", { mode: "number" }).notNull(),
  },
  // No foreign key to calls: a cascade would look rows up by artifact id, which no index here
  // serves; the delete trigger removes them by (account, email, …), the primary key's order.
  (t) => [primaryKey({ columns: [t.accountId, t.email, t.startsAt, t.artifactId] })],
);

export const callTranscriptSegments = pgTable(
  "call_transcript_segments",
  {
    accountId: accountRef(),
    artifactId: bigint("artifact_id", { mode: "number" }).notNull(),
    idx: integer("idx").notNull(),
    startMs: integer("start_ms").notNull(),
    endMs: integer("end_ms").notNull(),
    speakerId: text("speaker_id"),
    speakerLabel: text("speaker_label"),
    speakerEmail: text("speaker_email"),
    text: text("text").notNull(),
    confidence: numeric("confidence", { precision: 4, scale: 3, mode: "number" }),
  },
  (t) => [
    foreignKey({
      columns: [t.accountId, t.artifactId],
      foreignColumns: [calls.accountId, calls.artifactId],
    }).onDelete("cascade"),
    primaryKey({ columns: [t.accountId, t.artifactId, t.idx] }),
  ],
);

/** A creative of the reserve library (imported, unpublished until an ad uses it). */
export const creatives = pgTable(
  "creatives",
  {
    accountId: accountRef(),
    id: uuid("id").notNull(),
    externalRef: text("external_ref").notNull(),
    isPublished: boolean("is_published").notNull().default(false),
    angle: text("angle"),
    primaryText: text("primary_text"),
    headline: text("headline"),
    hook: text("hook"),
    cta: text("cta"),
    destinationUrl: text("destination_url"),
    assetUrl: text("asset_url"),
    assetKind: text("asset_kind", { enum: ["image", "video"] }),
    variantLabel: text("variant_label"),
    visualSubtype: text("visual_subtype"),
    funnel: text("funnel"),
    product: text("product"),
    audience: text("audience"),
    videoScript: text("video_script"),
    source: jsonb("source"),
    score: numeric("score", { precision: 6, scale: 2, mode: "number" }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.id] }),
    uniqueIndex("creatives_external_ref_uq").on(t.accountId, t.externalRef),
  ],
);

/**
 * An upload authorization (POST /creatives/upload-url): a file path in the account's folder, the
 * one media type it takes, and a single-use token (only its hash is kept) valid until `expires_at`.
 * `claimed_at` is set by the one PUT that may write it, `uploaded_at` once the file is stored.
 */
export const creativeUploads = pgTable(
  "creative_uploads",
  {
    accountId: accountRef(),
    id: uuid("id").notNull(),
    path: text("path").notNull(),
    /** As handed out: an import names its asset by this exact URL. */
    assetUrl: text("asset_url").notNull(),
    contentType: text("content_type").notNull(),
    tokenHash: text("token_hash").notNull(),
    expiresAt: at("expires_at").notNull(),
    claimedAt: at("claimed_at"),
    uploadedAt: at("uploaded_at"),
    sizeBytes: bigint("size_bytes", { mode: "number" }),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.id] }),
    uniqueIndex("creative_uploads_path_uq").on(t.accountId, t.path),
    uniqueIndex("creative_uploads_asset_url_uq").on(t.accountId, t.assetUrl),
  ],
);

/** A need for new creatives, relayed to a team (notified_at) until filled. */
export const creativeRequests = pgTable(
  "creative_requests",
  {
    accountId: accountRef(),
    id: uuid("id").notNull(),
    reason: text("reason").notNull(),
    status: text("status", { enum: ["open", "partial", "filled", "cancelled"] }).notNull(),
    requestedCount: integer("requested_count").notNull(),
    filledCount: integer("filled_count").notNull().default(0),
    context: jsonb("context"),
    createdAt: createdAt(),
    notifiedAt: at("notified_at"),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.id] }),
    index("creative_requests_status_idx").on(t.accountId, t.status, t.createdAt),
  ],
);

export const adRules = pgTable(
  "ad_rules",
  {
    accountId: accountRef(),
    id: uuid("id").notNull(),
    label: text("label").notNull(),
    ruleType: text("rule_type").notNull(),
    platform: text("platform"),
    campaignId: text("campaign_id"),
    campaignName: text("campaign_name"),
    enabled: boolean("enabled").notNull().default(true),
    dryRun: boolean("dry_run").notNull().default(true),
    params: jsonb("params").notNull().default(sql`'{}'::jsonb`),
    lastRunAt: at("last_run_at"),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.id] })],
);

export const adRuleRuns = pgTable(
  "ad_rule_runs",
  {
    accountId: accountRef(),
    id: uuid("id").notNull(),
    ruleId: uuid("rule_id").notNull(),
    ranAt: at("ran_at").notNull(),
    dryRun: boolean("dry_run").notNull(),
    status: text("status").notNull(),
    /** What the run did or, dry, would have done. */
    actions: jsonb("actions").notNull().default(sql`'[]'::jsonb`),
    summary: text("summary"),
    /** The figures the evaluation saw (per ad over the rule's lookback window). */
    metrics: jsonb("metrics"),
  },
  (t) => [
    foreignKey({
      columns: [t.accountId, t.ruleId],
      foreignColumns: [adRules.accountId, adRules.id],
    }).onDelete("cascade"),
    primaryKey({ columns: [t.accountId, t.id] }),
    index("ad_rule_runs_rule_idx").on(t.accountId, t.ruleId, t.ranAt),
  ],
);

/** A connected ad-network pixel (conversions API); its token is sealed and never returned. */
export const pixels = pgTable(
  "pixels",
  {
    accountId: accountRef(),
    id: uuid("id").notNull(),
    platform: text("platform").notNull(),
    pixelId: text("pixel_id").notNull(),
    name: text("name"),
    isDefault: boolean("is_default").notNull().default(false),
    accessTokenSealed: text("access_token_sealed"),
    /** Routing configuration (which events go to this pixel). */
    routing: jsonb("routing").notNull().default(sql`'{}'::jsonb`),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.id] }),
    uniqueIndex("pixels_platform_pixel_uq").on(t.accountId, t.platform, t.pixelId),
  ],
);

/**
 * A first-party tracking host (track.customer.com); the host alone names the account, so it is
 * unique across accounts: sharded by account this is a reference table (docs/scaling.md).
 */
export const trackingHosts = pgTable(
  "tracking_hosts",
  {
    accountId: accountRef(),
    host: text("host").notNull(),
    createdAt: createdAt(),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.host] }), uniqueIndex("tracking_hosts_host_uq").on(t.host)],
);
