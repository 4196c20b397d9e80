import { Option } from "commander";
import type { AdminCommand } from "../admin/commands.ts";

/** A command's refusal: its message is the one line printed. */
export class CliError extends Error {}

/**
 * Runs an admin command (run-admin.ts), loading the service's modules only now: `--help` and
 * `--version` never pay for them.
 */
export async function admin(
  command: AdminCommand,
  args: unknown,
  onProgress?: (value: unknown) => void,
): Promise<unknown> {
  const [{ loadConfig }, { runAdmin }] = await Promise.all([
    import("../config.ts"),
    import("./run-admin.ts"),
  ]);
  return runAdmin(loadConfig(), command, args, onProgress);
}

export function print(result: unknown, json: boolean, human: (r: never) => string) {
  process.stdout.write(json ? `${JSON.stringify(result)}\n` : `${human(result as never)}\n`);
}

/**
 * A command that did its work but not all of it (bad import lines, failed rule actions): its report
 * is printed as usual, then one line on stderr, and the exit code is 2 (1: nothing was done).
 */
export function partialFailure(message: string): void {
  process.stderr.write(`ascribe: ${message}\n`);
  process.exitCode = 2;
}

export interface Invitation {
  invite_url?: string;
  mailed?: boolean;
  mail_error?: string;
}

/** The one-time link line of a command that invites someone. */
export function invitationLine(i: Invitation, email: string | undefined): string {
  if (!i.invite_url) return "";
  const sent = i.mailed
    ? ` (also mailed to ${email})`
    : i.mail_error
      ? ` (mailing it failed: ${i.mail_error})`
      : "";
  return `\n  one-time link for ${email} to choose a password (valid 7 days)${sent}:\n  ${i.invite_url}`;
}

export const jsonOption = () => new Option("--json", "print JSON instead of text");

export const accountOption = () =>
  new Option("--account <id>", "the account's id (UUID)").makeOptionMandatory();

/** A table for a terminal: columns padded to their widest cell, two spaces apart. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  return rows
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}
