import { type AdSignals, buildAdIndex, resolveAd } from "../attribution/ad-resolution.ts";
import {
  type Catalog,
  type CatalogAd,
  CURRENCY,
  DAY_MS,
  type DemoParams,
  dayStart,
  generateCatalog,
  iso,
  isoDate,
  money,
  PLATFORM_SOURCE,
} from "./catalog.ts";
import { mixSeed, Rng } from "./random.ts";
import type {
  CallRow,
  ContactBundle,
  ContactRow,
  CustomerRow,
  EventRow,
  EventType,
  PurchaseRow,
  RepRow,
  Resolution,
  SegmentRow,
  TouchpointRow,
} from "./rows.ts";

export type { DemoParams } from "./catalog.ts";
export { generateCatalog } from "./catalog.ts";

/**
 * The demo data set, generated without a database and without the clock: the same `DemoParams` give
 * deep-equal rows. Contacts are generated one at a time (`generateContacts` is an iterator), so the
 * writer streams any scale in bounded memory; `planDemo` counts rows the same way without keeping them.
 *
 * Ad resolution is computed here with the service's own `resolveAd` over the generated catalog (the
 * same function ingestion runs), so the writer need not re-resolve millions of rows; sale counting is
 * left to `recomputeSaleCounts` after the rows land (it reads the account's sale rule).
 */

const HOUR_MS = 3_600_000;
const MINUTE_MS = 60_000;

/** Contacts of one unit of scale (the stated range at scale 1 is 1,800–2,200). */
export const CONTACTS_PER_SCALE = 2_100;

export function contactCount(p: DemoParams): number {
  return Math.max(1, Math.round(CONTACTS_PER_SCALE * p.scale));
}

const FIRST_NAMES = [
  "Emma",
  "Louise",
  "Jade",
  "Alice",
  "Chloé",
  "Léa",
  "Manon",
  "Camille",
  "Sarah",
  "Inès",
  "Juliette",
  "Zoé",
  "Lucas",
  "Hugo",
  "Louis",
  "Gabriel",
  "Arthur",
  "Jules",
  "Nathan",
  "Léo",
  "Adam",
  "Raphaël",
  "Paul",
  "Victor",
  "Élodie",
  "Marion",
  "Aurélie",
  "Nicolas",
  "Julien",
  "Thomas",
  "Maxime",
  "Antoine",
  "Claire",
  "Sophie",
];
const LAST_NAMES = [
  "Martin",
  "Bernard",
  "Dubois",
  "Thomas",
  "Robert",
  "Richard",
  "Petit",
  "Durand",
  "Leroy",
  "Moreau",
  "Simon",
  "Laurent",
  "Lefebvre",
  "Michel",
  "Garcia",
  "David",
  "Bertrand",
  "Roux",
  "Vincent",
  "Fournier",
  "Morel",
  "Girard",
  "André",
  "Mercier",
  "Dupont",
  "Lambert",
  "Bonnet",
  "François",
  "Martinez",
  "Peeters",
  "Müller",
];

interface Product {
  key: string;
  name: string;
  price: number;
  installments: readonly number[];
  weight: number;
}

const PRODUCTS: readonly Product[] = [
  { key: "programme-12s", name: "Programme 12 semaines", price: 2_970, installments: [1, 3, 3], weight: 5 },
  { key: "mastermind", name: "Mastermind annuel", price: 5_400, installments: [1, 3], weight: 2 },
  { key: "starter", name: "Kit de démarrage", price: 497, installments: [1], weight: 3 },
];

const LEAD_FORMS = [
  "Inscription webinar",
  "Guide gratuit : 10 scripts de vente",
  "Quiz : quel coach êtes-vous ?",
  "Replay du webinar",
  "Newsletter",
];

const CALL_LINES: readonly (readonly [boolean, string])[] = [
  [true, "Bonjour, merci d'avoir pris le temps pour cet appel."],
  [false, "Bonjour, avec plaisir, j'ai vu votre webinar la semaine dernière."],
  [true, "Super. Qu'est-ce qui vous a donné envie de réserver ce créneau ?"],
  [false, "Je plafonne à quatre clients par mois et je passe mes soirées à prospecter."],
  [true, "Et si rien ne change d'ici six mois, qu'est-ce que ça vous coûte ?"],
  [false, "Honnêtement, je risque de reprendre un poste salarié."],
  [true, "D'accord. Quel chiffre d'affaires visez-vous cette année ?"],
  [false, "Autour de cent vingt mille euros, contre soixante aujourd'hui."],
  [true, "Le programme travaille exactement sur l'acquisition et la conversion."],
  [false, "Combien ça coûte, et est-ce qu'on peut payer en plusieurs fois ?"],
  [true, "C'est 2 970 euros, payable en trois fois sans frais."],
  [false, "Je dois en parler à mon associé avant de me décider."],
  [true, "Bien sûr, on se cale un point de suivi jeudi ?"],
  [false, "Oui, jeudi en fin de matinée me va."],
];

