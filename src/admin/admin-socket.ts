import { existsSync, mkdirSync, unlinkSync } from "node:fs";
import { createConnection, createServer, type Server } from "node:net";
import { join } from "node:path";
import { ensureAdminToken, readAdminTokenAsPeer, readOwnAdminToken, tokenMatches } from "./admin-token.ts";
import type { SettingValues } from "./command-settings.ts";
import { type AdminContext, adminCommands, describeError, isAdminCommand } from "./commands.ts";

/*
 * PGlite is single-process, and two processes opening one DATA_DIR corrupt it for good. The Unix
 * socket `DATA_DIR/ascribe.sock` is the lock: whoever opens the embedded database first binds it,
 * and keeps it until the database is closed. `ascribe serve` answers admin commands on it, running
 * them on its own handle (so nothing interleaves with requests in flight); a CLI command that opened
 * the database itself answers "busy". Protocol: one JSON line each way; the request carries the
 * proof that its sender runs as the server's user or root (admin-token.ts), else nothing runs.
 */

export function adminSocketPath(dataDir: string): string {
  return join(dataDir, "ascribe.sock");
}

interface AdminRequest {
  command: string;
  args: unknown;
  /** The content of DATA_DIR/admin.token, as read by the sender. */
  token?: unknown;
}

export type AdminReply =
  /** `settings`: the server's values of what the command depended on (command-settings.ts). */
  { ok: true; result: unknown; settings?: SettingValues } | { ok: false; error: string };

/** Carries out one admin request; what a lock holder does with the requests it receives. */
/** `progress` sends an interim line (a long import's counts) before the reply. */
export type AdminResponder = (
  request: AdminRequest,
  progress: (value: unknown) => void,
) => Promise<AdminReply>;

export class DataDirBusyError extends Error {
  constructor(dataDir: string) {
    super(`another ascribe process is using ${dataDir}`);
  }
}

function probe(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection(path);
    socket.on("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.on("error", () => resolve(false));
  });
}

/**
 * Binds the socket with mode 0600 from its first instant: a socket file takes 0777 minus the umask
 * at bind(), and listen() binds synchronously, so a umask of 0177 held around that call alone
 * gives 0600 whatever the process umask is, with no chmod afterwards (and no moment it is wider).
 */
function listen(server: Server, path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once("error", onError);
    const previous = process.umask(0o177);
    try {
      server.listen(path, () => {
        server.off("error", onError);
        resolve();
      });
    } finally {
      process.umask(previous);
    }
  });
}

const REFUSED: AdminReply = {
  ok: false,
  error: "refused: admin commands are taken only from the user running the server, or root",
};

export interface LockOptions {
  /** Told when a request came without the proof of its sender's user (nothing of it ran). */
  onRefused?: () => void;
}

/**
 * Takes DATA_DIR for this process by binding its socket, or throws DataDirBusyError when a live
 * process holds it. A socket file nobody answers on is what a process that died left behind.
 */
export async function lockDataDir(
  dataDir: string,
  respond: AdminResponder,
  options: LockOptions = {},
): Promise<Server> {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  await ensureAdminToken(dataDir);
  const path = adminSocketPath(dataDir);
  const server = createServer((socket) => {
    let buffer = "";
    socket.setEncoding("utf8");
    socket.on("error", () => socket.destroy());
    socket.on("data", (chunk: string) => {
      buffer += chunk;
      const end = buffer.indexOf("\n");
      if (end < 0) return;
      const line = buffer.slice(0, end);
      buffer = "";
      let request: AdminRequest;
      try {
        request = JSON.parse(line) as AdminRequest;
      } catch {
        socket.end(`${JSON.stringify({ ok: false, error: "unreadable request" })}\n`);
        return;
      }
      const progress = (value: unknown) => {
        if (socket.writable) socket.write(`${JSON.stringify({ progress: value })}\n`);
      };
      void (async () => {
        // The file is read at each request, so the check follows it (replaced, or made non-private).
        const expected = await readOwnAdminToken(dataDir).catch(() => null);
        if (expected === null || !tokenMatches(expected, request.token)) {
          options.onRefused?.();
          return REFUSED;
        }
        return respond(request, progress);
      })().then((reply) => socket.end(`${JSON.stringify(reply)}\n`));
    });
  });
  try {
    await listen(server, path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE") throw err;
    if (await probe(path)) throw new DataDirBusyError(dataDir);
    unlinkSync(path);
    await listen(server, path);
  }
  return server;
}

export function releaseDataDir(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** How `ascribe serve` answers: once its database is ready, it runs the command. */
export function serveAdminCommands(ready: Promise<Omit<AdminContext, "progress">>): AdminResponder {
  return async (request, progress) => {
    try {
      if (!isAdminCommand(request.command)) return { ok: false, error: `unknown command ${request.command}` };
      const context = { ...(await ready), progress };
      const result = await adminCommands[request.command](context, request.args);
      return { ok: true, result, settings: context.settings?.(request.command) };
    } catch (err) {
      return { ok: false, error: describeError(err) };
    }
  };
}

/** How a CLI process holding the database answers another one. */
export const answerBusy: AdminResponder = async () => ({
  ok: false,
  error: "another ascribe command is using the embedded database; try again",
});

/** The reply of the process holding DATA_DIR, or null when none does; interim lines go to `onProgress`. */
export async function callAdminSocket(
  dataDir: string,
  command: string,
  args: unknown,
  onProgress: (value: unknown) => void = () => {},
): Promise<AdminReply | null> {
  const path = adminSocketPath(dataDir);
  if (!existsSync(path)) return null;
  const token = await readAdminTokenAsPeer(dataDir);
  return new Promise((resolve, reject) => {
    const socket = createConnection(path);
    let buffer = "";
    let reply: AdminReply | null = null;
    let connected = false;
    socket.setEncoding("utf8");
    socket.on("connect", () => {
      connected = true;
      socket.write(`${JSON.stringify({ command, args, token })}\n`);
    });
    const take = (line: string) => {
      if (line.trim() === "") return;
      const message = JSON.parse(line) as { progress?: unknown } & Partial<AdminReply>;
      if ("progress" in message) onProgress(message.progress);
      else reply = message as AdminReply;
    };
    socket.on("data", (chunk: string) => {
      buffer += chunk;
      let end = buffer.indexOf("\n");
      while (end >= 0) {
        take(buffer.slice(0, end));
        buffer = buffer.slice(end + 1);
        end = buffer.indexOf("\n");
      }
    });
    socket.on("end", () => {
      try {
        take(buffer);
        if (reply) resolve(reply);
        else reject(new Error("the process holding DATA_DIR gave no answer"));
      } catch {
        reject(new Error("the process holding DATA_DIR gave an unreadable answer"));
      }
    });
    socket.on("error", (err: NodeJS.ErrnoException) => {
      if (!connected && (err.code === "ECONNREFUSED" || err.code === "ENOENT")) resolve(null);
      else reject(err);
    });
  });
}
