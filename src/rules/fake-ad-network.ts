import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeCall {
  method: string;
  path: string;
  fields: Record<string, string>;
  token: string | null;
}

/**
 * A loopback stand-in for the part of Meta's Graph API the rule engine calls, so the real network
 * code runs in tests and in the demo: ads have a status, campaigns a daily budget (cents), every
 * call is recorded, and `failNext` makes the next calls answer 500. Campaigns it does not know have
 * `defaultBudgetCents` (none: 404).
 */
export interface FakeAdNetwork {
  url: string;
  calls: FakeCall[];
  adStatus: Map<string, string>;
  /** Campaign id → daily budget in cents. */
  budgets: Map<string, number>;
  failNext(count: number): void;
  close(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<string> {
  let body = "";
  for await (const chunk of request) body += chunk;
  return body;
}

export async function startFakeAdNetwork(
  options: { budgets?: Record<string, number>; defaultBudgetCents?: number } = {},
): Promise<FakeAdNetwork> {
  const calls: FakeCall[] = [];
  const adStatus = new Map<string, string>();
  const budgets = new Map(Object.entries(options.budgets ?? {}));
  let failures = 0;
  const server: Server = createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", "http://fake");
    const fields = Object.fromEntries(new URLSearchParams(await readBody(request)));
    const auth = request.headers.authorization ?? "";
    const call = {
      method: request.method ?? "",
      path: url.pathname,
      fields,
      token: auth.startsWith("Bearer ") ? auth.slice(7) : null,
    };
    calls.push(call);
    const answer = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(body));
    };
    if (failures > 0) {
      failures -= 1;
      return answer(500, {
        error: { message: "An unexpected error has occurred. Please retry your request later." },
      });
    }
    if (!call.token) return answer(401, { error: { message: "An access token is required" } });
    const id = url.pathname.split("/").pop() ?? "";
    if (call.method === "GET" && url.searchParams.get("fields") === "daily_budget") {
      const cents = budgets.get(id) ?? options.defaultBudgetCents;
      return cents === undefined
        ? answer(404, { error: { message: "Unknown campaign" } })
        : answer(200, { id, daily_budget: String(cents) });
    }
    if (call.method === "POST" && fields.status) {
      adStatus.set(id, fields.status);
      return answer(200, { success: true });
    }
    if (call.method === "POST" && fields.daily_budget) {
      budgets.set(id, Number(fields.daily_budget));
      return answer(200, { success: true });
    }
    return answer(400, { error: { message: "Unsupported request" } });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v21.0`,
    calls,
    adStatus,
    budgets,
    failNext(count) {
      failures = count;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
