import { mixSeed, Rng } from "./random.ts";
import type {
  AdRow,
  AdRuleRow,
  AdRuleRunRow,
  CreativeRequestRow,
  CreativeRow,
  DemoCatalog,
  GoalRow,
  PixelRow,
  RepRow,
  SpendRow,
} from "./rows.ts";

export const DAY_MS = 86_400_000;

export interface DemoParams {
  seed: number;
  /** Days of history, ending the day before `today`. */
  days: number;
  /** Volume multiplier (contacts, spend). */
  scale: number;
  /** YYYY-MM-DD: the generator never reads the clock, so the same seed and `today` give the same rows. */
  today: string;
}

export const CURRENCY = "EUR";

export const PLATFORM_SOURCE: Record<string, string> = {
  meta: "facebook",
  google: "google",
  tiktok: "tiktok",
};

/** Milliseconds of `today` 00:00 UTC; a bad date is refused. */
export function dayStart(today: string): number {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(today)) throw new Error(`today must be YYYY-MM-DD, got ${today}`);
  const ms = Date.parse(`${today}T00:00:00Z`);
  if (Number.isNaN(ms)) throw new Error(`today must be a calendar date, got ${today}`);
  return ms;
}

export function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}

export function money(value: number): number {
  return Math.round(value * 100) / 100;
}

const REP_NAMES = [
  ["Camille", "Martin"],
  ["Julien", "Bernard"],
  ["Sarah", "Lefèvre"],
  ["Thomas", "Dubois"],
  ["Inès", "Moreau"],
] as const;

const INDUSTRIES = ["coaching", "B2B SaaS", "real estate training", "fitness programs", "agency services"];
const ROLES = ["founder", "head of sales", "marketing director", "operations lead"];

interface CampaignPlan {
  platform: "meta" | "google" | "tiktok";
  name: string;
  adsets: readonly { name: string; ads: readonly string[] }[];
}

/*
 * Eight campaigns, sixteen ad sets, forty ads. "UGC – Témoignage Julie" runs in two Meta campaigns on
 * purpose: a `utm_content` naming it resolves by name only with the campaign breaking the tie.
 */
const CAMPAIGNS: readonly CampaignPlan[] = [
  {
    platform: "meta",
    name: "FR | Webinar | Prospection",
    adsets: [
      {
        name: "Lookalike 1% acheteurs",
        ads: ["Webinar – Hook douleur", "Webinar – Carrousel", "UGC – Témoignage Julie"],
      },
      {
        name: "Intérêts entrepreneurs",
        ads: ["Webinar – Vidéo fondateur", "Webinar – Statique bleu", "Webinar – Citation"],
      },
    ],
  },
  {
    platform: "meta",
    name: "FR | Lead magnet | Guide",
    adsets: [
      { name: "Broad 25-55", ads: ["Guide – Mockup PDF", "Guide – Checklist", "Guide – Avant/après"] },
      { name: "Visiteurs site 30j", ads: ["Guide – Rappel", "Guide – Story", "Guide – FAQ"] },
    ],
  },
  {
    platform: "meta",
    name: "FR | Retargeting | Appel",
    adsets: [
      {
        name: "Leads non bookés",
        ads: ["Appel – Urgence places", "UGC – Témoignage Julie", "Appel – Étude de cas"],
      },
      { name: "No-shows 14j", ads: ["Appel – Relance douce", "Appel – Vidéo coach", "Appel – Bonus"] },
    ],
  },
  {
    platform: "meta",
    name: "BE-CH | Webinar | Prospection",
    adsets: [
      { name: "Belgique broad", ads: ["BE – Hook douleur", "BE – Carrousel", "BE – Témoignage"] },
      { name: "Suisse romande", ads: ["CH – Hook douleur", "CH – Vidéo fondateur", "CH – Statique"] },
    ],
  },
  {
    platform: "google",
    name: "Search | Marque",
    adsets: [
      { name: "Marque exacte", ads: ["RSA – Marque 1", "RSA – Marque 2"] },
      { name: "Marque + avis", ads: ["RSA – Avis 1", "RSA – Avis 2"] },
    ],
  },
  {
    platform: "google",
    name: "Search | Générique coaching",
    adsets: [
      { name: "Coaching business", ads: ["RSA – Coaching 1", "RSA – Coaching 2"] },
      { name: "Formation vente", ads: ["RSA – Vente 1", "RSA – Vente 2"] },
    ],
  },
  {
    platform: "tiktok",
    name: "TT | Prospection | Spark",
    adsets: [
      { name: "18-34 entrepreneurs", ads: ["TT – Spark Léa", "TT – Spark Hugo"] },
      { name: "Intérêt business", ads: ["TT – Trend son", "TT – Face cam"] },
    ],
  },
  {
    platform: "tiktok",
    name: "TT | Retargeting | Webinar",
    adsets: [
      { name: "Vidéo vue 50%", ads: ["TT – Replay webinar", "TT – Témoignage"] },
      { name: "Visiteurs 7j", ads: ["TT – Dernière chance", "TT – Bonus"] },
    ],
  },
];

