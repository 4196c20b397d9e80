#!/usr/bin/env node
// Runs the compiled dist/ when it is a build of the current src/ (npm install builds it, `npm run
// build` rebuilds it). Otherwise — src/ edited since, or never built — the sources run through tsx:
// slower to start, but never stale code.
import { buildState } from "./build-state.js";

const state = buildState();
let cli;
if (state === "current") {
  process.setSourceMapsEnabled(true);
  cli = await import("../dist/cli/main.js");
} else {
  if (state === "stale" && process.stderr.isTTY) {
    process.stderr.write(
      "ascribe: src/ changed since the last build; running it through tsx (npm run build)\n",
    );
  }
  const { register } = await import("tsx/esm/api");
  register();
  cli = await import("../src/cli/main.ts");
}
await cli.runCli(process.argv);
