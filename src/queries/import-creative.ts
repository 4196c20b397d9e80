import { sql } from "drizzle-orm";
import { rows, type Sql } from "../db/client.ts";

/** The recognized fields of a creative (SPEC "Resource: creative"); absent ones are stored as null. */
export interface CreativeFields {
  angle?: string | null;
  primary_text?: string | null;
  headline?: string | null;
  hook?: string | null;
  cta?: string | null;
  destination_url?: string | null;
  asset_url?: string | null;
  asset_kind?: "image" | "video" | null;
  variant_label?: string | null;
  visual_subtype?: string | null;
  funnel?: string | null;
  product?: string | null;
  audience?: string | null;
  video_script?: string | null;
  source?: Record<string, unknown> | null;
}

export interface ImportedCreative {
  id: string;
  external_ref: string;
  angle: string | null;
  score: number | null;
  /** false: the creative was already published, and was left as it was. */
  written: boolean;
}

/**
 * Creates the account's creative for `external_ref` in the reserve (unpublished), or replaces the
 * fields of the unpublished one it already has; a published creative is never written and its row
 * is answered as it is. One statement, on the (account, external_ref) unique index: concurrent
 * imports of one ref make one creative.
 */
export async function importCreative(
  db: Sql,
  accountId: string,
  params: { externalRef: string; creative: CreativeFields },
): Promise<ImportedCreative> {
  const c = params.creative;
  const [row] = await rows<ImportedCreative>(
    db,
    sql`
    with written as (
      insert into creatives (account_id, id, external_ref, angle, primary_text, headline, hook, cta,
        destination_url, asset_url, asset_kind, variant_label, visual_subtype, funnel, product,
        audience, video_script, source)
      values (${accountId}, gen_random_uuid(), ${params.externalRef}, ${c.angle ?? null},
        ${c.primary_text ?? null}, ${c.headline ?? null}, ${c.hook ?? null}, ${c.cta ?? null},
        ${c.destination_url ?? null}, ${c.asset_url ?? null}, ${c.asset_kind ?? null},
        ${c.variant_label ?? null}, ${c.visual_subtype ?? null}, ${c.funnel ?? null},
        ${c.product ?? null}, ${c.audience ?? null}, ${c.video_script ?? null},
        ${c.source === undefined || c.source === null ? null : JSON.stringify(c.source)}::jsonb)
      on conflict (account_id, external_ref) do update set
        angle = excluded.angle, primary_text = excluded.primary_text, headline = excluded.headline,
        hook = excluded.hook, cta = excluded.cta, destination_url = excluded.destination_url,
        asset_url = excluded.asset_url, asset_kind = excluded.asset_kind,
        variant_label = excluded.variant_label, visual_subtype = excluded.visual_subtype,
        funnel = excluded.funnel, product = excluded.product, audience = excluded.audience,
        video_script = excluded.video_script, source = excluded.source, updated_at = now()
      where not creatives.is_published
      returning id::text as id, external_ref, angle, score::float8 as score, true as written
    )
    select * from written
    union all
    select k.id::text, k.external_ref, k.angle, k.score::float8, false
    from creatives k
    where k.account_id = ${accountId} and k.external_ref = ${params.externalRef}
      and not exists (select 1 from written)`,
  );
  if (!row) throw new Error("import wrote nothing and found nothing");
  return row;
}
