import { isIP } from "node:net";

/**
 * Which proxies in front of the service may name the client in `X-Forwarded-For` (Fastify's
 * `trustProxy`): the number of proxy hops, or the addresses and ranges of the trusted proxies.
 * null trusts nobody: the client is the socket's peer, whatever the header says.
 */
export type TrustProxy = number | readonly string[] | null;

/** proxy-addr's names for the usual private ranges (loopback: 127.0.0.0/8 and ::1). */
const NAMED_RANGES = new Set(["loopback", "linklocal", "uniquelocal"]);

function isAddressOrRange(entry: string): boolean {
  if (NAMED_RANGES.has(entry)) return true;
  const [address = "", prefix, extra] = entry.split("/");
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  if (prefix === undefined) return true;
  if (!/^\d{1,3}$/.test(prefix)) return false;
  return Number(prefix) <= (family === 4 ? 32 : 128);
}

/**
 * TRUST_PROXY's value: a hop count (`1` for one proxy such as Caddy on the same host), or a
 * comma-separated list of IP addresses and CIDR ranges. An error message when it is neither, so the
 * mistake is reported at start-up rather than every client sharing the proxy's address.
 */
export function parseTrustProxy(
  value: string,
): { ok: true; value: TrustProxy } | { ok: false; error: string } {
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) {
    const hops = Number(trimmed);
    // "0" hops trusts nobody, the same as leaving it unset.
    if (hops <= 100) return { ok: true, value: hops === 0 ? null : hops };
  }
  const entries = trimmed.split(",").map((entry) => entry.trim());
  const bad = entries.find((entry) => !isAddressOrRange(entry));
  if (bad === undefined) return { ok: true, value: entries };
  return {
    ok: false,
    error: `must be a hop count (0-100) or a comma-separated list of IP addresses or CIDR ranges; "${bad}" is neither`,
  };
}
