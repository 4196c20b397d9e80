import { API_PREFIX, type RouteDef } from "../routes/route-def.ts";

export interface IndexEntry {
  method: string;
  path: string;
  scope: string;
  description: string;
}

/** The public index at {base_url}: every route with method, scope and full path. */
export function buildIndex(routes: readonly RouteDef[], siteUrl: string) {
  const baseUrl = siteUrl + API_PREFIX;
  const entries: IndexEntry[] = routes.flatMap((route) =>
    route.methods.map((method) => ({
      method,
      path: baseUrl + route.path,
      scope: route.scope,
      description: route.description,
    })),
  );
  return {
    name: "Ascribe API",
    base_url: baseUrl,
    reference: `${baseUrl}/openapi.json`,
    authentication: "Authorization: Bearer <API_KEY> (or x-api-key: <API_KEY>)",
    routes: entries,
  };
}