const MARKER_LABELS = [
  "Douleur identifiée",
  "Budget évoqué",
  "Objection prix",
  "Décideur présent",
  "Prochaine étape",
];

type SignalMode = "id" | "name" | "macro" | "deleted" | "typo";

interface Touch {
  utm: Record<string, string>;
  ad_ids: Record<string, string>;
  click_ids: Record<string, string>;
  channel: string;
  platform: string | null;
  is_paid: boolean;
  referrer: string | null;
  page: string;
}

interface Resolved {
  resolution: Resolution;
  resolved_platform: string | null;
  resolved_ad_id: string | null;
}

/** The scheduling widget's beacon: the visitor is on the booking page, no new campaign parameters. */
const BOOKING_WIDGET: Touch = {
  utm: {},
  ad_ids: {},
  click_ids: {},
  channel: "direct",
  platform: null,
  is_paid: false,
  referrer: null,
  page: "reserver",
};

const UNRESOLVED: Resolved = { resolution: "unresolved", resolved_platform: null, resolved_ad_id: null };

/** What a CRM carries at a moment: source/medium of the last touch, campaign and ad of the last ad click (SPEC rule 7). */
interface CrmUtm {
  utm_source: string | null;
  utm_medium: string | null;
  utm_campaign: string | null;
  utm_content: string | null;
  utm_term: string | null;
  utm_campaign_id: string | null;
  utm_adset_id: string | null;
  utm_ad_id: string | null;
  meta_ad_id: string | null;
}

const NO_UTM: CrmUtm = {
  utm_source: null,
  utm_medium: null,
  utm_campaign: null,
  utm_content: null,
  utm_term: null,
  utm_campaign_id: null,
  utm_adset_id: null,
  utm_ad_id: null,
  meta_ad_id: null,
};

function pad(n: number, width: number): string {
  return String(n).padStart(width, "0");
}

