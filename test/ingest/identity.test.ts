import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import { contactKey, normalizeEmail, normalizePhone } from "../../src/ingest/identity.ts";

describe("normalizeEmail", () => {
  const cases: [string | null | undefined, string | null][] = [
    [" John.Doe@Example.COM ", "john.doe@example.com"],
    ["mailto:a@b.co", "a@b.co"],
    ["MAILTO: A@B.CO?subject=Hi", "a@b.co"],
    ["<a@b.co>", "a@b.co"],
    [" < a@b.co > ", "a@b.co"],
    ["<mailto:a@b.co>", "a@b.co"],
    ["mailto:<a@b.co>", "a@b.co"],
    // Different inboxes for most providers: never folded.
    ["Anna+Shop@Gmail.com", "anna+shop@gmail.com"],
    ["j.o.h.n@gmail.com", "j.o.h.n@gmail.com"],
    ["o'brien@x.ie", "o'brien@x.ie"],
    // Invisible characters from copy-paste, non-breaking spaces, decomposed accents.
    ["\u200Banna@x.com\uFEFF", "anna@x.com"],
    ["\u00A0anna@x.com\u00A0", "anna@x.com"],
    ["Zoe\u0301@Exemple.fr", "zo\u00E9@exemple.fr"],
    ["a@b", null],
    ["a b@c.com", null],
    ["", null],
    ["   ", null],
    [null, null],
    [undefined, null],
    ["a@@b.co", null],
    ["a@b@c.co", null],
    ["@b.co", null],
    ["a@", null],
    ["a@.co", null],
    ["a@b..co", null],
    ["a@b.co.", null],
    ["John <john@x.com>", null],
    ["a@b.co, c@d.co", null],
    ["a@b.co;", null],
    ["mailto:", null],
    ["<>", null],
    ['"john doe"@x.com', null],
  ];
  for (const [input, expected] of cases) {
    test(`${JSON.stringify(input)} → ${JSON.stringify(expected)}`, () =>
      assert.equal(normalizeEmail(input), expected));
  }

  test("property: idempotent, and generated addresses are kept lower-cased", () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.emailAddress()), (raw) => {
        const once = normalizeEmail(raw);
        if (once !== null) assert.equal(normalizeEmail(once), once);
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.emailAddress(), (address) => {
        assert.equal(normalizeEmail(` ${address.toUpperCase()} `), address.toLowerCase());
      }),
      { numRuns: 300 },
    );
  });
});

describe("normalizePhone", () => {
  const cases: [string | null | undefined, string | undefined, string | null][] = [
    ["+33 6 12 34 56 78", undefined, "+33612345678"],
    ["0033612345678", undefined, "+33612345678"],
    ["0033 6 12 34 56 78", undefined, "+33612345678"],
    // International form ignores the default country.
    ["+33 6 12 34 56 78", "44", "+33612345678"],
    ["tel:+33612345678", undefined, "+33612345678"],
    ["+44 (0)20 7946 0958", undefined, "+442079460958"],
    ["0044 (0)20 7946 0958", undefined, "+442079460958"],
    // The prefix is read past separators (found by the fixed-point property).
    [")0033 6 12 34 56 78", undefined, "+33612345678"],
    [")000000", undefined, null],
    // National form without a country: digits as they are, no guessing.
    ["(555) 123-4567", undefined, "5551234567"],
    ["06 12 34 56 78", undefined, "0612345678"],
    // National form with the account's calling code.
    ["06.12.34.56.78", "33", "+33612345678"],
    ["06 12 34 56 78", "+33", "+33612345678"],
    ["6 12 34 56 78", "33", "+33612345678"],
    ["(555) 123-4567", "1", "+15551234567"],
    ["1 (555) 123-4567", "1", "+15551234567"],
    ["030/1234567", "49", "+49301234567"],
    ["06 1234 5678", "39", "+390612345678"],
    // Length bounds: 6..15 digits.
    ["12345", undefined, null],
    ["123456", undefined, "123456"],
    ["+123456789012345", undefined, "+123456789012345"],
    ["+1234567890123456", undefined, null],
    ["0612345678901234", "33", null],
    // Not a phone.
    ["+0612345678", undefined, null],
    ["000612345678", undefined, null],
    ["555-1234 ext. 12", undefined, null],
    ["n/a", undefined, null],
    ["+", undefined, null],
    ["()", undefined, null],
    ["++33612345678", undefined, null],
    ["33+612345678", undefined, null],
    ["", "33", null],
    [null, "33", null],
    [undefined, undefined, null],
  ];
  for (const [input, country, expected] of cases) {
    test(`${JSON.stringify(input)} with ${country ?? "no country"} → ${JSON.stringify(expected)}`, () =>
      assert.equal(normalizePhone(input, country), expected));
  }

  test("a default country that is not a calling code is a configuration error", () => {
    for (const bad of ["France", "FR", "0", "1234", "", "+"]) {
      assert.throws(() => normalizePhone("0612345678", bad), RangeError, bad);
    }
  });

  test("property: the output is a fixed point (without a default country) and always 6–15 digits", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(..."0123456789 +().-/"), maxLength: 24 }),
        fc.constantFrom(undefined, "33", "1", "39", "44"),
        (raw, country) => {
          const once = normalizePhone(raw, country);
          if (once === null) return;
          assert.match(once, /^\+?[0-9]{6,15}$/);
          assert.ok(!once.startsWith("+0"));
          assert.equal(normalizePhone(once), once);
          if (country !== undefined) assert.ok(once.startsWith("+"));
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe("contactKey", () => {
  test("email first, phone as fallback, else null", () => {
    assert.deepEqual(contactKey("a@b.co", "+33612345678"), { kind: "email", key: "a@b.co" });
    assert.deepEqual(contactKey(null, "+33612345678"), { kind: "phone", key: "+33612345678" });
    assert.deepEqual(contactKey("", "5551234567"), { kind: "phone", key: "5551234567" });
    assert.equal(contactKey(null, null), null);
    assert.equal(contactKey("", ""), null);
    assert.equal(contactKey(null, "12"), null);
  });

  test("raw values still get their canonical key; an invalid email falls back to the phone", () => {
    assert.deepEqual(contactKey(" A@B.co ", null), { kind: "email", key: "a@b.co" });
    assert.deepEqual(contactKey("a@b", "+33 6 12 34 56 78"), { kind: "phone", key: "+33612345678" });
    assert.equal(contactKey("not an email", "call me"), null);
  });

  test("the same person typed two ways gets one key", () => {
    assert.deepEqual(
      contactKey(normalizeEmail("<John.Doe@Example.com>"), null),
      contactKey("john.doe@example.com ", null),
    );
    assert.deepEqual(
      contactKey(null, normalizePhone("06.12.34.56.78", "33")),
      contactKey(null, normalizePhone("0033 6 12 34 56 78")),
    );
  });
});
