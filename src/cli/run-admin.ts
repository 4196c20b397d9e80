import {
  answerBusy,
  callAdminSocket,
  DataDirBusyError,
  lockDataDir,
  releaseDataDir,
} from "../admin/admin-socket.ts";
import { describeDifferences, differingSettings } from "../admin/command-settings.ts";
import { type AdminCommand, adminCommands, describeError } from "../admin/commands.ts";
import type { Config } from "../config.ts";
import {
  openAdNetwork,
  openDatabase,
  openFiles,
  openMailer,
  openSecrets,
  spendApis,
} from "../open-infrastructure.ts";
import { secureDataDir } from "../storage/data-dir.ts";
import { CliError } from "./output.ts";

/*
 * Loaded only when a command runs (never for --help or --version): it brings in the whole service.
 */

/**
 * Runs an admin command where the data is: through the running server when it holds the embedded
 * database, else directly on the database.
 */
export async function runAdmin(
  config: Config,
  command: AdminCommand,
  args: unknown,
  onProgress: (value: unknown) => void = () => {},
): Promise<unknown> {
  if (config.databaseUrl) return runDirect(config, command, args, onProgress);
  // Whoever holds DATA_DIR (a running server) carries the command out; else take it ourselves.
  for (let attempt = 0; ; attempt++) {
    const reply = await callAdminSocket(config.dataDir, command, args, onProgress);
    if (reply) {
      if (!reply.ok) throw new CliError(reply.error);
      const differences = differingSettings(config, command, reply.settings ?? {});
      if (differences.length > 0) process.stderr.write(`ascribe: ${describeDifferences(differences)}\n`);
      return reply.result;
    }
    try {
      const lock = await lockDataDir(config.dataDir, answerBusy);
      try {
        return await runDirect(config, command, args, onProgress);
      } finally {
        await releaseDataDir(lock);
      }
    } catch (err) {
      // A server bound the socket between our call and our lock: ask it instead.
      if (!(err instanceof DataDirBusyError) || attempt > 0) throw err;
    }
  }
}

async function runDirect(
  config: Config,
  command: AdminCommand,
  args: unknown,
  progress: (value: unknown) => void,
): Promise<unknown> {
  // The keyring warning belongs to the server's log; a command's stderr is its one-line error.
  // DATA_DIR is made private before anything in it is opened, as `ascribe serve` does.
  await secureDataDir(config.dataDir);
  const secrets = await openSecrets(config, () => {});
  const db = await openDatabase(config);
  try {
    await db.migrate();
    const siteUrl = () => config.siteUrl ?? `http://localhost:${config.port}`;
    const files = openFiles(config, secrets, siteUrl);
    const mailer = openMailer(config, siteUrl);
    const adNetwork = await openAdNetwork(config);
    try {
      return await adminCommands[command](
        {
          db,
          secrets,
          files,
          network: adNetwork.network,
          spendApis: spendApis(config),
          mailer,
          siteUrl,
          progress,
        },
        args,
      );
    } finally {
      await adNetwork.close();
    }
  } catch (err) {
    throw new CliError(describeError(err));
  } finally {
    await db.close();
  }
}
