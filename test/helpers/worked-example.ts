import { at, type Fixture } from "./report-fixtures.ts";

/*
 * The worked example of docs/attribution.md (Ann, ads A and B of campaign Spring, a newsletter
 * visit, a sale with an installment and a refund), shared by the attribution reports' tests.
 */

export const ad = (id: string, date: string, spend: number, extra: Record<string, unknown> = {}) => ({
  platform: "meta",
  ad_id: id,
  ad_name: `Ad ${id}`,
  campaign_id: "C1",
  campaign_name: "Spring",
  adset_id: "S1",
  adset_name: "Set",
  date,
  total_spend: spend,
  ...extra,
});
export const click = (id: string, email: string | null, adId: string, day: string, time = "10:00:00") => ({
  id,
  ...(email ? { email } : { visitor_id: `v-${id}` }),
  session_id: `s-${id}`,
  kind: "web",
  event_type: "page_view",
  occurred_at: at(day, time),
  utm_source: "facebook",
  utm_medium: "paid",
  utm_campaign: "Spring",
  utm_content: `Ad ${adId}`,
  ad_id: adId,
});

/** docs/attribution.md, "Worked example": the same journey, the same numbers. */
export const worked: Fixture = {
  spend: [
    ad("A", "2026-03-01", 100, { total_clicks: 10, total_impressions: 1000, total_reach: 800 }),
    ad("B", "2026-03-05", 50, { total_clicks: 5, total_impressions: 500, total_reach: 400 }),
  ],
  touchpoints: [
    click("t1", "ann@x.test", "A", "2026-03-02"),
    click("t2", "ann@x.test", "B", "2026-03-04"),
    {
      id: "t3",
      email: "ann@x.test",
      session_id: "s-t3",
      kind: "web",
      event_type: "page_view",
      occurred_at: at("2026-03-06"),
      utm_source: "email",
      utm_medium: "email",
      utm_campaign: "newsletter",
    },
  ],
  events: [
    {
      id: "l1",
      event_type: "lead",
      event_datetime: at("2026-03-06", "10:05:00"),
      contact_email: "ann@x.test",
    },
    {
      id: "b1",
      event_type: "booking",
      event_datetime: at("2026-03-07"),
      contact_email: "ann@x.test",
      booking_date: "2026-03-10",
      booking_time: "10:00",
      assigned_user_name: "Rita",
    },
    {
      id: "s1",
      event_type: "sale",
      event_datetime: at("2026-03-12"),
      contact_email: "ann@x.test",
      amount: 1000,
      product_key: "coaching",
      assigned_user_name: "Rita",
    },
    {
      id: "p1",
      event_type: "payment",
      event_datetime: at("2026-03-20"),
      contact_email: "ann@x.test",
      amount: 500,
      payment_status: "paid",
      product_key: "coaching",
    },
    {
      id: "r1",
      event_type: "payment",
      event_datetime: at("2026-03-25"),
      contact_email: "ann@x.test",
      amount: 200,
      payment_status: "refunded",
      product_key: "coaching",
    },
  ],
};
