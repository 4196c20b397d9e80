import { adsRoutes } from "./ads.ts";
import { attributionRoutes } from "./attribution.ts";
import { dashboardRoutes } from "./dashboard.ts";
import { eventsRoutes } from "./events.ts";
import { goalRoutes } from "./goals.ts";
import { icpRoutes } from "./icp.ts";
import type { RouteDef } from "./route-def.ts";

/** Every key-authenticated route of the API. */
export const routes: readonly RouteDef[] = [
  ...dashboardRoutes,
  ...icpRoutes,
  ...goalRoutes,
  ...adsRoutes,
  ...eventsRoutes,
  ...attributionRoutes,
];
