import { routes } from "../../src/routes/index.ts";
import { securitySuite } from "../helpers/security-suite.ts";

securitySuite(routes);
