import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createCipheriv, randomBytes } from "node:crypto";
import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import {
  createSecretBox,
  generateKeyringValue,
  loadOrCreateKeyring,
  type SecretBoxFailure,
  type SecretKey,
} from "../../src/crypto/secret-box.ts";

const KEY_A: SecretKey = { id: "a", key: Buffer.alloc(32, 0x01) };
const KEY_B: SecretKey = { id: "b2", key: Buffer.alloc(32, 0xb2) };
const CONTEXT = "pixel:acct_1:px_1";
const PLAINTEXT = "tok_live_123";

let root: string;
before(async () => {
  root = await mkdtemp(join(tmpdir(), "ascribe-secret-box-"));
});
after(async () => {
  await rm(root, { recursive: true, force: true });
});
let dirs = 0;
const freshDir = () => join(root, `d${++dirs}`);

/** Asserts `fn` throws for `reason` and that the message leaks none of `secrets`. */
function assertRefused(fn: () => unknown, reason: SecretBoxFailure, secrets: string[]) {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof Error);
    assert.equal((err as { reason?: unknown }).reason, reason, err.message);
    for (const secret of secrets) assert.ok(!err.message.includes(secret), `message leaks "${secret}"`);
    return true;
  });
}
const LEAKS = [
  PLAINTEXT,
  CONTEXT,
  KEY_A.key.toString("base64"),
  KEY_A.key.toString("hex"),
  KEY_A.key.toString("base64url"),
];

/** Flips one bit of the byte at `index` (negative: from the end) of a base64url segment. */
function flipBit(segment: string, index: number): string {
  const bytes = Buffer.from(segment, "base64url");
  const at = index < 0 ? bytes.length + index : index;
  bytes[at] = (bytes[at] ?? 0) ^ 0x01;
  return bytes.toString("base64url");
}

test("known answer: a fixed key, IV and context give the token computed with node:crypto directly", () => {
  const iv = Buffer.alloc(12, 0x02);
  const box = createSecretBox([KEY_A], undefined, () => Buffer.from(iv));
  const cipher = createCipheriv("aes-256-gcm", Buffer.alloc(32, 0x01), iv);
  cipher.setAAD(Buffer.from(CONTEXT, "utf8"));
  const body = Buffer.concat([cipher.update(PLAINTEXT, "utf8"), cipher.final(), cipher.getAuthTag()]);
  const expected = `v1.a.${iv.toString("base64url")}.${body.toString("base64url")}`;
  assert.equal(box.seal(PLAINTEXT, CONTEXT), expected);
  // Pinned too (cross-checked with Python's cryptography AESGCM), so the format cannot drift.
  assert.equal(expected, "v1.a.AgICAgICAgICAgIC.c7miFiY-t5iM_Y77GketL7E7Y4SRvRENeziqNQ");
  assert.equal(box.open(expected, CONTEXT), PLAINTEXT);
});