/** A platform id of the platform's shape: Meta 18 digits, Google 10–12, TikTok 19. Strings, always. */
function platformId(rng: Rng, platform: string): string {
  if (platform === "meta") return `1202${rng.digits(14)}`;
  if (platform === "google") return rng.digits(rng.int(10, 12));
  return `17${rng.digits(17)}`;
}

/** An ad together with its delivery weight (share of clicks and spend). */
export interface CatalogAd extends AdRow {
  weight: number;
}

export interface Catalog extends DemoCatalog {
  ads: CatalogAd[];
  /** Ids that look real but name no ad of the catalog (ads deleted on the platform). */
  deletedAdIds: { platform: string; ad_id: string }[];
}

/** The account-level rows: reps, ads, spend, settings, pixels, creatives, rules. */
export function generateCatalog(p: DemoParams): Catalog {
  const rng = new Rng(mixSeed(p.seed, 1));
  const today = dayStart(p.today);
  const first = today - p.days * DAY_MS;

  const reps: RepRow[] = REP_NAMES.map(([firstName, lastName], i) => ({
    id: `rep-${i + 1}`,
    name: `${firstName} ${lastName}`,
    email: `${ascii(firstName)}.${ascii(lastName)}@demo.example`.toLowerCase(),
  }));

  const ads: CatalogAd[] = [];
  for (const campaign of CAMPAIGNS) {
    const campaignId = platformId(rng, campaign.platform);
    for (const adset of campaign.adsets) {
      const adsetId = platformId(rng, campaign.platform);
      for (const adName of adset.ads) {
        ads.push({
          platform: campaign.platform,
          ad_id: platformId(rng, campaign.platform),
          ad_name: adName,
          adset_id: adsetId,
          adset_name: adset.name,
          campaign_id: campaignId,
          campaign_name: campaign.name,
          is_excluded: false,
          weight: rng.float(0.3, 2.5),
        });
      }
    }
  }
  // A brand-search ad the advertiser keeps out of attribution.
  const excluded = ads.find((a) => a.ad_name === "RSA – Marque 2");
  if (excluded) excluded.is_excluded = true;
  const deletedAdIds = ["meta", "google", "tiktok"].map((platform) => ({
    platform,
    ad_id: platformId(rng, platform),
  }));

  const cpm: Record<string, number> = { meta: 9, google: 28, tiktok: 6 };
  const ctr: Record<string, number> = { meta: 0.012, google: 0.055, tiktok: 0.009 };
  const spend: SpendRow[] = [];
  for (const ad of ads) {
    const base = 18 * ad.weight * p.scale;
    for (let day = first; day < today; day += DAY_MS) {
      const weekday = new Date(day).getUTCDay();
      const amount = money(base * (weekday === 0 || weekday === 6 ? 0.7 : 1) * rng.float(0.6, 1.4));
      const impressions = Math.round((amount / (cpm[ad.platform] ?? 10)) * 1000);
      const clicks = Math.round(impressions * (ctr[ad.platform] ?? 0.01) * rng.float(0.7, 1.3));
      spend.push({
        platform: ad.platform,
        ad_id: ad.ad_id,
        spend_date: isoDate(day),
        spend: amount,
        clicks,
        impressions,
        reach: Math.round(impressions * rng.float(0.55, 0.8)),
        currency: CURRENCY,
      });
    }
  }

  const industries = [rng.pick(INDUSTRIES), rng.pick(INDUSTRIES)].filter((v, i, a) => a.indexOf(v) === i);
  const icp = {
    industries,
    decision_maker_roles: [rng.pick(ROLES)],
    min_annual_revenue: 100_000 * rng.int(1, 20),
    countries: ["FR", "BE", "CH"],
    disqualifiers: ["student", "no budget"],
  };

  const goals: GoalRow[] = [];
  const month = new Date(today);
  for (let back = 2; back >= 0; back--) {
    const period = isoDate(Date.UTC(month.getUTCFullYear(), month.getUTCMonth() - back, 1));
    const s = p.scale;
    goals.push(
      { period, metric_key: "leads", target_value: Math.round(1400 * s) },
      { period, metric_key: "bookings", target_value: Math.round(300 * s) },
      { period, metric_key: "sales", target_value: Math.round(110 * s) },
      { period, metric_key: "revenue", target_value: Math.round(180_000 * s) },
      { period, metric_key: "spend", target_value: Math.round(25_000 * s) },
      { period, metric_key: "show_rate", target_value: 0.8 },
    );
  }

  const pixels: PixelRow[] = [
    {
      id: rng.uuid(),
      platform: "meta",
      pixel_id: rng.digits(16),
      name: "Pixel principal",
      is_default: true,
      access_token: `EAAG${rng.alnum(120)}`,
      routing: { events: ["lead", "application", "booking", "sale"], test_event_code: null },
    },
    {
      id: rng.uuid(),
      platform: "tiktok",
      pixel_id: `C${rng.alnum(19).toUpperCase()}`,
      name: "TikTok Events API",
      is_default: false,
      access_token: rng.hex(40),
      routing: { events: ["lead", "sale"] },
    },
    {
      id: rng.uuid(),
      platform: "google",
      pixel_id: `AW-${rng.digits(10)}`,
      name: "Google Ads conversions",
      is_default: false,
      access_token: `ya29.${rng.alnum(80)}`,
      routing: {
        events: ["booking", "sale"],
        conversion_labels: { booking: rng.alnum(12), sale: rng.alnum(12) },
      },
    },
  ];

  const creatives: CreativeRow[] = [];
  const angles = ["douleur", "preuve sociale", "urgence", "autorité", "curiosité", "objection prix"];
  for (let i = 0; i < 12; i++) {
    const angle = angles[i % angles.length] ?? "douleur";
    const video = i % 3 === 0;
    creatives.push({
      id: rng.uuid(),
      external_ref: `demo-creative-${String(i + 1).padStart(3, "0")}`,
      is_published: i < 5,
      angle,
      primary_text: `Vous aussi, passez de 0 à 10 clients par mois (${angle}).`,
      headline: `Webinar gratuit – angle ${angle}`,
      hook: `Et si votre agenda se remplissait tout seul ? #${i + 1}`,
      cta: i % 2 === 0 ? "S'inscrire" : "En savoir plus",
      destination_url: "https://www.demo.example/webinar",
      asset_url: `https://cdn.demo.example/creatives/${i + 1}.${video ? "mp4" : "jpg"}`,
      asset_kind: video ? "video" : "image",
      variant_label: String.fromCharCode(65 + (i % 4)),
      visual_subtype: video ? "ugc" : i % 2 === 0 ? "statique" : "carrousel",
      funnel: i % 3 === 2 ? "retargeting" : "prospection",
      product: i % 4 === 3 ? "mastermind" : "programme-12s",
      audience: i % 2 === 0 ? "entrepreneurs 30-50" : "freelances",
      video_script: video ? "0-3s : hook face caméra. 3-20s : histoire. 20-30s : appel à l'action." : null,
      source: { tool: "demo", batch: 1 + Math.floor(i / 6) },
      score: money(rng.float(40, 95)),
      created_at: iso(first + rng.int(0, p.days - 1) * DAY_MS),
    });
  }

  const creativeRequests: CreativeRequestRow[] = [
    {
      id: rng.uuid(),
      reason: "ad_fatigue",
      status: "open",
      requested_count: 4,
      filled_count: 0,
      context: { campaign_name: CAMPAIGNS[0]?.name, ctr_drop_pct: 38 },
      created_at: iso(today - 3 * DAY_MS + 9 * 3_600_000),
      notified_at: null,
    },
    {
      id: rng.uuid(),
      reason: "new_angle",
      status: "partial",
      requested_count: 6,
      filled_count: 2,
      context: { angle: "objection prix", product: "mastermind" },
      created_at: iso(today - 10 * DAY_MS + 14 * 3_600_000),
      notified_at: iso(today - 10 * DAY_MS + 15 * 3_600_000),
    },
    {
      id: rng.uuid(),
      reason: "reserve_low",
      status: "open",
      requested_count: 3,
      filled_count: 0,
      context: { reserve_count: 2, platform: "tiktok" },
      created_at: iso(today - 1 * DAY_MS + 8 * 3_600_000),
      notified_at: iso(today - 1 * DAY_MS + 8 * 3_600_000 + 60_000),
    },
    {
      id: rng.uuid(),
      reason: "ad_fatigue",
      status: "filled",
      requested_count: 3,
      filled_count: 3,
      context: { campaign_name: CAMPAIGNS[1]?.name },
      created_at: iso(today - 30 * DAY_MS + 10 * 3_600_000),
      notified_at: iso(today - 30 * DAY_MS + 11 * 3_600_000),
    },
  ];

  const metaProspecting = ads.find((a) => a.campaign_name === CAMPAIGNS[0]?.name);
  const tiktok = ads.find((a) => a.platform === "tiktok");
  const ruleDefs: Omit<AdRuleRow, "id" | "last_run_at" | "created_at">[] = [
    {
      label: "Couper les pubs à CPL > 60 €",
      rule_type: "pause_high_cpl",
      platform: "meta",
      campaign_id: metaProspecting?.campaign_id ?? null,
      campaign_name: metaProspecting?.campaign_name ?? null,
      enabled: true,
      dry_run: true,
      params: { max_cpl: 60, min_spend: 100, lookback_days: 7 },
    },
    {
      label: "Augmenter le budget des gagnants",
      rule_type: "scale_winners",
      platform: "meta",
      campaign_id: null,
      campaign_name: null,
      enabled: true,
      dry_run: false,
      params: { min_roas: 3, budget_step_pct: 20, lookback_days: 3 },
    },
    {
      label: "Fatigue créa (CTR < 0,8 %)",
      rule_type: "ctr_floor",
      platform: "tiktok",
      campaign_id: tiktok?.campaign_id ?? null,
      campaign_name: tiktok?.campaign_name ?? null,
      enabled: true,
      dry_run: true,
      params: { min_ctr: 0.008, min_impressions: 5000 },
    },
    {
      label: "Plafond de dépense quotidien",
      rule_type: "daily_spend_cap",
      platform: null,
      campaign_id: null,
      campaign_name: null,
      enabled: false,
      dry_run: true,
      params: { max_daily_spend: Math.round(1500 * p.scale) },
    },
  ];
  const adRules: AdRuleRow[] = [];
  const adRuleRuns: AdRuleRunRow[] = [];
  const runDays = Math.min(14, p.days);
  for (const def of ruleDefs) {
    const id = rng.uuid();
    let lastRun: number | null = null;
    if (def.enabled) {
      for (let d = runDays; d >= 1; d--) {
        const ranAt = today - d * DAY_MS + 6 * 3_600_000 + rng.int(0, 600) * 1000;
        const candidates = ads.filter((a) => def.platform === null || a.platform === def.platform);
        const acting = rng.chance(0.4);
        const ad = rng.pick(candidates);
        const actions = acting
          ? [
              {
                action: def.rule_type === "scale_winners" ? "raise_budget" : "pause",
                ad_id: ad.ad_id,
                ad_name: ad.ad_name,
              },
            ]
          : [];
        adRuleRuns.push({
          id: rng.uuid(),
          rule_id: id,
          ran_at: iso(ranAt),
          dry_run: def.dry_run,
          status: rng.chance(0.05) ? "error" : "ok",
          actions,
          summary: acting
            ? `${def.dry_run ? "would act on" : "acted on"} ${ad.ad_name}`
            : "no ad matched the conditions",
        });
        lastRun = ranAt;
      }
    }
    adRules.push({
      ...def,
      id,
      last_run_at: lastRun === null ? null : iso(lastRun),
      created_at: iso(first + rng.int(0, 5) * DAY_MS),
    });
  }

  return {
    reps,
    ads,
    deletedAdIds,
    spend,
    icp,
    goals,
    pixels,
    creatives,
    creativeRequests,
    adRules,
    adRuleRuns,
  };
}

/** "Lefèvre" → "lefevre": emails keep to ASCII. */
export function ascii(value: string): string {
  return value
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^A-Za-z0-9-]/g, "")
    .toLowerCase();
}
