/** The repository root (where package.json is). */
export declare const ROOT: string;
/** The file scripts/build.js writes last into dist/. */
export declare const STAMP_NAME: string;
/** Whether dist/ is a build of the current src/ (and package.json, tsconfig*.json) under `root`. */
export declare function buildState(root?: string): "current" | "stale" | "absent";
