import { attributionPage } from "./attribution-page.tsx";
import { callPage } from "./call-page.tsx";
import { callsPage } from "./calls-page.tsx";
import { contactsPage } from "./contacts-page.tsx";
import { funnelPage } from "./funnel-page.tsx";
import { journeyPage } from "./journey-page.tsx";
import { overviewPage } from "./overview-page.tsx";
import { salesPage } from "./sales-page.tsx";

/** Every report page of the application, registered from this list. */
export const reportPages = [
  overviewPage,
  attributionPage,
  salesPage,
  funnelPage,
  contactsPage,
  journeyPage,
  callsPage,
  callPage,
];