/** The contacts' side of the data set, one bundle per contact, in a fixed order. */
export function* generateContacts(
  p: DemoParams,
  catalog: Catalog = generateCatalog(p),
): Generator<ContactBundle> {
  const rng = new Rng(mixSeed(p.seed, 2));
  const today = dayStart(p.today);
  const windowStart = today - p.days * DAY_MS;
  // Nothing happens after 22:00 UTC the day before `today` (before midnight in Paris).
  const end = today - 2 * HOUR_MS;
  const index = buildAdIndex(catalog.ads);
  const resolutions = new Map<string, Resolved>();
  const repWeights = [1.3, 1.1, 1, 0.9, 0.7];
  const counters = { event: 0, call: 0, purchase: 0 };

  const resolve = (s: AdSignals): Resolved => {
    const key = `${s.utm_ad_id ?? ""}\u0001${s.meta_ad_id ?? ""}\u0001${s.utm_content ?? ""}\u0001${s.utm_campaign ?? ""}\u0001${s.campaign_name ?? ""}`;
    let found = resolutions.get(key);
    if (!found) {
      const r = resolveAd(s, index);
      found =
        r.method === "unresolved"
          ? UNRESOLVED
          : { resolution: r.method, resolved_platform: r.ad.platform, resolved_ad_id: r.ad.ad_id };
      resolutions.set(key, found);
    }
    return found;
  };

  const adTouch = (ad: CatalogAd): Touch => {
    const source = PLATFORM_SOURCE[ad.platform] ?? ad.platform;
    const medium = ad.platform === "google" ? "cpc" : "paid";
    const clickKey = ad.platform === "meta" ? "fbclid" : ad.platform === "google" ? "gclid" : "ttclid";
    const base = {
      click_ids: { [clickKey]: rng.alnum(ad.platform === "meta" ? 40 : 30) },
      channel: ad.platform === "google" ? "paid_search" : "paid_social",
      platform: ad.platform,
      is_paid: true,
      referrer:
        ad.platform === "meta"
          ? "https://l.facebook.com/"
          : ad.platform === "google"
            ? "https://www.google.com/"
            : "https://www.tiktok.com/",
      page: ad.campaign_name.includes("Guide")
        ? "guide"
        : ad.campaign_name.includes("Appel")
          ? "appel"
          : "webinar",
    };
    const r = rng.next();
    const mode: SignalMode =
      r < 0.72 ? "id" : r < 0.85 ? "name" : r < 0.91 ? "macro" : r < 0.95 ? "deleted" : "typo";
    const named = { source, medium, campaign: ad.campaign_name, content: ad.ad_name, term: ad.adset_name };
    if (mode === "id") {
      const ad_ids: Record<string, string> = {
        ad_id: ad.ad_id,
        adset_id: ad.adset_id,
        campaign_id: ad.campaign_id,
      };
      if (ad.platform === "meta" && rng.chance(0.3)) ad_ids.meta_ad_id = ad.ad_id;
      return { ...base, utm: named, ad_ids };
    }
    if (mode === "name") {
      // Typed by hand in a link: ids missing, the name's case and spacing not quite the catalog's.
      const content = rng.chance(0.3) ? ` ${ad.ad_name.toUpperCase()} ` : ad.ad_name;
      return { ...base, utm: { ...named, content }, ad_ids: {} };
    }
    if (mode === "macro") {
      // URL parameters set at campaign level: the platform sent its placeholders unexpanded.
      if (ad.platform === "meta") {
        return {
          ...base,
          utm: {
            source,
            medium,
            campaign: "{{campaign.name}}",
            content: "{{ad.name}}",
            term: "{{adset.name}}",
          },
          ad_ids: { ad_id: "{{ad.id}}", adset_id: "{{adset.id}}", campaign_id: "{{campaign.id}}" },
        };
      }
      if (ad.platform === "google") {
        return {
          ...base,
          utm: { source, medium, campaign: "{campaignid}", content: "{creative}" },
          ad_ids: { ad_id: "{creative}" },
        };
      }
      return {
        ...base,
        utm: { source, medium, campaign: "__CAMPAIGN_NAME__", content: "__CID_NAME__" },
        ad_ids: { ad_id: "__CID__" },
      };
    }
    if (mode === "deleted") {
      const gone = catalog.deletedAdIds.find((d) => d.platform === ad.platform);
      return {
        ...base,
        utm: { ...named, content: `${ad.ad_name} (ancienne version)` },
        ad_ids: { ad_id: gone?.ad_id ?? "0" },
      };
    }
    return { ...base, utm: { ...named, content: `${ad.ad_name} – copie` }, ad_ids: {} };
  };

  const otherTouch = (first: boolean): Touch => {
    const r = rng.next();
    if (r < (first ? 0.45 : 0.35)) {
      return {
        utm: { source: "google", medium: "organic" },
        ad_ids: {},
        click_ids: {},
        channel: "organic_search",
        platform: null,
        is_paid: false,
        referrer: "https://www.google.com/",
        page: rng.pick(["", "blog/prospection", "blog/closing", "podcast"]),
      };
    }
    if (r < (first ? 0.7 : 0.75)) {
      const asChannel = rng.chance(0.2);
      return {
        utm: asChannel
          ? { channel: "email", campaign: `newsletter-${rng.int(1, 40)}` }
          : { source: "newsletter", medium: "email", campaign: `newsletter-${rng.int(1, 40)}` },
        ad_ids: {},
        click_ids: {},
        channel: "email",
        platform: null,
        is_paid: false,
        referrer: null,
        page: rng.pick(["webinar", "replay", "appel"]),
      };
    }
    if (r < 0.88) {
      return {
        utm: { source: "instagram", medium: "bio" },
        ad_ids: {},
        click_ids: {},
        channel: "social",
        platform: null,
        is_paid: false,
        referrer: "https://l.instagram.com/",
        page: "liens",
      };
    }
    return {
      utm: {},
      ad_ids: {},
      click_ids: {},
      channel: "direct",
      platform: null,
      is_paid: false,
      referrer: null,
      page: "",
    };
  };

  const chooseTouch = (first: boolean): Touch =>
    rng.chance(first ? 0.68 : 0.4) ? adTouch(rng.weighted(catalog.ads, (a) => a.weight)) : otherTouch(first);

  const webResolution = (t: Touch): Resolved =>
    t.ad_ids.ad_id || t.ad_ids.meta_ad_id || t.utm.content
      ? resolve({
          utm_ad_id: t.ad_ids.ad_id,
          meta_ad_id: t.ad_ids.meta_ad_id,
          utm_content: t.utm.content,
          utm_campaign: t.utm.campaign,
        })
      : UNRESOLVED;

  const total = contactCount(p);
  for (let n = 1; n <= total; n++) {
    const firstName = rng.pick(FIRST_NAMES);
    const lastName = rng.pick(LAST_NAMES);
    const name = `${firstName} ${lastName}`;
    const email = `${slug(firstName)}.${slug(lastName)}.${n}@demo.example`;
    const phone = rng.chance(0.8)
      ? `+33 6 ${rng.digits(2)} ${rng.digits(2)} ${rng.digits(2)} ${rng.digits(2)}`
      : null;
    const contactId = rng.uuid();
    const visitorId = `v-${rng.hex(16)}`;
    const events: EventRow[] = [];
    const touchpoints: TouchpointRow[] = [];
    const purchases: PurchaseRow[] = [];
    const calls: CallRow[] = [];
    const segments: SegmentRow[] = [];
    const formTitles: string[] = [];
    const tags = new Set<string>();
    /** The contact's rep, from the first booking on. */
    const owner: { rep: RepRow | null } = { rep: null };
    let crm: CrmUtm = NO_UTM;
    let session = `s-${rng.hex(12)}`;
    let qualified = false;

    const addWeb = (at: number, t: Touch, eventType: string) => {
      touchpoints.push({
        id: rng.uuid(),
        external_id: null,
        contact_id: contactId,
        visitor_id: visitorId,
        session_id: session,
        kind: eventType === "page_view" ? "web" : "conversion",
        event_type: eventType,
        occurred_at: iso(at),
        url: `https://www.demo.example/${t.page}`,
        referrer: t.referrer,
        utm: t.utm,
        ad_ids: t.ad_ids,
        click_ids: t.click_ids,
        channel: t.channel,
        platform: t.platform,
        is_paid: t.is_paid,
        value: null,
        currency: null,
        product: null,
        event_id: null,
        ...webResolution(t),
      });
    };

    const arrive = (at: number, t: Touch) => {
      session = `s-${rng.hex(12)}`;
      addWeb(at, t, "page_view");
      // SPEC rule 7: source and medium follow the last touch; campaign, content, term and ids only ad clicks.
      const next: CrmUtm = {
        ...crm,
        utm_source: t.utm.source ?? crm.utm_source,
        utm_medium: t.utm.medium ?? crm.utm_medium,
      };
      if (t.is_paid) {
        next.utm_campaign = t.utm.campaign ?? null;
        next.utm_content = t.utm.content ?? null;
        next.utm_term = t.utm.term ?? null;
        next.utm_campaign_id = t.ad_ids.campaign_id ?? null;
        next.utm_adset_id = t.ad_ids.adset_id ?? null;
        next.utm_ad_id = t.ad_ids.ad_id ?? null;
        next.meta_ad_id = t.ad_ids.meta_ad_id ?? null;
      }
      crm = next;
    };

    const emit = (type: EventType, at: number, fields: Partial<EventRow> = {}): EventRow | null => {
      if (at > end) return null;
      counters.event += 1;
      // Hidden form fields reach the CRM most of the time; later stages carry them less often.
      const carried = rng.chance(type === "lead" ? 0.86 : 0.7) ? crm : NO_UTM;
      const resolved =
        carried.utm_ad_id || carried.meta_ad_id || carried.utm_content
          ? resolve({
              utm_ad_id: carried.utm_ad_id,
              meta_ad_id: carried.meta_ad_id,
              utm_content: carried.utm_content,
              utm_campaign: carried.utm_campaign,
            })
          : UNRESOLVED;
      const event: EventRow = {
        id: `demo-ev-${pad(counters.event, 7)}`,
        contact_id: contactId,
        event_type: type,
        event_subtype: null,
        event_datetime: iso(at),
        contact_email: email,
        contact_name: name,
        contact_phone: phone,
        value: null,
        amount: null,
        currency: null,
        product_key: null,
        product_name: null,
        assigned_user_name: owner.rep?.name ?? null,
        is_paid: null,
        payment_status: null,
        booking_date: null,
        booking_time: null,
        ...carried,
        campaign_name: null,
        calendar_name: null,
        is_baseline: false,
        cancelled_at: null,
        ...resolved,
        ...fields,
      };
      events.push(event);
      return event;
    };

    const sell = (at: number, product: Product, baseline: boolean) => {
      const parts = rng.pick(product.installments);
      const part = money(product.price / parts);
      const sale = emit("sale", at, {
        value: product.price,
        amount: part,
        currency: CURRENCY,
        product_key: product.key,
        product_name: product.name,
        is_paid: true,
        payment_status: "paid",
        is_baseline: baseline,
        ...(baseline ? NO_UTM : {}),
        ...(baseline ? UNRESOLVED : {}),
      });
      if (!sale) return;
      tags.add("client");
      if (!baseline && rng.chance(0.02)) {
        sale.cancelled_at = iso(at + 2 * DAY_MS);
        return;
      }
      const purchase = (when: number, amount: number) => {
        counters.purchase += 1;
        purchases.push({
          id: `demo-pu-${pad(counters.purchase, 7)}`,
          contact_id: contactId,
          purchase_date: iso(when),
          product_key: product.key,
          product_name: product.name,
          contact_email: email,
          contact_name: name,
          amount,
          currency: CURRENCY,
          commissionable: false,
          commission_rate: null,
          commission_amount: null,
          invoice_id: `F-${new Date(when).getUTCFullYear()}-${pad(counters.purchase, 7)}`,
        });
      };
      purchase(at, part);
      if (baseline) return;
      // The CRM recorded the same sale twice.
      if (rng.chance(0.04)) {
        emit("sale", at + rng.int(1, 3) * HOUR_MS, {
          value: product.price,
          amount: part,
          currency: CURRENCY,
          product_key: product.key,
          product_name: product.name,
          is_paid: true,
          payment_status: "paid",
        });
      }
      for (let i = 1; i < parts; i++) {
        let when = at + 14 * i * DAY_MS;
        const payment = {
          amount: part,
          currency: CURRENCY,
          product_key: product.key,
          product_name: product.name,
        };
        if (rng.chance(0.07)) {
          if (!emit("payment", when, { ...payment, is_paid: false, payment_status: "failed" })) break;
          when += 3 * DAY_MS;
        }
        if (!emit("payment", when, { ...payment, is_paid: true, payment_status: "paid" })) break;
        purchase(when, part);
      }
      const refund = rng.next();
      if (refund < 0.06) {
        emit("payment", at + rng.int(7, 25) * DAY_MS, {
          amount: part,
          currency: CURRENCY,
          product_key: product.key,
          product_name: product.name,
          is_paid: false,
          payment_status: "refunded",
        });
        tags.add("remboursé");
      } else if (refund < 0.085) {
        emit("payment", at + rng.int(20, 45) * DAY_MS, {
          amount: part,
          currency: CURRENCY,
          product_key: product.key,
          product_name: product.name,
          is_paid: false,
          payment_status: "disputed",
        });
      }
    };

    const call = (
      at: number,
      kind: "discovery" | "follow_up",
      outcome: "sale" | "lost" | "follow_up",
      r: RepRow,
    ) => {
      counters.call += 1;
      const externalId = `demo-call-${pad(counters.call, 7)}`;
      const lines = rng.int(6, 12);
      let ms = 0;
      for (let i = 0; i < lines; i++) {
        const [byRep, text] = CALL_LINES[i % CALL_LINES.length] ?? [true, "…"];
        const length = rng.int(2_500, 14_000);
        segments.push({
          call_external_id: externalId,
          idx: i,
          start_ms: ms,
          end_ms: ms + length,
          speaker_id: byRep ? "spk_0" : "spk_1",
          speaker_label: byRep ? r.name : name,
          speaker_email: byRep ? r.email : email,
          text,
          confidence: Math.round(rng.float(0.82, 0.99) * 1000) / 1000,
        });
        ms += length + rng.int(200, 1_500);
      }
      const fit = money(rng.float(qualified ? 55 : 20, qualified ? 98 : 75));
      const nextStep =
        outcome === "sale" ? "closed_won" : outcome === "lost" ? "closed_lost" : "follow_up_call";
      calls.push({
        external_id: externalId,
        starts_at: iso(at),
        title: `${kind === "discovery" ? "Appel découverte" : "Appel de suivi"} – ${name}`,
        duration_sec: rng.int(900, 3_600),
        call_analysis_id: `ana-${rng.hex(16)}`,
        summary:
          outcome === "sale"
            ? `${firstName} veut doubler son chiffre d'affaires ; objection prix levée avec le paiement en plusieurs fois.`
            : outcome === "lost"
              ? `${firstName} n'a pas le budget ce trimestre ; à recontacter plus tard.`
              : `${firstName} doit consulter son associé ; point de suivi planifié.`,
        call_type: kind,
        is_qualified: qualified,
        icp_fit_score: fit,
        qualification_reasoning: qualified
          ? "Décideur, chiffre d'affaires dans la cible, douleur claire sur l'acquisition."
          : "Activité trop récente et budget incertain.",
        next_step_type: nextStep,
        next_step_summary:
          nextStep === "closed_won"
            ? "Onboarding à planifier"
            : nextStep === "closed_lost"
              ? "Nurturing"
              : "Rappel",
        next_step_proposed: nextStep === "follow_up_call" ? "Appel de suivi dans 48 h" : "—",
        scorecard_total: money(rng.float(45, 96)),
        rep_id: r.id,
        markers: MARKER_LABELS.slice(0, rng.int(2, MARKER_LABELS.length)).map((label, i) => ({
          ts: Math.round((ms / 1000) * ((i + 1) / (MARKER_LABELS.length + 1))),
          label,
          status: rng.chance(0.75) ? "hit" : "missed",
        })),
        participant_emails: [email, r.email],
        audio_file: `calls/${pad(counters.call, 7)}.wav`,
        audio_content_type: "audio/wav",
        video_file: null,
      });
      // The demo stores no video files. The draw that once gave 5 % of calls one is kept, so a seed
      // still yields the data set it always did.
      rng.chance(0.05);
    };

    const meeting = (at: number, subtype: "marketing" | "follow_up", round: number) => {
      owner.rep ??= rng.weighted(catalog.reps, (r) => repWeights[catalog.reps.indexOf(r)] ?? 1);
      const rep = owner.rep;
      const meetingDay = Math.floor(at / DAY_MS) * DAY_MS + rng.int(1, 9) * DAY_MS;
      const slot = rng.int(0, 19);
      const hour = 9 + Math.floor(slot / 2);
      const minute = slot % 2 === 0 ? "00" : "30";
      // Paris local time, stored in UTC (winter offset: a demo, not a calendar).
      const meetingAt = meetingDay + (hour - 1) * HOUR_MS + (minute === "30" ? 30 * MINUTE_MS : 0);
      if (subtype === "marketing" && at <= end) addWeb(at - 2 * MINUTE_MS, BOOKING_WIDGET, "booking");
      const booking = emit("booking", at, {
        event_subtype: subtype,
        booking_date: isoDate(meetingDay),
        booking_time: `${pad(hour, 2)}:${minute}`,
        calendar_name: subtype === "marketing" ? "Appel découverte (45 min)" : "Appel de suivi (30 min)",
      });
      if (!booking) return;
      if (rng.chance(0.08)) {
        const cancelAt = at + Math.floor(rng.next() * Math.max(HOUR_MS, meetingAt - at - HOUR_MS));
        if (cancelAt <= end) {
          booking.cancelled_at = iso(cancelAt);
          emit("cancel", cancelAt, { event_subtype: subtype });
        }
        return;
      }
      if (meetingAt > end) return;
      if (rng.chance(0.17)) {
        tags.add("no-show");
        emit("no_show", meetingAt + 15 * MINUTE_MS);
        if (round < 2 && rng.chance(0.4))
          meeting(meetingAt + rng.int(20, 60) * HOUR_MS, "follow_up", round + 1);
        return;
      }
      const r = rng.next();
      const outcome =
        round === 0 ? (r < 0.38 ? "sale" : r < 0.7 ? "lost" : "follow_up") : r < 0.5 ? "sale" : "lost";
      call(meetingAt, subtype === "marketing" ? "discovery" : "follow_up", outcome, rep);
      const product = rng.weighted(PRODUCTS, (x) => x.weight);
      if (outcome === "sale") sell(meetingAt + rng.int(1, 48) * HOUR_MS, product, false);
      else if (outcome === "lost") {
        emit("sale_lost", meetingAt + rng.int(1, 72) * HOUR_MS, {
          value: product.price,
          currency: CURRENCY,
          product_key: product.key,
          product_name: product.name,
        });
      } else meeting(meetingAt + rng.int(10, 90) * MINUTE_MS, "follow_up", round + 1);
    };

    // --- The journey: arrivals, leads, then the sales funnel from the last lead. ---
    const dayOffset = Math.floor(rng.next() * (p.days - 1));
    let t = windowStart + dayOffset * DAY_MS + rng.int(7 * 60, 21 * 60) * MINUTE_MS;
    // Former customers, from before tracking began (baseline: never counted as new sales).
    if (rng.chance(0.015)) sell(windowStart - rng.int(30, 300) * DAY_MS, rng.pick(PRODUCTS), true);
    const leadCount =
      1 +
      Number(rng.chance(0.75)) +
      Number(rng.chance(0.55)) +
      Number(rng.chance(0.4)) +
      Number(rng.chance(0.35)) +
      Number(rng.chance(0.25)) +
      Number(rng.chance(0.2));
    let firstLeadAt = t;
    let lastLeadAt = t;
    let touchedAt = t;
    for (let k = 0; k < leadCount; k++) {
      if (k > 0) t += rng.int(1, 12) * DAY_MS + rng.int(0, 600) * MINUTE_MS;
      if (t > end) break;
      const touch = chooseTouch(k === 0);
      arrive(t, touch);
      touchedAt = t;
      for (let extra = rng.int(0, 1); extra > 0; extra--) {
        touchedAt += rng.int(1, 6) * MINUTE_MS;
        addWeb(
          touchedAt,
          { ...touch, page: rng.pick(["programme", "temoignages", "a-propos"]) },
          "page_view",
        );
      }
      const leadAt = touchedAt + rng.int(1, 15) * MINUTE_MS;
      if (k > 0 && leadAt > end) break;
      const title = rng.pick(LEAD_FORMS);
      if (!formTitles.includes(title)) formTitles.push(title);
      tags.add(title.startsWith("Inscription") || title.startsWith("Replay") ? "webinar" : "lead-magnet");
      addWeb(Math.min(leadAt, end), { ...touch, page: "merci" }, "form_submit");
      emit("lead", Math.min(leadAt, end));
      if (k === 0) firstLeadAt = Math.min(leadAt, end);
      lastLeadAt = Math.min(leadAt, end);
    }
    // Some visits after the last lead (email clicks, retargeting) before the funnel goes on.
    if (rng.chance(0.35)) {
      const at = lastLeadAt + rng.int(2, 30) * HOUR_MS;
      if (at <= end) arrive(at, chooseTouch(false));
    }
    let formResponse: Record<string, unknown> | null = null;
    if (rng.chance(0.66)) {
      const appAt = lastLeadAt + rng.int(10, 2_880) * MINUTE_MS;
      qualified = rng.chance(0.6);
      formResponse = {
        chiffre_affaires: rng.pick(["< 30 k€", "30–80 k€", "80–200 k€", "> 200 k€"]),
        role: rng.pick(["fondateur", "freelance", "dirigeant", "salarié"]),
        budget: rng.pick(["< 1 000 €", "1 000–3 000 €", "> 3 000 €"]),
        objectif: "Remplir mon agenda de rendez-vous qualifiés",
      };
      if (emit("application", appAt, { event_subtype: qualified ? "qualified" : null })) {
        if (rng.chance(qualified ? 0.88 : 0.6))
          meeting(appAt + rng.int(5, 1_440) * MINUTE_MS, "marketing", 0);
      }
    }
    // Visitors of the same days who never left their email.
    for (let a = rng.chance(0.5) ? rng.int(1, 3) : 0; a > 0; a--) {
      const at = windowStart + Math.floor(rng.next() * (end - windowStart));
      const touch = chooseTouch(true);
      touchpoints.push({
        id: rng.uuid(),
        external_id: null,
        contact_id: null,
        visitor_id: `v-${rng.hex(16)}`,
        session_id: `s-${rng.hex(12)}`,
        kind: "web",
        event_type: "page_view",
        occurred_at: iso(at),
        url: `https://www.demo.example/${touch.page}`,
        referrer: touch.referrer,
        utm: touch.utm,
        ad_ids: touch.ad_ids,
        click_ids: touch.click_ids,
        channel: touch.channel,
        platform: touch.platform,
        is_paid: touch.is_paid,
        value: null,
        currency: null,
        product: null,
        event_id: null,
        ...webResolution(touch),
      });
    }

    // Every CRM event is also a conversion touchpoint of the journey (as ingestion writes it).
    for (const e of events) {
      const utm: Record<string, string> = {};
      const adIds: Record<string, string> = {};
      if (e.utm_source) utm.source = e.utm_source;
      if (e.utm_medium) utm.medium = e.utm_medium;
      if (e.utm_campaign) utm.campaign = e.utm_campaign;
      if (e.utm_content) utm.content = e.utm_content;
      if (e.utm_term) utm.term = e.utm_term;
      if (e.utm_ad_id) adIds.ad_id = e.utm_ad_id;
      if (e.utm_adset_id) adIds.adset_id = e.utm_adset_id;
      if (e.utm_campaign_id) adIds.campaign_id = e.utm_campaign_id;
      if (e.meta_ad_id) adIds.meta_ad_id = e.meta_ad_id;
      touchpoints.push({
        id: rng.uuid(),
        external_id: `event:${e.id}`,
        contact_id: contactId,
        visitor_id: visitorId,
        session_id: null,
        kind: "conversion",
        event_type: e.event_type,
        occurred_at: e.event_datetime,
        url: null,
        referrer: null,
        utm,
        ad_ids: adIds,
        click_ids: {},
        channel: null,
        platform: e.resolved_platform,
        is_paid: e.resolved_ad_id !== null || Boolean(adIds.ad_id || adIds.meta_ad_id),
        value: e.amount ?? e.value,
        currency: e.currency,
        product: e.product_key,
        event_id: e.id,
        resolution: e.resolution,
        resolved_platform: e.resolved_platform,
        resolved_ad_id: e.resolved_ad_id,
      });
    }

    let customer: CustomerRow | null = null;
    const firstPurchase = purchases.map((x) => x.purchase_date).sort()[0] ?? "";
    if (purchases.length > 0) {
      const withCommission = rng.chance(0.6);
      const rate = rng.pick([0.1, 0.15, 0.2]);
      const expires = Date.parse(firstPurchase) + (rng.chance(0.8) ? 365 : 60) * DAY_MS;
      if (withCommission) {
        for (const x of purchases) {
          x.commissionable = true;
          x.commission_rate = rate;
          x.commission_amount = money(x.amount * rate);
        }
      }
      customer = {
        id: rng.uuid(),
        contact_id: contactId,
        commission_status: withCommission ? (expires > today ? "active" : "expired") : null,
        commission_expires_at: withCommission ? iso(expires) : null,
        created_at: firstPurchase,
      };
    }
    const paid = purchases.reduce((sum, x) => sum + x.amount, 0);
    const contact: ContactRow = {
      id: contactId,
      email,
      phone,
      first_name: firstName,
      last_name: lastName,
      name,
      tags: [...tags].sort(),
      form_titles: formTitles,
      form_response: formResponse,
      assigned_user_name: owner.rep?.name ?? null,
      value: paid > 0 ? money(paid) : null,
      created_at: iso(Math.min(firstLeadAt, ...events.map((e) => Date.parse(e.event_datetime)))),
    };
    yield { contact, events, touchpoints, purchases, customer, calls, segments };
  }
}

