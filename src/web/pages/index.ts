import { overviewPage } from "./overview-page.tsx";

/** Every report page of the application, registered from this list. */
export const reportPages = [overviewPage];
