import { readMigrationFiles } from "drizzle-orm/migrator";

const shippedByFolder = new Map<string, number[]>();

/**
 * How many of the migrations a build ships (`folder`) a database still lacks, given the newest one
 * it recorded (drizzle's `created_at`, the migration's journal time). drizzle applies every shipped
 * migration newer than the last one recorded, so this is the same comparison it makes.
 */
export function migrationLag(folder: string, lastApplied: number): { behind: number; shipped: number } {
  let shipped = shippedByFolder.get(folder);
  if (!shipped) {
    shipped = readMigrationFiles({ migrationsFolder: folder }).map((m) => m.folderMillis);
    shippedByFolder.set(folder, shipped);
  }
  return { behind: shipped.filter((when) => when > lastApplied).length, shipped: shipped.length };
}
