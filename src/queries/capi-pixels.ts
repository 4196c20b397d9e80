import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";
import { ownedRows } from "../http/barrier.ts";
import { isoMs } from "./sql-format.ts";

export interface PixelRow {
  account_id: string;
  id: string;
  platform: string;
  pixel_id: string;
  name: string | null;
  is_default: boolean;
  /** Whether an access token is stored (the token itself never leaves the database). */
  connected: boolean;
  routing: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

/**
 * The account's ad-network pixels and the default one. Selected column by column: the sealed
 * access token is never read.
 */
export async function capiPixels(db: Sql, accountId: string) {
  const pixels = ownedRows(
    await rows<PixelRow>(
      db,
      sql`
      select p.account_id, p.id::text as id, p.platform, p.pixel_id, p.name, p.is_default,
             p.access_token_sealed is not null as connected, p.routing,
             ${isoMs(sql`p.created_at`)} as created_at, ${isoMs(sql`p.updated_at`)} as updated_at
      from pixels p
      where p.account_id = ${accountId}
      order by p.platform, p.pixel_id`,
    ),
  );
  return { pixels, default: pixels.find((p) => p.is_default) ?? null };
}
