import { z } from "zod";
import { API_PREFIX, type RouteDef } from "../routes/route-def.ts";

/** Where the interactive reference lives, at the site's root (SPEC: the index links to it). */
export const REFERENCE_PATH = "/docs";

export interface IndexEntry {
  method: string;
  path: string;
  scope: string;
  description: string;
}

/** The index's `data`, for the OpenAPI document. */
export const indexOutput = z.object({
  name: z.string(),
  base_url: z.string(),
  reference: z.string(),
  openapi: z.string(),
  authentication: z.string(),
  routes: z.array(
    z.object({ method: z.string(), path: z.string(), scope: z.string(), description: z.string() }),
  ),
});

/** The public index at {base_url}: every route with method, scope and full path. */
export function buildIndex(routes: readonly RouteDef[], siteUrl: string): z.input<typeof indexOutput> {
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
    reference: siteUrl + REFERENCE_PATH,
    openapi: `${baseUrl}/openapi.json`,
    authentication: "Authorization: Bearer <API_KEY> (or x-api-key: <API_KEY>)",
    routes: entries,
  };
}
