import { adsRoutes } from "./ads.ts";
import { attributionRoutes } from "./attribution.ts";
import { callsRoutes } from "./calls.ts";
import { capiRoutes } from "./capi.ts";
import { contactsRoutes } from "./contacts.ts";
import { creativesRoutes } from "./creatives.ts";
import { dashboardRoutes } from "./dashboard.ts";
import { eventsRoutes } from "./events.ts";
import { financeRoutes } from "./finance.ts";
import { funnelRoutes } from "./funnel.ts";
import { goalRoutes } from "./goals.ts";
import { icpRoutes } from "./icp.ts";
import { journeysRoutes } from "./journeys.ts";
import type { RouteDef } from "./route-def.ts";
import { salesRoutes } from "./sales.ts";
import { settingsRoutes } from "./settings.ts";

/** Every key-authenticated route of the API. */
export const routes: readonly RouteDef[] = [
  ...dashboardRoutes,
  ...icpRoutes,
  ...goalRoutes,
  ...settingsRoutes,
  ...adsRoutes,
  ...eventsRoutes,
  ...attributionRoutes,
  ...salesRoutes,
  ...financeRoutes,
  ...funnelRoutes,
  ...contactsRoutes,
  ...callsRoutes,
  ...journeysRoutes,
  ...creativesRoutes,
  ...capiRoutes,
];
