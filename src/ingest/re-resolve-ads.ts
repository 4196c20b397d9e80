import { buildAdIndex, resolveAd } from "../attribution/ad-resolution.ts";
import type { Sql } from "../db/client.ts";
import { knownAds } from "../queries/known-ads.ts";
import { type ResolutionUpdate, resolutionInputs, updateResolutions } from "../queries/resolution-inputs.ts";

const WRITE_CHUNK = 1000;

/**
 * Resolves every event and touchpoint of the account again against its current ads (after ads were
 * added, renamed or excluded) and writes only what changed. Returns how many rows changed.
 */
export async function reResolveAds(tx: Sql, accountId: string): Promise<number> {
  const index = buildAdIndex(await knownAds(tx, accountId));
  const changed: Record<"events" | "touchpoints", ResolutionUpdate[]> = { events: [], touchpoints: [] };
  for (const row of await resolutionInputs(tx, accountId)) {
    const r = resolveAd(row, index);
    const ad = r.method === "unresolved" ? null : r.ad;
    const next = {
      resolution: r.method,
      resolved_platform: ad?.platform ?? null,
      resolved_ad_id: ad?.ad_id ?? null,
    };
    if (
      next.resolution !== row.resolution ||
      next.resolved_platform !== row.resolved_platform ||
      next.resolved_ad_id !== row.resolved_ad_id
    ) {
      changed[row.table].push({ id: row.id, ...next });
    }
  }
  for (const table of ["events", "touchpoints"] as const) {
    const updates = changed[table];
    for (let i = 0; i < updates.length; i += WRITE_CHUNK) {
      await updateResolutions(tx, accountId, { table, updates: updates.slice(i, i + WRITE_CHUNK) });
    }
  }
  return changed.events.length + changed.touchpoints.length;
}
