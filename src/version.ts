/**
 * The version embedded in the binary. `build.ts` defines `HUMANISH_BUILD_COMMIT` at compile
 * time; from source it is `source`.
 */
import pkg from "../package.json" with { type: "json" };

declare const HUMANISH_BUILD_COMMIT: string | undefined;

/** Semantic version from package.json, e.g. `0.1.0`. */
export const VERSION: string = pkg.version;

/** Git commit the binary was built from, or `source` when run from source. */
export const BUILD_COMMIT: string = typeof HUMANISH_BUILD_COMMIT === "string" ? HUMANISH_BUILD_COMMIT : "source";
