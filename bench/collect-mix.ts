/**
 * The collect bench's beacon mix (bench/collect.ts, bench/README.md "Collect"), generated in the
 * load-generator worker: seeded, so every run sends the same mix.
 */
import { randomBytes } from "node:crypto";

/** What the beacons name: the account's client key and its ads (so resolution finds them). */
export interface WorkerInput {
  clientKey: string;
  ads: { ad_id: string; ad_name: string; campaign_name: string }[];
  visitors: number;
  seed: number;
}

/** mulberry32: a small seeded generator, so every run sends the same mix. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The beacon mix, per 100: 80 page views (32 ad clicks naming a known ad by id, 12 naming one by
 * utm_content only, 4 carrying an unknown ad id, 32 organic or email visits), 15 form submissions with
 * an email (some visitors come back, so some contacts exist already), 5 bookings. Every beacon has a
 * unique `id`, so the number of touchpoints written must equal the number of 2xx answers.
 */
export function beaconFactory(input: WorkerInput) {
  const random = prng(input.seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const runTag = randomBytes(4).toString("hex");
  let sequence = 0;
  const mix: Record<string, number> = {};
  const count = (kind: string) => {
    mix[kind] = (mix[kind] ?? 0) + 1;
  };
  const next = (): string => {
    sequence += 1;
    const visitor = Math.floor(random() * input.visitors);
    const base = {
      client_key: input.clientKey,
      // 22 characters at least, as the service asks of a beacon id.
      id: `b-${runTag}-${sequence.toString(36).padStart(11, "0")}`,
      visitor_id: `v-${visitor.toString(36).padStart(8, "0")}`,
      session_id: `s-${visitor.toString(36).padStart(6, "0")}-${Math.floor(sequence / 50).toString(36)}`,
    };
    const r = random();
    if (r < 0.8) {
      const ad = pick(input.ads);
      const url = `https://shop.example/landing/${visitor % 17}`;
      const kind = random();
      if (kind < 0.4) {
        count("page_view ad id");
        return JSON.stringify({
          type: "page_view",
          ...base,
          url: `${url}?utm_source=facebook&utm_medium=paid`,
          referrer: "https://l.facebook.com/",
          utm: { source: "facebook", medium: "paid", campaign: ad.campaign_name, content: ad.ad_name },
          ad_ids: { ad_id: ad.ad_id },
          click_ids: { fbclid: `IwAR${sequence.toString(36)}` },
        });
      }
      if (kind < 0.55) {
        count("page_view ad name");
        return JSON.stringify({
          type: "page_view",
          ...base,
          url: `${url}?utm_source=google&utm_medium=cpc`,
          utm: { source: "google", medium: "cpc", campaign: ad.campaign_name, content: ad.ad_name },
          click_ids: { gclid: `Cj0K${sequence.toString(36)}` },
        });
      }
      if (kind < 0.6) {
        count("page_view unknown ad");
        return JSON.stringify({
          type: "page_view",
          ...base,
          url,
          utm: { source: "facebook", medium: "paid", content: "{{ad.name}}" },
          ad_ids: { ad_id: `9${String(sequence).padStart(17, "0")}` },
        });
      }
      count("page_view organic");
      return JSON.stringify(
        random() < 0.5
          ? { type: "page_view", ...base, url, referrer: "https://www.google.com/" }
          : {
              type: "page_view",
              ...base,
              url,
              utm: { source: "newsletter", medium: "email", campaign: "May" },
            },
      );
    }
    const lead = visitor % 5000;
    if (r < 0.95) {
      count("form_submit");
      return JSON.stringify({
        type: "form_submit",
        ...base,
        url: "https://shop.example/apply",
        contact: { email: `lead${lead}@example.com`, first_name: `Lead${lead}` },
        form: { title: pick(["Apply", "Newsletter", "Quote"]) },
      });
    }
    count("booking");
    return JSON.stringify({
      type: "booking",
      ...base,
      url: "https://shop.example/book",
      contact: {
        email: `lead${lead}@example.com`,
        name: `Lead ${lead}`,
        phone: `+3361234${String(lead).padStart(4, "0")}`,
      },
    });
  };
  return { next, mix };
}
