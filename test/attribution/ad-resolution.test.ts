import assert from "node:assert/strict";
import { describe, test } from "node:test";
import fc from "fast-check";
import {
  buildAdIndex,
  captureShares,
  isUnresolvedMacro,
  type KnownAd,
  normalizeAdName,
  type Resolution,
  resolveAd,
} from "../../src/attribution/ad-resolution.ts";

function ad(ad_id: string, ad_name: string, campaign_name: string | null, platform = "meta"): KnownAd {
  return {
    ad_id,
    ad_name,
    campaign_id: campaign_name === null ? null : `c-${campaign_name}`,
    campaign_name,
    adset_id: null,
    adset_name: null,
    platform,
  };
}

// Two Meta ids that are the same JavaScript number.
const ID_1 = "120210000000000001";
const ID_2 = "120210000000000002";

const SPRING = ad(ID_1, "Spring Promo Video", "Spring Sale");
const ANNA = ad(ID_2, "Testimonial Anna", "Spring Sale");
const HOOK_JAN = ad("120210000000000003", "Webinar Hook", "Webinar Jan");
const HOOK_FEB_A = ad("120210000000000004", "WEBINAR HOOK", "Webinar Feb");
const HOOK_FEB_B = ad("120210000000000005", " webinar  hook", "webinar feb");
const BRAND = ad("987654321", "Search Brand", null, "google");
const TEST_AD = ad("555000", "[TEST]", null);
// A re-synced copy of SPRING (same name) and a stale copy under an old name: both ignored.
const SPRING_COPY = ad(ID_1, "Spring Promo Video", "Spring Sale");
const SPRING_OLD = ad(` ${ID_1} `, "Old Name", "Spring Sale");

const index = buildAdIndex([
  SPRING,
  ANNA,
  HOOK_JAN,
  HOOK_FEB_A,
  HOOK_FEB_B,
  BRAND,
  TEST_AD,
  SPRING_COPY,
  SPRING_OLD,
]);

const exact = (a: KnownAd): Resolution => ({ method: "exact", ad: a });
const byName = (a: KnownAd): Resolution => ({ method: "by_name", ad: a });
const unresolved = (reason: Extract<Resolution, { method: "unresolved" }>["reason"]): Resolution => ({
  method: "unresolved",
  reason,
});

describe("ad resolution: exact", () => {
  test("18-digit ids that are equal as numbers resolve to their own ads", () => {
    assert.equal(Number(ID_1), Number(ID_2)); // the hazard: parsing would confuse them
    assert.deepEqual(resolveAd({ utm_ad_id: ID_1 }, index), exact(SPRING));
    assert.deepEqual(resolveAd({ utm_ad_id: ID_2 }, index), exact(ANNA));
    assert.deepEqual(resolveAd({ meta_ad_id: ID_2 }, index), exact(ANNA));
    // An id corrupted by a round trip through a number is not a known ad.
    assert.equal(String(Number(ID_1)), "120210000000000000");
    assert.deepEqual(resolveAd({ utm_ad_id: String(Number(ID_1)) }, index), unresolved("unknown_id"));
  });

  test("ids are trimmed, and each id field can resolve alone", () => {
    assert.deepEqual(resolveAd({ utm_ad_id: "  120210000000000003 " }, index), exact(HOOK_JAN));
    assert.deepEqual(resolveAd({ platform_ad_id: "987654321" }, index), exact(BRAND));
  });

  test("precedence: utm_ad_id, then meta_ad_id, then platform_ad_id; the first known id wins", () => {
    assert.deepEqual(
      resolveAd({ utm_ad_id: ID_1, meta_ad_id: ID_2, platform_ad_id: "987654321" }, index),
      exact(SPRING),
    );
    assert.deepEqual(
      resolveAd({ utm_ad_id: "999", meta_ad_id: ID_2, platform_ad_id: "987654321" }, index),
      exact(ANNA),
    );
    assert.deepEqual(
      resolveAd({ utm_ad_id: "{{ad.id}}", meta_ad_id: "  ", platform_ad_id: "987654321" }, index),
      exact(BRAND),
    );
  });

  test("a known id beats utm_content naming another ad", () => {
    assert.deepEqual(resolveAd({ utm_ad_id: ID_1, utm_content: "Testimonial Anna" }, index), exact(SPRING));
  });

  test("a duplicate id in the catalog is the first entry, and its other names are not indexed", () => {
    assert.equal(index.byId.get(ID_1), SPRING);
    assert.deepEqual(resolveAd({ utm_content: "Old Name" }, index), unresolved("unknown_name"));
    // The same-name copy does not make the name ambiguous.
    assert.deepEqual(resolveAd({ utm_content: "Spring Promo Video" }, index), byName(SPRING));
  });
});

