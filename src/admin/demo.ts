import { z } from "zod";
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Database } from "../db/client.ts";
import { type DemoProgress, writeDemo } from "../demo/write.ts";
import { foldBacklog } from "../import/fold-backlog.ts";
import type { ObjectStore } from "../storage/object-store.ts";
import { createAccount } from "./accounts.ts";
import { createKey } from "./keys.ts";

export const demoInput = z.object({
  seed: z.coerce.number().int().min(0).default(1),
  /** Days of history, ending yesterday. */
  days: z.coerce.number().int().min(7).max(365).default(90),
  /** Volume multiplier: 1 ≈ 2,100 contacts; 100 ≥ 1,000,000 CRM events. */
  scale: z.coerce.number().min(0.1).max(200).default(1),
});

export const DEMO_OWNER = "owner@demo.ascribe.local";

export const DEMO_TIMEZONE = "Europe/Paris";

export interface SeedDemoOptions {
  /** YYYY-MM-DD; default: today in the demo account's timezone. Same seed and `today`, same rows. */
  today?: string;
  /** Seals the pixels' fake access tokens; without it the pixels are stored with no token. */
  secrets?: SecretBox;
  /** Where to store the calls' small WAV recordings (at their `audio_path`); none without it. */
  files?: ObjectStore;
}

/** Today's date in a timezone, YYYY-MM-DD. */
export function todayIn(timezone: string, now = new Date()): string {
  return new Intl.DateTimeFormat("en-CA", {
    timeZone: timezone,
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
  }).format(now);
}

/**
 * The demo account: owner, full-scope key, and the deterministic data set of `src/demo` (ads and spend,
 * contacts and their journeys, the sales funnel, calls, customers, pixels, rules, creatives, goals, ICP).
 */
export async function seedDemo(
  db: Database,
  input: z.input<typeof demoInput>,
  progress?: (p: DemoProgress) => void,
  options: SeedDemoOptions = {},
) {
  const { seed, days, scale } = demoInput.parse(input);
  const today = options.today ?? todayIn(DEMO_TIMEZONE);
  const account = await createAccount(db, {
    name: `Demo Company ${seed}`,
    plan: "business",
    timezone: DEMO_TIMEZONE,
    currency: "EUR",
    owner: DEMO_OWNER,
  });
  const key = await createKey(db, {
    account: account.id,
    as: DEMO_OWNER,
    name: "Demo key (full scope)",
    scopes: ["*"],
  });
  await writeDemo(
    db,
    account.id,
    { seed, days, scale, today },
    { secrets: options.secrets, files: options.files, progress },
  );
  // Reports fold pending rollup deltas before reading: do it now, not on the first request.
  await foldBacklog(db, account.id);
  // …and the embedded database's vacuum and statistics after the bulk load, not in the first minute of serving.
  await db.maintain({ afterBulkWrite: true });
  return { account_id: account.id, client_key: account.client_key, key: key.key };
}
