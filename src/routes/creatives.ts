import { z } from "zod";
import { creativeSchema, importToReserve } from "../creatives/import.ts";
import {
  authorizeUpload,
  UPLOAD_LABEL_MAX,
  UPLOAD_TTL_SECONDS,
  UPLOAD_TYPE_NAMES,
} from "../creatives/uploads.ts";
import { ackCreativeRequests } from "../queries/ack-creative-requests.ts";
import { CREATIVE_REQUEST_STATUSES, creativeRequests } from "../queries/creative-requests.ts";
import { flagParam, limitParam } from "../reports/window.ts";
import { defineRoute } from "./route-def.ts";
import { instant } from "./shapes.ts";

export const creativesRoutes = [
  defineRoute({
    methods: ["GET"],
    path: "/creatives/requests",
    scope: "read:creatives",
    input: z.object({
      status: z
        .enum(CREATIVE_REQUEST_STATUSES, { error: `must be one of ${CREATIVE_REQUEST_STATUSES.join(", ")}` })
        .optional(),
      unnotified: flagParam(),
      limit: limitParam(50, 200),
    }),
    output: z.array(
      z.object({
        id: z.string(),
        reason: z.string(),
        status: z.enum(CREATIVE_REQUEST_STATUSES),
        requested_count: z.number().int(),
        filled_count: z.number().int(),
        context: z.unknown(),
        created_at: instant(),
        notified_at: instant().nullable(),
      }),
    ),
    description:
      "Creative needs, oldest to newest: reason, status, requested and filled counts, context, when created and when relayed to a team. Without status, the needs in progress (open and partial); with it, only that status. unnotified = 1 or true: only needs never relayed. limit default 50, max 200.",
    handler: ({ tx, tenant, input }) =>
      creativeRequests(tx, tenant.accountId, {
        status: input.status,
        unnotified: input.unnotified,
        limit: input.limit,
      }),
  }),
  defineRoute({
    methods: ["POST"],
    path: "/creatives/requests/ack",
    scope: "write:creatives",
    input: z.object({ ids: z.array(z.guid()).min(1) }),
    required: { field: "ids", error: "missing ids (array of request UUIDs)", wholeValue: true },
    output: z.number().int().min(0),
    example: { ids: ["8b2f6c1e-4a7d-4e3b-9f10-5c2d7e9a1b34"] },
    description:
      "Acknowledges creative needs as relayed to a team: `ids`, a non-empty array of need ids. Sets notified_at on those never relayed before (the status is unchanged) and answers how many it marked, an integer; a replay answers 0.",
    handler: ({ tx, tenant, input, now }) =>
      ackCreativeRequests(tx, tenant.accountId, { ids: input.ids, now }),
  }),
  defineRoute({
    methods: ["POST"],
    path: "/creatives/upload-url",
    scope: "write:creatives",
    input: z.object({
      content_type: z.enum(UPLOAD_TYPE_NAMES, { error: `must be one of ${UPLOAD_TYPE_NAMES.join(", ")}` }),
      label: z
        .string()
        .max(UPLOAD_LABEL_MAX, { error: `at most ${UPLOAD_LABEL_MAX} characters` })
        .optional(),
    }),
    required: { field: "content_type", error: `content_type is required (${UPLOAD_TYPE_NAMES.join(", ")})` },
    output: z.object({
      asset_url: z.string().meta({ format: "uri" }),
      upload_url: z.string().meta({ format: "uri" }),
      token: z.string(),
      path: z.string(),
      content_type: z.enum(UPLOAD_TYPE_NAMES),
      expires_in: z.number().int(),
      max_bytes: z.number().int(),
    }),
    example: { content_type: "image/png", label: "Spring offer, square" },
    description: `Authorizes one creative upload: \`content_type\` (${UPLOAD_TYPE_NAMES.join(", ")}) and an optional \`label\` (at most ${UPLOAD_LABEL_MAX} characters, made a safe file name). Answers asset_url, upload_url, token, path, content_type, expires_in and max_bytes: PUT the file's bytes to upload_url with that Content-Type within ${UPLOAD_TTL_SECONDS / 60} minutes, once; then name asset_url in POST /creatives/import.`,
    handler: ({ tx, tenant, input, now, files }) =>
      authorizeUpload(tx, tenant.accountId, files, {
        contentType: input.content_type,
        label: input.label,
        now,
      }),
  }),
  defineRoute({
    methods: ["POST"],
    path: "/creatives/import",
    scope: "write:creatives",
    input: z.object({
      // A blank ref is a missing one.
      external_ref: z.preprocess(
        (v) => (typeof v === "string" && v.trim() === "" ? undefined : v),
        z.string().trim().max(200, { error: "at most 200 characters" }),
      ),
      creative: creativeSchema.optional(),
    }),
    required: { field: "external_ref", error: "external_ref is required" },
    output: z.object({
      id: z.string(),
      external_ref: z.string(),
      angle: z.string().nullable(),
      score: z.number().nullable(),
      en_attente: z.number().int(),
    }),
    example: {
      external_ref: "spring-offer-v1",
      creative: { angle: "Before/after", headline: "Ready in 30 days", asset_kind: "image" },
    },
    description:
      "Imports a creative into the reserve, unpublished: `external_ref` (your stable id, at most 200 characters) and `creative` { angle, primary_text, headline, hook, cta, destination_url, asset_url (exactly as /creatives/upload-url gave it, after the upload), asset_kind, variant_label, visual_subtype, funnel, product, audience, video_script, source }. An unknown ref creates a creative; the same ref again replaces its fields; a published creative is never changed (its id is answered). Publishes nothing, touches no budget, contacts no ad network. Answers id, external_ref, angle, score (null until computed) and en_attente (unpublished creatives in the reserve).",
    handler: ({ tx, tenant, input, now }) =>
      importToReserve(tx, tenant.accountId, {
        externalRef: input.external_ref,
        creative: input.creative ?? {},
        now,
      }),
  }),
];
