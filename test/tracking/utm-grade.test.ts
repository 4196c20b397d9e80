import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { gradeUtmSetup, hasUnresolvedMacro } from "../../src/tracking/utm-grade.ts";

const REQUIRED = {
  utm_source: "facebook",
  utm_medium: "paid",
  utm_campaign: "Spring launch",
  utm_content: "Video 3",
  utm_term: "Lookalike 1%",
};
const IDS = {
  utm_campaign_id: "120210000000001",
  utm_ad_id: "120210000000003",
  utm_adset_id: "120210000000002",
};

describe("gradeUtmSetup", () => {
  test("A+ with every required and recommended field; nothing to warn about", () => {
    const verdict = gradeUtmSetup({ ...REQUIRED, ...IDS });
    assert.equal(verdict.grade, "A+");
    assert.deepEqual(verdict.found, [
      "utm_source",
      "utm_medium",
      "utm_campaign",
      "utm_content",
      "utm_term",
      "utm_campaign_id",
      "utm_ad_id",
      "utm_adset_id",
    ]);
    assert.deepEqual(verdict.missing, []);
    assert.deepEqual(verdict.warnings, []);
    assert.deepEqual(verdict.fields.utm_term, { value: "Lookalike 1%", status: "ok", required: true });
  });

  test("A with the required fields only; the ids are listed missing", () => {
    const verdict = gradeUtmSetup(REQUIRED);
    assert.equal(verdict.grade, "A");
    assert.deepEqual(verdict.missing, ["utm_campaign_id", "utm_ad_id", "utm_adset_id"]);
  });

  test("B, C, D and F by the number of required fields (four, three, one or two, none)", () => {
    const { utm_term: _t, ...four } = REQUIRED;
    const { utm_content: _c, ...three } = four;
    assert.equal(gradeUtmSetup({ ...four, ...IDS }).grade, "B");
    assert.equal(gradeUtmSetup(three).grade, "C");
    assert.equal(gradeUtmSetup({ utm_source: "facebook", utm_medium: "paid" }).grade, "D");
    assert.equal(gradeUtmSetup({ utm_source: "facebook" }).grade, "D");
    assert.equal(gradeUtmSetup({ ...IDS }).grade, "F");
    assert.equal(gradeUtmSetup({}).grade, "F");
    assert.equal(gradeUtmSetup({ utm_source: "   ", utm_medium: "" }).grade, "F");
  });

  test("unresolved macros of each network, raw or percent-encoded, count as missing with the ad-level advice", () => {
    const verdict = gradeUtmSetup({
      ...REQUIRED,
      utm_campaign: "{{campaign.name}}",
      utm_content: "%7B%7Bad.name%7D%7D",
      utm_term: "__AID_NAME__",
      utm_campaign_id: "{campaignid}",
      utm_ad_id: "%7Bcreative%7D",
      utm_adset_id: "120210000000002",
    });
    // Two usable required fields (source, medium).
    assert.equal(verdict.grade, "D");
    assert.deepEqual(verdict.missing, [
      "utm_campaign",
      "utm_content",
      "utm_term",
      "utm_campaign_id",
      "utm_ad_id",
    ]);
    assert.equal(verdict.fields.utm_content.status, "unresolved_macro");
    assert.deepEqual(verdict.warnings, [
      "Unresolved macro in utm_campaign, utm_content, utm_term, utm_campaign_id, utm_ad_id: the ad network sent the placeholder itself. Set the URL parameters at ad level (not on the campaign or ad set) so the network fills them in.",
    ]);
  });

  test("renamed parameters are reported and not accepted", () => {
    const verdict = gradeUtmSetup({
      UTM_Source: "facebook",
      utmMedium: "paid",
      "utm-campaign": "x",
      utm_content: "a",
      utm_term: "b",
    });
    assert.equal(verdict.grade, "D");
    assert.deepEqual(verdict.warnings, [
      'Parameter "UTM_Source" is not recognized: rename it "utm_source" (names are lowercase with underscores, and case-sensitive).',
      'Parameter "utmMedium" is not recognized: rename it "utm_medium" (names are lowercase with underscores, and case-sensitive).',
      'Parameter "utm-campaign" is not recognized: rename it "utm_campaign" (names are lowercase with underscores, and case-sensitive).',
    ]);
  });

  test("non-numeric ids and a medium other than paid are warned about", () => {
    const verdict = gradeUtmSetup({ ...REQUIRED, utm_medium: "cpc", ...IDS, utm_ad_id: "Video 3" });
    assert.equal(verdict.grade, "A");
    assert.deepEqual(verdict.missing, ["utm_ad_id"]);
    assert.equal(verdict.fields.utm_ad_id.status, "not_numeric");
    assert.deepEqual(verdict.warnings, [
      'utm_ad_id is "Video 3", not a number: use the ad network\'s numeric id macro for it (the ad is then matched by name only).',
      'utm_medium is "cpc": the ad URL set-up expects "paid" for ad traffic.',
    ]);
  });
});

describe("hasUnresolvedMacro", () => {
  test("placeholders of Meta, Google and TikTok, encoded once or twice; ordinary names are not", () => {
    for (const macro of [
      "{{ad.name}}",
      "{campaignid}",
      "__CAMPAIGN_NAME__",
      "%7B%7Bad.name%7D%7D",
      "%257Bcampaignid%257D",
    ])
      assert.equal(hasUnresolvedMacro(macro), true, macro);
    for (const plain of ["Spring launch", "video_3", "50%", "a{b", "__init", "120210000000001"])
      assert.equal(hasUnresolvedMacro(plain), false, plain);
  });
});