describe("ad resolution: by name", () => {
  test("utm_content matches case-insensitively, trimmed, inner whitespace collapsed", () => {
    assert.deepEqual(resolveAd({ utm_content: "  spring   promo VIDEO " }, index), byName(SPRING));
    assert.deepEqual(resolveAd({ utm_content: "testimonial\tanna" }, index), byName(ANNA));
    assert.equal(normalizeAdName("  Vide\u0301o  Été\n"), "vidéo été");
  });

  test("an unknown id falls back to the name", () => {
    assert.deepEqual(resolveAd({ utm_ad_id: "999", utm_content: "Testimonial Anna" }, index), byName(ANNA));
  });

  test("a single name match wins whatever the campaign says", () => {
    assert.deepEqual(
      resolveAd({ utm_content: "Testimonial Anna", utm_campaign: "Webinar Jan" }, index),
      byName(ANNA),
    );
  });

  test("a name tie is broken by utm_campaign, else by campaign_name", () => {
    assert.deepEqual(
      resolveAd({ utm_content: "webinar hook", utm_campaign: "Webinar Jan" }, index),
      byName(HOOK_JAN),
    );
    assert.deepEqual(
      resolveAd({ utm_content: "webinar hook", utm_campaign: "  WEBINAR   jan " }, index),
      byName(HOOK_JAN),
    );
    assert.deepEqual(
      resolveAd({ utm_content: "webinar hook", utm_campaign: "nope", campaign_name: "Webinar Jan" }, index),
      byName(HOOK_JAN),
    );
    assert.deepEqual(
      resolveAd(
        { utm_content: "webinar hook", utm_campaign: "{{campaign.name}}", campaign_name: "Webinar Jan" },
        index,
      ),
      byName(HOOK_JAN),
    );
  });

  test("a tie the campaign does not decide stays ambiguous", () => {
    assert.deepEqual(resolveAd({ utm_content: "Webinar Hook" }, index), unresolved("ambiguous_name"));
    // Two ads of that name are in "Webinar Feb".
    assert.deepEqual(
      resolveAd({ utm_content: "Webinar Hook", utm_campaign: "Webinar Feb" }, index),
      unresolved("ambiguous_name"),
    );
    assert.deepEqual(
      resolveAd({ utm_content: "Webinar Hook", utm_campaign: "Other", campaign_name: "Other too" }, index),
      unresolved("ambiguous_name"),
    );
  });

  test("a real ad whose name looks like a macro still resolves by name", () => {
    assert.ok(isUnresolvedMacro("[TEST]"));
    assert.deepEqual(resolveAd({ utm_content: "[test]" }, index), byName(TEST_AD));
  });
});

describe("ad resolution: unresolved reasons", () => {
  test("no_signal: nothing, blanks, or campaign fields only", () => {
    assert.deepEqual(resolveAd({}, index), unresolved("no_signal"));
    assert.deepEqual(
      resolveAd({ utm_ad_id: null, meta_ad_id: "", platform_ad_id: "   ", utm_content: " \t" }, index),
      unresolved("no_signal"),
    );
    assert.deepEqual(
      resolveAd({ utm_campaign: "Spring Sale", campaign_name: "Spring Sale" }, index),
      unresolved("no_signal"),
    );
    assert.deepEqual(resolveAd({ utm_campaign: "{{campaign.name}}" }, index), unresolved("no_signal"));
  });

  test("unknown_id: a real id not in the catalog, even when the name is unknown or ambiguous", () => {
    assert.deepEqual(resolveAd({ utm_ad_id: "999" }, index), unresolved("unknown_id"));
    assert.deepEqual(
      resolveAd({ platform_ad_id: "999", utm_content: "nope" }, index),
      unresolved("unknown_id"),
    );
    assert.deepEqual(
      resolveAd({ meta_ad_id: "999", utm_content: "Webinar Hook" }, index),
      unresolved("unknown_id"),
    );
    assert.deepEqual(
      resolveAd({ meta_ad_id: "999", utm_content: "{{ad.name}}" }, index),
      unresolved("unknown_id"),
    );
  });

  test("unknown_name: a real utm_content no ad has", () => {
    assert.deepEqual(resolveAd({ utm_content: "Summer Promo" }, index), unresolved("unknown_name"));
    // A macro id is ignored as a signal: the real name is what failed.
    assert.deepEqual(
      resolveAd({ utm_ad_id: "{{ad.id}}", utm_content: "Summer Promo" }, index),
      unresolved("unknown_name"),
    );
  });

  test("unresolved_macro: the only ad signals are literal placeholders", () => {
    assert.deepEqual(resolveAd({ utm_content: "{{ad.name}}" }, index), unresolved("unresolved_macro"));
    assert.deepEqual(resolveAd({ utm_ad_id: "{{ad.id}}" }, index), unresolved("unresolved_macro"));
    assert.deepEqual(
      resolveAd(
        {
          utm_ad_id: "__AID__",
          meta_ad_id: "{ad_id}",
          platform_ad_id: "%%AD_ID%%",
          utm_content: "[ad_name]",
        },
        index,
      ),
      unresolved("unresolved_macro"),
    );
    assert.deepEqual(
      resolveAd({ utm_content: "%7B%7Bad.name%7D%7D", utm_campaign: "Spring Sale" }, index),
      unresolved("unresolved_macro"),
    );
  });
});

