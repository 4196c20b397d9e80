import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { MIGRATIONS_DIR } from "../../src/db/client.ts";

/** A digest of every migration file (names and contents) and of `extra`: a migrated template's identity. */
export function migrationsDigest(extra = ""): string {
  const digest = createHash("sha256").update(extra);
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else digest.update(entry.name).update(readFileSync(path));
    }
  };
  walk(MIGRATIONS_DIR);
  return digest.digest("hex").slice(0, 16);
}
