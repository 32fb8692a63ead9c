/**
 * Command path (`"lab run"`) → the loader of its handler. Every entry of spec.ts COMMANDS has one.
 * Handlers load on demand, so a command evaluates only its own module graph: `runs` or `report`
 * never pays for the tokenizer tables `analyze` needs, nor the guest and Docker code of `lab run`.
 */
import type { Handler } from "./context.ts";

export type { CommandContext, Handler } from "./context.ts";

const LOADERS: Record<string, () => Promise<Handler>> = {
  "lab list": async () => (await import("./lab.ts")).labList,
  "lab inspect": async () => (await import("./lab.ts")).labInspect,
  "lab run": async () => (await import("./lab.ts")).labRun,
  watch: async () => (await import("./watch.ts")).watchCommand,
  runs: async () => (await import("./runs.ts")).runsCommand,
  "runs compare": async () => (await import("./compare.ts")).compareCommand,
  verify: async () => (await import("./runs.ts")).verifyCommand,
  keys: async () => (await import("./keys.ts")).keysCommand,
  types: async () => (await import("./types.ts")).typesCommand,
  export: async () => (await import("./export.ts")).exportCommand,
  report: async () => (await import("./runs.ts")).reportCommand,
  analyze: async () => (await import("./analyze.ts")).analyzeCommand,
  "analyze show": async () => (await import("./analyze.ts")).analyzeShowCommand,
  serve: async () => (await import("./runs.ts")).serveCommand,
  doctor: async () => (await import("./runtime.ts")).doctorCommand,
  "runtime status": async () => (await import("./runtime.ts")).runtimeStatus,
  "runtime setup": async () => (await import("./runtime.ts")).runtimeSetup,
  "runtime prune": async () => (await import("./runtime.ts")).runtimePrune,
  init: async () => (await import("./servers.ts")).initCommand,
  "env serve": async () => (await import("./servers.ts")).envServeCommand,
  "guest serve": async () => (await import("./servers.ts")).guestServeCommand,
};

/** Every command path that has a handler. */
export const COMMAND_PATHS: readonly string[] = Object.keys(LOADERS);

/** The handler of command path `name` (its module evaluated now), or undefined for an unknown path. */
export async function loadHandler(name: string): Promise<Handler | undefined> {
  return LOADERS[name]?.();
}
