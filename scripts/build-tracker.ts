/**
 * `npm run build:tracker`: builds track.js and prints its sizes; exits 1 when the served script is not
 * under the budget. The full variant's sizes are printed for comparison.
 */
import { buildTrackScript, TRACK_SCRIPT_BUDGET } from "../src/tracking/track-script.ts";

const served = await buildTrackScript();
const full = await buildTrackScript({ full: true });
const line = (name: string, s: { minifiedBytes: number; gzipBytes: number }) =>
  `${name}: ${s.minifiedBytes} bytes minified, ${s.gzipBytes} bytes gzip`;

console.log(line("track.js", served));
console.log(line("track.js, full variant (not served)", full));
if (served.minifiedBytes >= TRACK_SCRIPT_BUDGET) {
  console.error(
    `track.js is ${served.minifiedBytes} bytes minified: the budget is under ${TRACK_SCRIPT_BUDGET}.`,
  );
  process.exit(1);
}
console.log(`Under the budget of ${TRACK_SCRIPT_BUDGET} bytes minified.`);
