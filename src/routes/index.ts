import { adsRoutes } from "./ads.ts";
import { dashboardRoutes } from "./dashboard.ts";
import { goalRoutes } from "./goals.ts";
import { icpRoutes } from "./icp.ts";
import type { RouteDef } from "./route-def.ts";

/** Every key-authenticated route of the API. */
export const routes: readonly RouteDef[] = [
  ...dashboardRoutes,
  ...icpRoutes,
  ...goalRoutes,
  ...adsRoutes,
];
