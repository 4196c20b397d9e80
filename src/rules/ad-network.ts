/** An ad account's campaign or ad, as the rule engine names it. */
export interface AdTarget {
  platform: string;
  /** The ad (pause) or the campaign (budget). */
  id: string;
}

/**
 * The ad networks an armed rule acts on. Implementations: the Meta Marketing API (graph-api-network.ts),
 * pointed at graph.facebook.com or, for tests and the demo, at a loopback fake of it.
 */
export interface AdNetwork {
  pauseAd(accountId: string, ad: AdTarget): Promise<void>;
  /** The campaign's daily budget, in the account's currency units. */
  campaignDailyBudget(accountId: string, campaign: AdTarget): Promise<number>;
  setCampaignDailyBudget(accountId: string, campaign: AdTarget, amount: number): Promise<void>;
}
