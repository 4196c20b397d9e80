import { z } from "zod";
import { ApiError } from "../http/errors.ts";
import { callTranscript } from "../queries/call-transcript.ts";
import { callsPage } from "../queries/calls-list.ts";
import { recordingLocator } from "../reports/recording.ts";
import { limitParam, offsetParam, optionalWindow, queryParamDocs, windowQuery } from "../reports/window.ts";
import { defineRoute } from "./route-def.ts";
import { instant, text } from "./shapes.ts";

/** SPEC "call": an analyzed call; `artifact_id` opens its transcript and recording. */
export const callShape = {
  artifact_id: z.number().int(),
  starts_at: instant(),
  title: text(),
  duration_sec: z.number().int().nullable(),
  call_analysis_id: text(),
  summary: text(),
  call_type: text(),
  is_qualified: z.boolean().nullable(),
  icp_fit_score: z.number().nullable(),
  qualification_reasoning: text(),
  next_step_type: text(),
  next_step_summary: text(),
  next_step_proposed: text(),
  scorecard_total: z.number().nullable(),
  rep_id: text(),
  markers: z.array(z.object({ ts: z.number(), label: z.string(), status: z.string() })),
};

const artifactId = z
  .string()
  .regex(/^\d{1,15}$/, "must be a positive integer")
  .transform(Number)
  .refine((n) => n > 0, "must be a positive integer");
queryParamDocs.add(artifactId, { type: "integer", minimum: 1 });

export const callsRoutes = [
  defineRoute({
    methods: ["GET"],
    path: "/calls",
    scope: "read:calls",
    input: windowQuery({ limit: limitParam(50, 200), offset: offsetParam() }),
    output: z.array(z.object(callShape)),
    description:
      "Analyzed calls, newest first: title, duration, summary, type, qualification and ICP fit, next step, scorecard, rep and markers; artifact_id opens the transcript and the recording. from/to on the call's start (no window without them); limit default 50, max 200; offset default 0.",
    handler: ({ tx, tenant, input, now }) =>
      callsPage(tx, tenant.accountId, {
        window: optionalWindow(input, tenant, now),
        limit: input.limit,
        offset: input.offset,
      }),
  }),
  defineRoute({
    methods: ["GET"],
    path: "/calls/transcript",
    scope: "read:calls",
    input: z.object({ id: artifactId.optional() }),
    output: z.array(
      z.object({
        idx: z.number().int(),
        start_ms: z.number().int(),
        end_ms: z.number().int(),
        speaker_id: text(),
        speaker_label: text(),
        speaker_email: text(),
        text: z.string(),
        confidence: z.number().nullable(),
      }),
    ),
    errors: ["forbidden"],
    example: { id: "699" },
    description:
      "A call's transcript (id = the call's artifact_id): its segments in order, each with start and end in ms, speaker and text. Without id, an empty array; a call that is not the account's → 403 forbidden.",
    handler: async ({ tx, tenant, input }) => {
      if (input.id === undefined) return [];
      const segments = await callTranscript(tx, tenant.accountId, { artifactId: input.id });
      if (segments === null) throw new ApiError("forbidden");
      return segments;
    },
  }),
  defineRoute({
    methods: ["GET"],
    path: "/calls/recording",
    scope: "read:calls",
    input: z.object({ id: artifactId }),
    // SPEC: missing or not positive → invalid_id, whatever is wrong with it.
    required: { field: "id", error: "invalid_id", wholeValue: true },
    output: z.object({
      artifact_id: z.number().int(),
      content_type: z.string(),
      expires_in: z.number().int(),
      audio_url: z.string().meta({ format: "uri" }),
      video_url: z.string().meta({ format: "uri" }).nullable(),
      has_video: z.boolean(),
    }),
    errors: ["forbidden", "no_recording_available"],
    example: { id: "699" },
    description:
      "A playable link to a call's recording (id = the call's artifact_id): signed audio (and video) URLs valid one hour, which audio players can seek in; the API never returns the file itself. id missing or not positive → 400 invalid_id; a call that is not the account's → 403 forbidden; no file → 404 no_recording_available.",
    handler: async ({ tx, tenant, input, now, files }) => {
      const found = await recordingLocator(tx, files, {
        accountId: tenant.accountId,
        artifactId: input.id,
        now,
      });
      if (found === "no_call") throw new ApiError("forbidden");
      if (found === "no_file") throw new ApiError("no_recording_available");
      return found;
    },
  }),
];
