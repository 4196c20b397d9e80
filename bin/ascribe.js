#!/usr/bin/env node
// Runs the TypeScript sources through tsx: no build step between a checkout and a running service.
import { register } from "tsx/esm/api";

register();
const { runCli } = await import("../src/cli/main.ts");
await runCli(process.argv);