test("round trip: ASCII, Unicode and the empty string", () => {
  const box = createSecretBox([KEY_A]);
  for (const plaintext of ["whsec_abc123", "Grüße, 東京 🚀 \u0000 tab\tend", ""]) {
    const sealed = box.seal(plaintext, CONTEXT);
    assert.match(sealed, /^v1\.a\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
    assert.ok(!sealed.includes(plaintext) || plaintext === "");
    assert.equal(box.open(sealed, CONTEXT), plaintext);
  }
  // The empty plaintext is still authenticated: 16 tag bytes, 22 base64url characters.
  assert.equal(box.seal("", CONTEXT).split(".")[3]?.length, 22);
});

test("two seals of the same plaintext differ: a random IV each time", () => {
  const box = createSecretBox([KEY_A]);
  const one = box.seal(PLAINTEXT, CONTEXT);
  const two = box.seal(PLAINTEXT, CONTEXT);
  assert.notEqual(one, two);
  assert.notEqual(one.split(".")[2], two.split(".")[2]);
  assert.equal(box.open(two, CONTEXT), PLAINTEXT);
});

test("a token does not open under another context, or once any part is altered", () => {
  const box = createSecretBox([KEY_A]);
  const sealed = box.seal(PLAINTEXT, CONTEXT);
  const [version = "", id = "", iv = "", body = ""] = sealed.split(".");
  const leaks = [...LEAKS, "pixel:acct_2:px_1"];

  assertRefused(() => box.open(sealed, "pixel:acct_2:px_1"), "not-authentic", leaks);
  assertRefused(() => box.open(sealed, ""), "not-authentic", leaks);
  assertRefused(
    () => box.open(`${version}.${id}.${iv}.${flipBit(body, 0)}`, CONTEXT),
    "not-authentic",
    leaks,
  );
  assertRefused(
    () => box.open(`${version}.${id}.${iv}.${flipBit(body, -1)}`, CONTEXT),
    "not-authentic",
    leaks,
  );
  assertRefused(
    () => box.open(`${version}.${id}.${flipBit(iv, 3)}.${body}`, CONTEXT),
    "not-authentic",
    leaks,
  );
  // One byte short of the tag: the last ciphertext byte is read as tag.
  const short = Buffer.from(body, "base64url").subarray(0, -1).toString("base64url");
  assertRefused(() => box.open(`${version}.${id}.${iv}.${short}`, CONTEXT), "not-authentic", leaks);
});

test("malformed tokens, unknown key ids and other versions are refused by name", () => {
  const box = createSecretBox([KEY_A]);
  const sealed = box.seal(PLAINTEXT, CONTEXT);
  const [, , iv = "", body = ""] = sealed.split(".");

  assertRefused(() => box.open(sealed.slice(0, 20), CONTEXT), "malformed", LEAKS);
  assertRefused(() => box.open(`v1.a.${iv}`, CONTEXT), "malformed", LEAKS);
  assertRefused(() => box.open(`${sealed}.x`, CONTEXT), "malformed", LEAKS);
  assertRefused(() => box.open("", CONTEXT), "malformed", LEAKS);
  assertRefused(
    () => box.open(`v1.a.${iv}.${Buffer.alloc(15).toString("base64url")}`, CONTEXT),
    "malformed",
    [],
  );
  assertRefused(() => box.open(`v1.a.${iv.slice(0, -2)}.${body}`, CONTEXT), "malformed", LEAKS);
  assertRefused(() => box.open(`v1.a.${iv}.${body}!`, CONTEXT), "malformed", LEAKS);
  assertRefused(() => box.open(`v1.A.${iv}.${body}`, CONTEXT), "malformed", LEAKS);
  // A plaintext handed to open() by mistake is not repeated in the error.
  assertRefused(() => box.open(PLAINTEXT, CONTEXT), "malformed", LEAKS);
  assertRefused(() => box.open(`${PLAINTEXT}.${PLAINTEXT}.x.y`, CONTEXT), "malformed", LEAKS);

  assertRefused(() => box.open(`v1.zz.${iv}.${body}`, CONTEXT), "unknown-key", LEAKS);
  assert.throws(() => box.open(`v1.zz.${iv}.${body}`, CONTEXT), /key id "zz"/);
  assertRefused(() => box.open(`v2.a.${iv}.${body}`, CONTEXT), "unsupported-version", LEAKS);
  assert.throws(() => box.open(`v2.a.${iv}.${body}`, CONTEXT), /unsupported version "v2"/);
  assertRefused(() => box.open(`V1.a.${iv}.${body}`, CONTEXT), "malformed", LEAKS);
});

test("rotation: old tokens open with the key they name; new ones are sealed with the active key", () => {
  const before = createSecretBox([KEY_A]).seal(PLAINTEXT, CONTEXT);
  assert.equal(before.split(".")[1], "a");

  const rotated = createSecretBox([KEY_B, KEY_A]);
  assert.equal(rotated.open(before, CONTEXT), PLAINTEXT);
  const after = rotated.seal(PLAINTEXT, CONTEXT);
  assert.equal(after.split(".")[1], "b2");
  assert.equal(rotated.open(after, CONTEXT), PLAINTEXT);
  // Sealed with B: a box without B cannot open it.
  assertRefused(() => createSecretBox([KEY_A]).open(after, CONTEXT), "unknown-key", LEAKS);

  const explicit = createSecretBox([KEY_A, KEY_B], "b2");
  assert.equal(explicit.seal("x", CONTEXT).split(".")[1], "b2");

  // The key id decides the key: a token relabelled with another id does not open.
  const relabelled = before.replace(/^v1\.a\./, "v1.b2.");
  assertRefused(() => rotated.open(relabelled, CONTEXT), "not-authentic", LEAKS);
});

test("createSecretBox refuses a keyring it cannot use", () => {
  assert.throws(() => createSecretBox([]), /keyring is empty/);
  assert.throws(() => createSecretBox([KEY_A], "nope"), /active secret key id "nope" is not in the keyring/);
  assert.throws(() => createSecretBox([KEY_A, { ...KEY_B, id: "a" }]), /"a" appears twice/);
  assert.throws(() => createSecretBox([{ id: "A-1", key: KEY_A.key }]), /id must be 1-16 of a-z, 0-9/);
  assert.throws(() => createSecretBox([{ id: "x", key: Buffer.alloc(31) }]), /is 31 bytes; expected 32/);
  assert.throws(() => createSecretBox([KEY_A], undefined, () => Buffer.alloc(16)).seal("x", CONTEXT), /IV/);
});

test("the box keeps its own copy of the key", () => {
  const key = Buffer.alloc(32, 0x07);
  const box = createSecretBox([{ id: "c", key }]);
  const sealed = box.seal(PLAINTEXT, CONTEXT);
  key.fill(0);
  assert.equal(box.open(sealed, CONTEXT), PLAINTEXT);
});

const b64 = (bytes: number, fill = 0x11) => Buffer.alloc(bytes, fill).toString("base64");

test("env keyring: parsed in order, first active, whitespace around entries ignored", async () => {
  const dataDir = freshDir();
  const keys = await loadOrCreateKeyring({
    envValue: ` new:${b64(32, 0x22)} , old:${b64(32, 0x33)}`,
    dataDir,
  });
  assert.deepEqual(
    keys.map((k) => k.id),
    ["new", "old"],
  );
  assert.deepEqual(keys[0]?.key, Buffer.alloc(32, 0x22));
  assert.deepEqual(keys[1]?.key, Buffer.alloc(32, 0x33));
  // An env keyring writes nothing to DATA_DIR.
  await assert.rejects(stat(dataDir), { code: "ENOENT" });
});

test("env keyring errors say what is wrong and never echo key material", async () => {
  const dataDir = freshDir();
  const shortKey = b64(31, 0x44);
  const cases: [string, RegExp][] = [
    ["", /ASCRIBE_SECRET_KEYS is empty/],
    [" , ", /ASCRIBE_SECRET_KEYS is empty/],
    [`a:${b64(32)},`, /ASCRIBE_SECRET_KEYS entry 2 is empty/],
    [`a:${shortKey}`, /entry 1 \(id "a"\): key is 31 bytes; expected 32/],
    [`a:${b64(33, 0x45)}`, /entry 1 \(id "a"\): key is 33 bytes; expected 32/],
    [`a:${b64(32).slice(0, -1)}!`, /entry 1 \(id "a"\): key is not valid padded base64/],
    [`a:${b64(32).replace(/=$/, "")}`, /entry 1 \(id "a"\): key is not valid padded base64/],
    [`a:${Buffer.alloc(32, 0xfb).toString("base64url")}`, /key is not valid padded base64/],
    [`a:${b64(32)},a:${b64(32, 0x12)}`, /entry 2: duplicate key id "a"/],
    [`Key_1:${b64(32)}`, /entry 1: key id must be 1-16 characters of a-z and 0-9/],
    [`${"a".repeat(17)}:${b64(32)}`, /entry 1: key id must be 1-16 characters of a-z and 0-9/],
    [`:${b64(32)}`, /entry 1: key id must be 1-16 characters/],
    [b64(32, 0x46), /entry 1: expected id:base64key/],
  ];
  for (const [envValue, expected] of cases) {
    await assert.rejects(loadOrCreateKeyring({ envValue, dataDir }), (err: unknown) => {
      assert.ok(err instanceof Error);
      assert.match(err.message, expected, `for ${JSON.stringify(envValue)}`);
      assert.match(err.message, /ASCRIBE_SECRET_KEYS/);
      const material = envValue.split(",").map((entry) => entry.slice(entry.indexOf(":") + 1));
      for (const m of material) if (m.length > 8) assert.ok(!err.message.includes(m), "echoes the key");
      assert.ok(!err.message.includes(shortKey.slice(0, 12)));
      return true;
    });
  }
});

test("generateKeyringValue gives an entry the env parser accepts, fresh each time", async () => {
  const one = generateKeyringValue();
  const two = generateKeyringValue();
  assert.match(one, /^[a-z0-9]{1,16}:[A-Za-z0-9+/]{43}=$/);
  assert.notEqual(one, two);
  const keys = await loadOrCreateKeyring({ envValue: `${one},${two}`, dataDir: freshDir() });
  assert.equal(keys.length, 2);
  assert.equal(keys[0]?.key.toString("base64"), one.split(":")[1]);
});

test("DATA_DIR: created 0600 on first start, the same key on the next", async () => {
  const dataDir = freshDir();
  const first = await loadOrCreateKeyring({ envValue: null, dataDir });
  assert.equal(first.length, 1);
  assert.equal(first[0]?.key.length, 32);
  assert.match(first[0]?.id ?? "", /^[a-z0-9]{1,16}$/);
  const path = join(dataDir, "secret.key");
  if (process.platform !== "win32") assert.equal((await stat(path)).mode & 0o777, 0o600);
  assert.deepEqual(JSON.parse(await readFile(path, "utf8")), {
    keys: [{ id: first[0]?.id, key: first[0]?.key.toString("base64") }],
  });
  // No temp file left behind.
  assert.deepEqual(await readdir(dataDir), ["secret.key"]);

  const second = await loadOrCreateKeyring({ envValue: null, dataDir });
  assert.deepEqual(second, first);
  // And the box built from the reloaded keyring opens what the first sealed.
  const sealed = createSecretBox(first).seal(PLAINTEXT, CONTEXT);
  assert.equal(createSecretBox(second).open(sealed, CONTEXT), PLAINTEXT);
});

test("DATA_DIR: concurrent first starts end with one key", async () => {
  const dataDir = freshDir();
  const rings = await Promise.all(
    Array.from({ length: 8 }, () => loadOrCreateKeyring({ envValue: null, dataDir })),
  );
  for (const ring of rings) assert.deepEqual(ring, rings[0]);
  assert.deepEqual(await readdir(dataDir), ["secret.key"]);
  const onDisk = JSON.parse(await readFile(join(dataDir, "secret.key"), "utf8")) as { keys: unknown[] };
  assert.equal(onDisk.keys.length, 1);
});

const run = promisify(execFile);
const MODULE = fileURLToPath(new URL("../../src/crypto/secret-box.ts", import.meta.url));

test("DATA_DIR: concurrent first starts in separate processes end with one key", async () => {
  const dataDir = freshDir();
  const script = `import { loadOrCreateKeyring } from ${JSON.stringify(MODULE)};
const [k] = await loadOrCreateKeyring({ envValue: null, dataDir: ${JSON.stringify(dataDir)} });
console.log(k.id + ":" + k.key.toString("base64"));`;
  const outputs = await Promise.all(
    Array.from({ length: 4 }, () =>
      run(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script]),
    ),
  );
  const keys = new Set(outputs.map((o) => o.stdout.trim()));
  assert.equal(keys.size, 1, [...keys].join(" / "));
  const [onDisk] = await loadOrCreateKeyring({ envValue: null, dataDir });
  assert.equal([...keys][0], `${onDisk?.id}:${onDisk?.key.toString("base64")}`);
});

