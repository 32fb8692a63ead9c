/** Command path (`"lab run"`) → handler. Every entry of spec.ts COMMANDS has one. */
import { analyzeCommand, analyzeShowCommand } from "./analyze.ts";
import { compareCommand } from "./compare.ts";
import type { Handler } from "./context.ts";
import { exportCommand } from "./export.ts";
import { keysCommand } from "./keys.ts";
import { labInspect, labList, labRun } from "./lab.ts";
import { reportCommand, runsCommand, serveCommand, verifyCommand } from "./runs.ts";
import { doctorCommand, runtimePrune, runtimeSetup, runtimeStatus } from "./runtime.ts";
import { envServeCommand, guestServeCommand, initCommand } from "./servers.ts";
import { typesCommand } from "./types.ts";
import { watchCommand } from "./watch.ts";

export type { CommandContext, Handler } from "./context.ts";

export const HANDLERS: Record<string, Handler> = {
  "lab list": labList,
  "lab inspect": labInspect,
  "lab run": labRun,
  watch: watchCommand,
  runs: runsCommand,
  "runs compare": compareCommand,
  verify: verifyCommand,
  keys: keysCommand,
  types: typesCommand,
  export: exportCommand,
  report: reportCommand,
  analyze: analyzeCommand,
  "analyze show": analyzeShowCommand,
  serve: serveCommand,
  doctor: doctorCommand,
  "runtime status": runtimeStatus,
  "runtime setup": runtimeSetup,
  "runtime prune": runtimePrune,
  init: initCommand,
  "env serve": envServeCommand,
  "guest serve": guestServeCommand,
};
