/**
 * The closed list of web apps compiled into the humanish binary, usable as a browser lab's
 * `subject.serve.static.root: "embedded:<name>"` (so a lab runs on a machine with no app files,
 * e.g. the downloaded single binary in an empty directory). The files themselves are embedded by
 * `src/routes/browser/embedded-app.ts`; this module only names them, so the lab schema can
 * validate a root without loading any app bytes.
 */

/** Prefix of a `subject.serve.static.root` that names an embedded app instead of a directory. */
export const EMBEDDED_ROOT_PREFIX = "embedded:";

/**
 * Names of the embedded apps:
 * - `todomvc-vanillajs` — `examples/vanillajs` of the npm package `todomvc@0.1.1` (index.html,
 *   js/*.js and bower_components/todomvc-common/{base.css,base.js,bg.png}).
 */
export const EMBEDDED_APP_NAMES = ["todomvc-vanillajs"] as const;

/** One embedded app's name. */
export type EmbeddedAppName = (typeof EMBEDDED_APP_NAMES)[number];

/** True when `name` is in {@link EMBEDDED_APP_NAMES}. */
export function isEmbeddedAppName(name: string): name is EmbeddedAppName {
  return (EMBEDDED_APP_NAMES as readonly string[]).includes(name);
}

/**
 * The embedded-app part of a static root: `undefined` when `root` is a project-relative directory
 * (no `embedded:` prefix), otherwise the text after the prefix (not yet checked against the list).
 */
export function embeddedRootName(root: string): string | undefined {
  return root.startsWith(EMBEDDED_ROOT_PREFIX) ? root.slice(EMBEDDED_ROOT_PREFIX.length) : undefined;
}
