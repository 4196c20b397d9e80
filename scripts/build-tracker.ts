/**
 * `npm run build:tracker`: builds track.js and prints its sizes; exits 1 above the CI limit (gzip
 * bytes, a ratchet under the 5,000-byte budget of TRACKING.md, Decisions).
 */
import {
  buildTrackScript,
  TRACK_SCRIPT_BUDGET,
  TRACK_SCRIPT_CI_LIMIT,
} from "../src/tracking/track-script.ts";

const { minifiedBytes, gzipBytes } = await buildTrackScript();
console.log(`track.js: ${minifiedBytes} bytes minified, ${gzipBytes} bytes gzip`);
if (gzipBytes > TRACK_SCRIPT_CI_LIMIT) {
  console.error(
    `track.js is ${gzipBytes} bytes gzip: the limit is ${TRACK_SCRIPT_CI_LIMIT} (budget: under ${TRACK_SCRIPT_BUDGET}).`,
  );
  process.exit(1);
}
console.log(
  `Within the CI limit of ${TRACK_SCRIPT_CI_LIMIT} bytes gzip (budget: under ${TRACK_SCRIPT_BUDGET} bytes gzip).`,
);