describe("isUnresolvedMacro", () => {
  const macros = [
    "{{ad.id}}",
    "{{ ad.name }}",
    "  {{campaign.name}} ",
    "{{ad_id}}",
    "{ad_id}",
    "{creative}",
    "{ifmobile:mobile}",
    "%%AD_ID%%",
    "[ad_id]",
    "__AD_ID__",
    "__CAMPAIGN_NAME__",
    "%7B%7Bad.id%7D%7D",
    "%7bad_id%7d",
    "%5Bad_id%5D",
  ];
  const notMacros = [
    "Promo {spring} video",
    "{{ad.id}} copy",
    "[Spring sale]",
    "{{ad name}}",
    "{}",
    "{{}}",
    "[]",
    "%%",
    "____",
    "__init",
    "100%",
    "%ZZ%7B",
    "Spring Promo Video",
    ID_1,
    "",
    "   ",
  ];
  for (const value of macros)
    test(`${JSON.stringify(value)} is a macro`, () => assert.equal(isUnresolvedMacro(value), true));
  for (const value of notMacros) {
    test(`${JSON.stringify(value)} is not a macro`, () => assert.equal(isUnresolvedMacro(value), false));
  }
});

describe("captureShares", () => {
  const E = exact(SPRING);
  const N = byName(ANNA);
  const U = unresolved("unknown_name");
  const repeat = (r: Resolution, n: number): Resolution[] => Array.from({ length: n }, () => r);
  const tenths = (s: ReturnType<typeof captureShares>) =>
    Math.round(s.pct_exact_id * 10) + Math.round(s.pct_par_nom * 10) + Math.round(s.pct_non_resolu * 10);

  test("no resolutions → 0 / 0 / 0", () => {
    assert.deepEqual(captureShares([]), { pct_exact_id: 0, pct_par_nom: 0, pct_non_resolu: 0 });
  });

  test("hand-computed largest-remainder examples", () => {
    assert.deepEqual(captureShares([E]), { pct_exact_id: 100, pct_par_nom: 0, pct_non_resolu: 0 });
    // 333.3 tenths each: floors sum to 999, the tie goes to exact.
    assert.deepEqual(captureShares([E, N, U]), {
      pct_exact_id: 33.4,
      pct_par_nom: 33.3,
      pct_non_resolu: 33.3,
    });
    // 666.7 / 333.3: the larger remainder (by name's .67) gets the tenth.
    assert.deepEqual(captureShares([E, N, N]), { pct_exact_id: 33.3, pct_par_nom: 66.7, pct_non_resolu: 0 });
    assert.deepEqual(captureShares([E, E, N]), { pct_exact_id: 66.7, pct_par_nom: 33.3, pct_non_resolu: 0 });
    // 1/7, 3/7, 3/7 = 142.86, 428.57, 428.57 tenths: floors 142+428+428 = 998; exact (.86) then the
    // by-name/unresolved tie (.57 each) goes to by name.
    assert.deepEqual(captureShares([E, ...repeat(N, 3), ...repeat(U, 3)]), {
      pct_exact_id: 14.3,
      pct_par_nom: 42.9,
      pct_non_resolu: 42.8,
    });
    // 1 of 2000 = 0.5 tenth, 1999 of 2000 = 999.5 tenths: tie, exact first.
    assert.deepEqual(captureShares([E, ...repeat(U, 1999)]), {
      pct_exact_id: 0.1,
      pct_par_nom: 0,
      pct_non_resolu: 99.9,
    });
    // 1 of 3000 = 0.33 tenth < 999.67's remainder: a tiny share can show 0.
    assert.deepEqual(captureShares([E, ...repeat(U, 2999)]), {
      pct_exact_id: 0,
      pct_par_nom: 0,
      pct_non_resolu: 100,
    });
    assert.deepEqual(captureShares(repeat(U, 5)), { pct_exact_id: 0, pct_par_nom: 0, pct_non_resolu: 100 });
  });

  test("every unresolved reason counts as unresolved", () => {
    const reasons = [
      "no_signal",
      "unknown_id",
      "unknown_name",
      "ambiguous_name",
      "unresolved_macro",
    ] as const;
    assert.deepEqual(captureShares(reasons.map(unresolved)), {
      pct_exact_id: 0,
      pct_par_nom: 0,
      pct_non_resolu: 100,
    });
  });

  test("property: one decimal, sum of tenths 1000, each within 0.1 of its exact share, 0 only when absent or tiny", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(E, N, U), { minLength: 1, maxLength: 3000 }), (list) => {
        const s = captureShares(list);
        assert.equal(tenths(s), 1000);
        const counts = [E, N, U].map((r) => list.filter((x) => x === r).length);
        [s.pct_exact_id, s.pct_par_nom, s.pct_non_resolu].forEach((pct, i) => {
          const count = counts[i] ?? 0;
          assert.equal(Math.round(pct * 10) / 10, pct);
          assert.ok(pct >= 0 && pct <= 100);
          const exactShare = (count * 100) / list.length;
          assert.ok(Math.abs(pct - exactShare) < 0.1 + 1e-9, `${pct} vs ${exactShare}`);
          if (count === 0) assert.equal(pct, 0);
          if (exactShare >= 0.1) assert.ok(pct > 0);
        });
      }),
      { numRuns: 300 },
    );
  });
});
