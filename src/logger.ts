import pino, { type DestinationStream, type Logger } from "pino";
import pinoPretty from "pino-pretty";
import type { Config } from "./config.ts";
import { serializeLoggedError } from "./db/query-error.ts";

// A failed query is logged without the values bound to it (contacts' emails and names).
const serializers = { err: serializeLoggedError };

/**
 * The service's logger on stdout. `json`: pino's JSON lines only, for a collector. `pretty`: one
 * readable line per entry for a person at a terminal (pino-pretty, in this thread and synchronous:
 * it is the development format, and a line printed just before an exit is not lost).
 */
export function createLogger(
  config: Pick<Config, "logLevel" | "logFormat">,
  destination?: DestinationStream,
): Logger {
  if (config.logFormat === "json") return pino({ level: config.logLevel, serializers }, destination);
  const pretty = pinoPretty({
    sync: true,
    singleLine: true,
    translateTime: "SYS:HH:MM:ss.l",
    ignore: "pid,hostname",
    ...(destination ? { destination } : {}),
  });
  return pino({ level: config.logLevel, serializers }, pretty);
}
