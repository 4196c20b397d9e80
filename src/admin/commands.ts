import { z } from "zod";
import { type SpendApis, spendSyncInput, syncSpend } from "../connectors/spend-sync.ts";
import type { SecretBox } from "../crypto/secret-box.ts";
import type { Database } from "../db/client.ts";
import type { Metrics } from "../http/metrics.ts";
import { importRowCounter } from "../import/import-metrics.ts";
import { importInput, runImport } from "../import/run-import.ts";
import type { Mailer } from "../people/mailer.ts";
import type { AdNetwork } from "../rules/ad-network.ts";
import { runRules } from "../rules/rule-engine.ts";
import type { ObjectStore } from "../storage/object-store.ts";
import { createAccount, createAccountInput, listAccounts, setPlan, setPlanInput } from "./accounts.ts";
import type { SettingValues } from "./command-settings.ts";
import {
  addConnector,
  addConnectorInput,
  connectorInput,
  listConnectors,
  listConnectorsInput,
  removeConnector,
  testConnector,
} from "./connectors.ts";
import { demoInput, seedDemo } from "./demo.ts";
import {
  addDomain,
  addDomainInput,
  listDomains,
  listDomainsInput,
  removeDomain,
  removeDomainInput,
} from "./domains.ts";
import { createKey, createKeyInput, listKeys, listKeysInput, revokeKey, revokeKeyInput } from "./keys.ts";
import {
  addMemberInput,
  deliverInvitation,
  inviteMember,
  inviteUserInput,
  listMembers,
  listMembersInput,
  reinviteMember,
  removeMember,
  removeMemberInput,
} from "./members.ts";
import { rotateWebhookSecret, webhookSecretInput } from "./webhook-secret.ts";

/** What an admin command runs with, wherever it runs (the server or the CLI process). */
export interface AdminContext {
  db: Database;
  secrets: SecretBox;
  /** Where the demo's recordings go. */
  files: ObjectStore;
  /** Where armed ad rules act. */
  network: AdNetwork;
  /** Where spend sync fetches from (Meta, Google Ads). */
  spendApis: SpendApis;
  /** Invitations: the public address their links start with, and SMTP when configured. */
  siteUrl: () => string;
  mailer: Mailer;
  /** Interim counts of a long command, for the caller's progress bar. */
  progress: (value: unknown) => void;
  /** The server's metrics, when the server carries the command out. */
  metrics?: Metrics;
  /** The server's values of the settings a command depends on, sent back with its result. */
  settings?: (command: string) => SettingValues;
}

const rulesRunInput = z
  .object({ account: z.guid({ error: "must be an account id (UUID)" }).optional() })
  .transform((a) => ({ accountId: a.account }));

/**
 * Administration commands by name. The CLI runs them directly on the database, or, when
 * `ascribe serve` holds the embedded database, asks the server to run them over its admin socket;
 * arguments arrive as JSON either way and are validated here.
 */
export const adminCommands = {
  migrate: async ({ db }: AdminContext) => {
    await db.migrate();
    return { migrated: true };
  },
  "accounts.create": async (context: AdminContext, args: unknown) => {
    const created = await createAccount(context.db, createAccountInput.parse(args), {
      siteUrl: context.siteUrl(),
    });
    const owner = createAccountInput.parse(args).owner;
    if (!owner || !created.invite_url) return created;
    return { ...created, ...(await deliverInvitation(context, owner, created.invite_url, created.name)) };
  },
  "accounts.list": ({ db }: AdminContext) => listAccounts(db),
  "accounts.set-plan": ({ db }: AdminContext, args: unknown) => setPlan(db, setPlanInput.parse(args)),
  "accounts.webhook-secret": ({ db, secrets }: AdminContext, args: unknown) =>
    rotateWebhookSecret(db, secrets, webhookSecretInput.parse(args)),
  "connectors.add": ({ db, secrets, siteUrl }: AdminContext, args: unknown) =>
    addConnector(db, secrets, siteUrl(), addConnectorInput.parse(args)),
  "connectors.list": ({ db, siteUrl }: AdminContext, args: unknown) =>
    listConnectors(db, siteUrl(), listConnectorsInput.parse(args)),
  "connectors.remove": ({ db }: AdminContext, args: unknown) =>
    removeConnector(db, connectorInput.parse(args)),
  "connectors.test": ({ db, secrets }: AdminContext, args: unknown) =>
    testConnector(db, secrets, connectorInput.parse(args)),
  "spend.sync": ({ db, secrets, spendApis }: AdminContext, args: unknown) =>
    syncSpend({ db, secrets, apis: spendApis }, spendSyncInput.parse(args)),
  "domains.add": ({ db }: AdminContext, args: unknown) => addDomain(db, addDomainInput.parse(args)),
  "domains.list": ({ db }: AdminContext, args: unknown) => listDomains(db, listDomainsInput.parse(args)),
  "domains.remove": ({ db }: AdminContext, args: unknown) => removeDomain(db, removeDomainInput.parse(args)),
  "members.add": (context: AdminContext, args: unknown) => inviteMember(context, addMemberInput.parse(args)),
  "members.list": ({ db }: AdminContext, args: unknown) => listMembers(db, listMembersInput.parse(args)),
  "members.remove": ({ db }: AdminContext, args: unknown) => removeMember(db, removeMemberInput.parse(args)),
  "users.invite": (context: AdminContext, args: unknown) =>
    reinviteMember(context, inviteUserInput.parse(args)),
  "keys.create": ({ db }: AdminContext, args: unknown) => createKey(db, createKeyInput.parse(args)),
  "keys.list": ({ db }: AdminContext, args: unknown) => listKeys(db, listKeysInput.parse(args)),
  "keys.revoke": ({ db }: AdminContext, args: unknown) => revokeKey(db, revokeKeyInput.parse(args)),
  demo: ({ db, secrets, files, progress }: AdminContext, args: unknown) =>
    seedDemo(db, demoInput.parse(args), progress, { secrets, files }),
  "rules.run": ({ db, network, metrics }: AdminContext, args: unknown) =>
    runRules({ db, network, clock: () => new Date(), metrics }, rulesRunInput.parse(args)),
  import: async ({ db, secrets, progress, metrics }: AdminContext, args: unknown) => {
    const input = importInput.parse(args);
    if (!metrics) return runImport(db, secrets, input, progress);
    const counted = importRowCounter(metrics, input.kind);
    const summary = await runImport(db, secrets, input, (p) => {
      counted.progress(p);
      progress(p);
    });
    counted.done(summary);
    return summary;
  },
} as const satisfies Record<string, (context: AdminContext, args: unknown) => Promise<unknown>>;

export type AdminCommand = keyof typeof adminCommands;

export function isAdminCommand(name: string): name is AdminCommand {
  return Object.hasOwn(adminCommands, name);
}

export { describeError } from "./describe-error.ts";
