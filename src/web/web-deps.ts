import type { SecretBox } from "../crypto/secret-box.ts";
import type { Database } from "../db/client.ts";
import type { CounterStore } from "../http/rate-limiter.ts";
import type { Mailer } from "../people/mailer.ts";
import type { SessionStore } from "../people/session-store.ts";
import type { ObjectStore } from "../storage/object-store.ts";

/** What the application's pages run with (built by main.ts, like the API's). */
export interface WebDeps {
  db: Database;
  secrets: SecretBox;
  counters: CounterStore;
  mailer: Mailer;
  /** Sessions behind the cookies: cached on the embedded database (this process its only writer). */
  sessions: SessionStore;
  files: ObjectStore;
  siteUrl: () => string;
  clock: () => Date;
}
