/**
 * The lab manifest layer (`humanish.lab.v2`): schema, strict parsing, routing, resolution and
 * the embedded labs. Lab keys and schema ids stay compatible with the upstream lab v2 contract.
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
export { MAX_LAB_BYTES, type ParseLabOptions, type ParseLabResult, parseLab } from "./parse.ts";
export {
  isBrowserLab,
  isTerminalLab,
  type LabBackend,
  labDevices,
  labSeats,
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
export { browserSeatDevices, expandSeats, isDevicePair, type SeatSpec } from "./seats.ts";
