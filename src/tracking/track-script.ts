import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

/** SPEC "Tracking script behavior" 1, read as minified bytes (TRACKING.md, decisions). */
export const TRACK_SCRIPT_BUDGET = 5_000;

const ENTRY = fileURLToPath(new URL("../../tracker/src/track.ts", import.meta.url));

export interface TrackScript {
  code: string;
  /** The code, gzip level 9, for clients that accept it. */
  gzip: Buffer;
  minifiedBytes: number;
  gzipBytes: number;
  /** Strong: a hash of the code. */
  etag: string;
}

export interface TrackScriptOptions {
  /**
   * The full variant: the extras that do not fit the budget (tracker/src/track.ts lists them). The
   * served script is the budget one.
   */
  full?: boolean;
}

/** Builds track.js from tracker/src in-process: one minified IIFE for browsers of 2020 on. */
export async function buildTrackScript(options: TrackScriptOptions = {}): Promise<TrackScript> {
  const result = await build({
    entryPoints: [ENTRY],
    bundle: true,
    minify: true,
    format: "iife",
    // Optional chaining and object spread stay as written: transpiled, they cost hundreds of bytes.
    target: "es2020",
    write: false,
    legalComments: "none",
    charset: "utf8",
    // tracker/tsconfig.json is for type checking; its `strict` would only add "use strict".
    tsconfigRaw: "{}",
    define: { TRACK_FULL: String(options.full === true) },
    logLevel: "silent",
  });
  const code = result.outputFiles[0]?.text ?? "";
  const gzip = gzipSync(code, { level: 9 });
  return {
    code,
    gzip,
    minifiedBytes: Buffer.byteLength(code),
    gzipBytes: gzip.length,
    etag: `"${createHash("sha256").update(code).digest("base64url").slice(0, 27)}"`,
  };
}

let served: Promise<TrackScript> | undefined;

/** The served script, built once per process (a failed build is tried again on the next call). */
export function trackScript(): Promise<TrackScript> {
  served ??= buildTrackScript().catch((error: unknown) => {
    served = undefined;
    throw error;
  });
  return served;
}
