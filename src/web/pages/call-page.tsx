import { z } from "zod";
import { callById } from "../../queries/call-by-id.ts";
import { callTranscript } from "../../queries/call-transcript.ts";
import { recordingLocator } from "../../reports/recording.ts";
import { formatTime } from "../page-guard.tsx";
import { defineReportPage, PageNotFound, type ReportContext } from "../report-page.tsx";
import type { Column } from "../views/report-parts.tsx";

/** The call's artifact_id, refused as GET /calls/transcript refuses it. */
const params = z.object({
  id: z
    .string({ error: "is required" })
    .regex(/^\d{1,15}$/, "must be a positive integer")
    .transform(Number)
    .refine((n) => n > 0, "must be a positive integer"),
});

const SEGMENT_COLUMNS: readonly Column[] = [
  { key: "start_ms", label: "Start (ms)", kind: "count" },
  { key: "end_ms", label: "End (ms)", kind: "count" },
  { key: "speaker_label", label: "Speaker", kind: "text" },
  { key: "speaker_email", label: "Speaker email", kind: "text" },
  { key: "text", label: "Said", kind: "text" },
  { key: "confidence", label: "Confidence", kind: "rate" },
];

/** The recording's audio as GET /calls/recording hands it out; null when there is nothing to play. */
async function audioOf(ctx: ReportContext<{ id: number }>) {
  const found = await recordingLocator(ctx.tx, ctx.files, {
    accountId: ctx.tenant.accountId,
    artifactId: ctx.query.id,
    now: ctx.now,
  });
  return typeof found === "string" ? null : { url: found.audio_url, contentType: found.content_type };
}

/** `/calls/view?id=`: one call's analysis, its recording and its transcript. */
export const callPage = defineReportPage({
  path: "/calls/view",
  title: "Call",
  params,
  windowed: false,
  async load(ctx) {
    const call = await callById(ctx.tx, ctx.tenant.accountId, { artifactId: ctx.query.id });
    // Unknown here and another account's call read the same: nothing of it is shown.
    if (call === null) throw new PageNotFound("This account has no such call.");
    const transcript =
      (await callTranscript(ctx.tx, ctx.tenant.accountId, { artifactId: ctx.query.id })) ?? [];
    return { call, transcript, audio: await audioOf(ctx) };
  },
  tables: (data) => ({
    transcript: { caption: "Transcript", columns: SEGMENT_COLUMNS, rows: data.transcript },
  }),
  view: ({ data, formats, table }) => {
    const c = data.call;
    const yesNo = (v: boolean | null) => (v === null ? null : v ? "Yes" : "No");
    // The API's field, its label, its raw value (data-value) and how it reads.
    const facts: [string, string, unknown, string | null][] = [
      ["title", "Title", c.title, c.title],
      ["starts_at", "Started", c.starts_at, formatTime(c.starts_at, formats.timezone)],
      ["duration_sec", "Duration (seconds)", c.duration_sec, c.duration_sec?.toString() ?? null],
      ["call_type", "Type", c.call_type, c.call_type],
      ["rep_id", "Sales rep", c.rep_id, c.rep_id],
      ["summary", "Summary", c.summary, c.summary],
      ["is_qualified", "Qualified", c.is_qualified, yesNo(c.is_qualified)],
      ["qualification_reasoning", "Why", c.qualification_reasoning, c.qualification_reasoning],
      ["icp_fit_score", "Ideal-customer fit", c.icp_fit_score, c.icp_fit_score?.toString() ?? null],
      ["scorecard_total", "Scorecard", c.scorecard_total, c.scorecard_total?.toString() ?? null],
      ["next_step_type", "Next step", c.next_step_type, c.next_step_type],
      ["next_step_summary", "Next step, in short", c.next_step_summary, c.next_step_summary],
      ["next_step_proposed", "Next step proposed", c.next_step_proposed, c.next_step_proposed],
      ["call_analysis_id", "Analysis id", c.call_analysis_id, c.call_analysis_id],
    ];
    return (
      <>
        <p>
          <a href="/calls">Back to calls</a>
        </p>
        <section aria-labelledby="recording-title">
          <h2 id="recording-title">Recording</h2>
          {data.audio ? (
            // biome-ignore lint/a11y/useMediaCaption: audio only; its text alternative is the transcript below (WCAG 1.2.1)
            <audio controls preload="metadata" src={data.audio.url} aria-labelledby="recording-title">
              <a href={data.audio.url}>Download the recording</a>
            </audio>
          ) : (
            <p>No recording is stored for this call.</p>
          )}
        </section>
        <section aria-labelledby="call-title">
          <h2 id="call-title">Analysis</h2>
          <dl class="facts">
            {facts.map(([key, label, value, shown]) => (
              <>
                <dt>{label}</dt>
                <dd data-field={key} data-value={value === null ? "" : String(value)}>
                  {shown ?? "—"}
                </dd>
              </>
            ))}
          </dl>
          {c.markers.length > 0 && (
            <>
              <h3>Markers</h3>
              <ul class="markers">
                {c.markers.map((m) => (
                  <li>
                    {m.label}: {m.status} (at {m.ts})
                  </li>
                ))}
              </ul>
            </>
          )}
        </section>
        {data.transcript.length > 0 ? table("transcript") : <p>No transcript is stored for this call.</p>}
      </>
    );
  },
});