function slug(value: string): string {
  return value
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^A-Za-z0-9]/g, "")
    .toLowerCase();
}

/** The whole data set in memory (tests, small scales). */
export function generateDemo(p: DemoParams): { catalog: Catalog; contacts: ContactBundle[] } {
  const catalog = generateCatalog(p);
  return { catalog, contacts: [...generateContacts(p, catalog)] };
}

export interface DemoPlan {
  contacts: number;
  events: number;
  touchpoints: number;
  web_touchpoints: number;
  purchases: number;
  customers: number;
  calls: number;
  segments: number;
  ads: number;
  spend: number;
  /** CRM events plus web tracking events (page views, form submits, booking beacons). */
  tracked_events: number;
}

/** Row counts of the data set, streamed: nothing is kept, so any scale can be planned. */
export function planDemo(p: DemoParams): DemoPlan {
  const catalog = generateCatalog(p);
  const plan: DemoPlan = {
    contacts: 0,
    events: 0,
    touchpoints: 0,
    web_touchpoints: 0,
    purchases: 0,
    customers: 0,
    calls: 0,
    segments: 0,
    ads: catalog.ads.length,
    spend: catalog.spend.length,
    tracked_events: 0,
  };
  for (const b of generateContacts(p, catalog)) {
    plan.contacts += 1;
    plan.events += b.events.length;
    plan.touchpoints += b.touchpoints.length;
    for (const t of b.touchpoints) if (t.external_id === null) plan.web_touchpoints += 1;
    plan.purchases += b.purchases.length;
    plan.customers += b.customer ? 1 : 0;
    plan.calls += b.calls.length;
    plan.segments += b.segments.length;
  }
  plan.tracked_events = plan.events + plan.web_touchpoints;
  return plan;
}
