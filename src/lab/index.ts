/**
 * The lab manifest layer (`humanish.lab.v2`): schema, strict parsing, routing, resolution and
 * the embedded labs. Reference: contracts.md §1 and §6.3; issue 2 §3–§4; issue 4 §6.
 *
 * - `parseLab(text, {source})` → `{ok, config, warnings}` | `{ok: false, error}`; never throws.
 * - `loadLab(ref, cwd)` resolves an id or path (then the embedded labs) and validates it.
 * - `listLabs(cwd)` lists every resolvable lab with its route or parse error.
 * - `selectLabBackend`, `routesToTerminalProduct`, `routesToBrowserApp` decide the route.
 */

export { taskGoalsBrief } from "./brief.ts";
export { EMBEDDED_ALIASES, EMBEDDED_LABS, type EmbeddedLab, findEmbeddedLab } from "./embedded.ts";
export { EMBEDDED_APP_NAMES, EMBEDDED_ROOT_PREFIX, type EmbeddedAppName, embeddedRootName, isEmbeddedAppName } from "./embedded-apps.ts";
export {
  LAB_SEARCH_DIRS,
  type LabListEntry,
  type LabOrigin,
  type LoadedLab,
  labSearchPaths,
  listLabs,
  loadLab,
  looksLikeLabPath,
} from "./load.ts";
export { MAX_LAB_TEXT_LENGTH, type ParseLabOptions, type ParseLabResult, parseLab } from "./parse.ts";
export {
  isBrowserLab,
  isTerminalLab,
  type LabBackend,
  labDevices,
  ROUTE_ACTOR_TYPES,
  ROUTE_SOURCES,
  resolveLabMode,
  routesToBrowserApp,
  routesToComputerUse,
  routesToScriptedBrowser,
  routesToTerminalProduct,
  selectLabBackend,
} from "./routing.ts";
export * from "./schema.ts";
