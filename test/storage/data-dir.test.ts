import assert from "node:assert/strict";
import { chmod, mkdir, mkdtemp, rm, stat, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { after, before, describe, test } from "node:test";
import { loadOrCreateKeyring } from "../../src/crypto/secret-box.ts";
import { secureDataDir } from "../../src/storage/data-dir.ts";
import { createLocalObjectStore } from "../../src/storage/local-store.ts";
import { notPrivate, walkModes } from "../helpers/file-modes.ts";
import { TEST_SITE_URL, testSecrets } from "../helpers/harness.ts";

const ACCOUNT = "0a0a0a0a-0000-4000-8000-00000000000a";

let scratch: string;
let original: number;
before(async () => {
  scratch = await mkdtemp(join(tmpdir(), "ascribe-modes-"));
  original = process.umask();
});
after(async () => {
  process.umask(original);
  await rm(scratch, { recursive: true, force: true });
});

/** A file with exactly `mode`, whatever the umask. */
async function fileWithMode(path: string, mode: number, content = "x") {
  await writeFile(path, content);
  await chmod(path, mode);
}

const modeOf = async (path: string) => (await stat(path)).mode & 0o7777;

describe("DATA_DIR modes", () => {
  test("the object store writes 0600 files in 0700 folders under umask 0", async () => {
    const root = join(scratch, "store", "files");
    const store = createLocalObjectStore({ root, secrets: testSecrets, siteUrl: () => TEST_SITE_URL });
    process.umask(0);
    try {
      await store.put(ACCOUNT, "calls/2026/one.wav", Buffer.from("RIFF"));
      await store.write(ACCOUNT, "creatives/two.png", Readable.from([Buffer.from("PNG")]), { maxBytes: 100 });
    } finally {
      process.umask(original);
    }
    const entries = await walkModes(root);
    assert.deepEqual(
      entries.filter((e) => e.kind === "file").map((e) => e.path),
      [`${ACCOUNT}/calls/2026/one.wav`, `${ACCOUNT}/creatives/two.png`],
    );
    assert.deepEqual(notPrivate(entries), []);
  });

  test("an earlier DATA_DIR is narrowed to 0700/0600, bits only removed, links not followed", async () => {
    const dataDir = join(scratch, "earlier");
    const outside = join(scratch, "outside.txt");
    await mkdir(join(dataDir, "pgdata", "base"), { recursive: true });
    await mkdir(join(dataDir, "files", ACCOUNT), { recursive: true });
    await fileWithMode(outside, 0o644);
    await fileWithMode(join(dataDir, "pgdata", "base", "1259"), 0o666);
    await fileWithMode(join(dataDir, "files", ACCOUNT, "call.wav"), 0o644);
    await fileWithMode(join(dataDir, "secret.key"), 0o644);
    await fileWithMode(join(dataDir, "read-only.txt"), 0o400);
    await symlink(outside, join(dataDir, "files", "link"));
    for (const dir of ["", "pgdata", "pgdata/base", "files", `files/${ACCOUNT}`]) {
      await chmod(join(dataDir, dir), dir === "pgdata" ? 0o777 : 0o755);
    }

    const report = await secureDataDir(dataDir);

    assert.equal(report.tightened, 8, "5 folders and 3 files were wider");
    assert.deepEqual(report.skipped, []);
    const entries = await walkModes(dataDir);
    assert.deepEqual(
      notPrivate(entries),
      ["0400 file read-only.txt"],
      "everything is private; 0400 stays 0400 (bits are only removed)",
    );
    assert.equal(await modeOf(outside), 0o644, "the link's target outside DATA_DIR is untouched");
  });

  test("a secret.key others could write is left as it is, for the keyring to refuse", async () => {
    const dataDir = join(scratch, "writable-key");
    await mkdir(dataDir, { recursive: true });
    const key = join(dataDir, "secret.key");
    await fileWithMode(
      key,
      0o666,
      JSON.stringify({ keys: [{ id: "k1", key: Buffer.alloc(32, 1).toString("base64") }] }),
    );
    const warnings: string[] = [];

    const report = await secureDataDir(dataDir, (m) => warnings.push(m));

    assert.equal(await modeOf(key), 0o666);
    assert.equal(report.skipped.length, 1);
    assert.match(warnings.join("\n"), /DATA_DIR: 1 entries could not be made private: .*secret\.key/);
    await assert.rejects(
      loadOrCreateKeyring({ envValue: null, dataDir }),
      /secret\.key is writable by group or others/,
    );
  });

  test("after it, files the process creates anywhere in DATA_DIR are 0600 and folders 0700", async () => {
    const dataDir = join(scratch, "fresh");
    process.umask(0);
    await secureDataDir(dataDir);
    // What PGlite does: plain fs calls with the default modes (0666 / 0777).
    await mkdir(join(dataDir, "pgdata", "pg_wal"), { recursive: true });
    await writeFile(join(dataDir, "pgdata", "pg_wal", "000000010000000000000001"), "wal");
    process.umask(original);
    assert.deepEqual(notPrivate(await walkModes(dataDir)), []);
  });
});
