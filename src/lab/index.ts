/**
 * The lab manifest layer (`humanish.lab.v2`): schema, strict parsing, routing, resolution and
 * the embedded labs. Reference: contracts.md §1 and §6.3; issue 2 §3–§4; issue 4 §6.
 *
 * - `parseLab(text, {source})` → `{ok, config, warnings}` | `{ok: false, error}`; never throws.
 * - `loadLab(ref, cwd)` resolves an id or path (then the embedded labs) and validates it.
 * - `listLabs(cwd)` lists every resolvable lab with its route or parse error.
 * - `selectLabBackend`, `routesToTerminalProduct`, `routesToBrowserApp` decide the route.
 */
export { parseLab, MAX_LAB_TEXT_LENGTH, type ParseLabOptions, type ParseLabResult } from "./parse.ts";
export {
  loadLab,
  listLabs,
  looksLikeLabPath,
  labSearchPaths,
  LAB_SEARCH_DIRS,
  type LoadedLab,
  type LabListEntry,
  type LabOrigin,
} from "./load.ts";
export {
  selectLabBackend,
  routesToTerminalProduct,
  routesToBrowserApp,
  routesToScriptedBrowser,
  routesToComputerUse,
  isTerminalLab,
  isBrowserLab,
  labDevices,
  resolveLabMode,
  ROUTE_ACTOR_TYPES,
  ROUTE_SOURCES,
  type LabBackend,
} from "./routing.ts";
export { taskGoalsBrief } from "./brief.ts";
export { EMBEDDED_LABS, EMBEDDED_ALIASES, findEmbeddedLab, type EmbeddedLab } from "./embedded.ts";
export * from "./schema.ts";
export { EMBEDDED_APP_NAMES, EMBEDDED_ROOT_PREFIX, embeddedRootName, isEmbeddedAppName, type EmbeddedAppName } from "./embedded-apps.ts";
