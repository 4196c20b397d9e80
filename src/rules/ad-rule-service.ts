import type { Sql } from "../db/client.ts";
import { ApiError } from "../http/errors.ts";
import { adRuleExists } from "../queries/ad-rule-exists.ts";
import { deleteAdRule } from "../queries/delete-ad-rule.ts";
import { type AdRuleFlags, updateAdRule } from "../queries/update-ad-rule.ts";
import type { Tenant } from "../routes/route-def.ts";

/**
 * The writes on an account's ad rules, for every caller (HTTP, MCP, CLI): the plan rule and the
 * 403/404 distinction live here, not in a route.
 */

/** Another account's rule → 403 `forbidden`; no rule with that id anywhere → 404 `not_found`. */
async function missingRule(tx: Sql, ruleId: string): Promise<never> {
  throw new ApiError((await adRuleExists(tx, { ruleId })) ? "forbidden" : "not_found");
}

export async function setRuleEnabled(
  tx: Sql,
  tenant: Tenant,
  ruleId: string,
  enabled: boolean,
): Promise<AdRuleFlags> {
  return (await updateAdRule(tx, tenant.accountId, { ruleId, enabled })) ?? missingRule(tx, ruleId);
}

/** `dryRun` false arms the rule: it will act on the ad network for real, which the free plan does not allow. */
export async function setRuleDryRun(
  tx: Sql,
  tenant: Tenant,
  ruleId: string,
  dryRun: boolean,
): Promise<AdRuleFlags> {
  if (!dryRun && tenant.plan === "free") throw new ApiError("plan_free_no_autopilot");
  return (await updateAdRule(tx, tenant.accountId, { ruleId, dryRun })) ?? missingRule(tx, ruleId);
}

/** Final: the rule and its run history go. */
export async function deleteRule(
  tx: Sql,
  tenant: Tenant,
  ruleId: string,
): Promise<{ rule_id: string; deleted: true }> {
  if (!(await deleteAdRule(tx, tenant.accountId, { ruleId }))) return missingRule(tx, ruleId);
  return { rule_id: ruleId, deleted: true };
}