test("DATA_DIR: an operator's file with several keys is used as written, first active", async () => {
  const dataDir = freshDir();
  await loadOrCreateKeyring({ envValue: null, dataDir }); // creates the directory
  const path = join(dataDir, "secret.key");
  const file = {
    keys: [
      { id: "k2", key: b64(32, 0x02) },
      { id: "k1", key: b64(32, 0x01) },
    ],
  };
  await writeFile(path, JSON.stringify(file), { mode: 0o600 });
  const keys = await loadOrCreateKeyring({ envValue: null, dataDir });
  assert.deepEqual(
    keys.map((k) => k.id),
    ["k2", "k1"],
  );
  assert.equal(createSecretBox(keys).seal("x", CONTEXT).split(".")[1], "k2");
});

test("DATA_DIR: a broken key file is refused, never replaced", async () => {
  const dataDir = freshDir();
  await loadOrCreateKeyring({ envValue: null, dataDir });
  const path = join(dataDir, "secret.key");
  const secretish = b64(31, 0x55);
  const broken: [string, RegExp][] = [
    ["", /secret\.key is not valid JSON/],
    [`{"keys": [{"id": "a", "key": "${secretish}"`, /secret\.key is not valid JSON/],
    [`{"keys": []}`, /secret\.key: expected \{ "keys"/],
    [`{"keys": [{"id": "a", "key": "${secretish}"}]}`, /secret\.key key 1 \(id "a"\): key is 31 bytes/],
    [`{"keys": [{"id": "a", "key": 5}]}`, /secret\.key key 1: id and key must be strings/],
  ];
  for (const [content, expected] of broken) {
    await writeFile(path, content, { mode: 0o600 });
    await assert.rejects(loadOrCreateKeyring({ envValue: null, dataDir }), (err: unknown) => {
      assert.ok(err instanceof Error);
      assert.match(err.message, expected);
      assert.ok(!err.message.includes(secretish.slice(0, 12)), "echoes the key");
      return true;
    });
    assert.equal(await readFile(path, "utf8"), content, "the file is left as it was");
  }
});

test("DATA_DIR: a key file others can write is refused; one others can read is used with a warning", {
  skip: process.platform === "win32" ? "no POSIX modes" : false,
}, async () => {
  const dataDir = freshDir();
  const [created] = await loadOrCreateKeyring({ envValue: null, dataDir });
  const path = join(dataDir, "secret.key");
  const warnings: string[] = [];
  const warn = (message: string) => warnings.push(message);

  await chmod(path, 0o666);
  await assert.rejects(loadOrCreateKeyring({ envValue: null, dataDir, warn }), /writable by group or others/);
  await chmod(path, 0o620);
  await assert.rejects(loadOrCreateKeyring({ envValue: null, dataDir, warn }), /writable by group or others/);

  await chmod(path, 0o644);
  const [read] = await loadOrCreateKeyring({ envValue: null, dataDir, warn });
  assert.deepEqual(read, created);
  assert.equal(warnings.length, 1);
  assert.match(warnings[0] ?? "", /readable by group or others; run chmod 600/);
  assert.ok(!(warnings[0] ?? "").includes(created?.key.toString("base64") ?? "?"));

  await chmod(path, 0o600);
  await loadOrCreateKeyring({ envValue: null, dataDir, warn });
  assert.equal(warnings.length, 1, "no warning for 0600");
});

test("an env keyring ignores the DATA_DIR file", async () => {
  const dataDir = freshDir();
  const [fileKey] = await loadOrCreateKeyring({ envValue: null, dataDir });
  const [envKey] = await loadOrCreateKeyring({
    envValue: `env1:${randomBytes(32).toString("base64")}`,
    dataDir,
  });
  assert.equal(envKey?.id, "env1");
  assert.notDeepEqual(envKey?.key, fileKey?.key);
});
