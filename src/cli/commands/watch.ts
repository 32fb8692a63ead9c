/**
 * `humanish watch [RUN]` — the Observer page of a run (default the latest), fed from its run
 * directory as another process writes it, until SIGINT/SIGTERM.
 */
import { basename } from "node:path";
import { resolveRunDir, safeReadFile } from "../../bundle/index.ts";
import { loadLab } from "../../lab/index.ts";
import type { ObserverPlan } from "../../observer/index.ts";
import type { CommandOutcome } from "../output.ts";
import { type CommandContext, strFlag } from "./context.ts";

/** The run's planned seats and caps, from the lab its status names when that lab still loads here. */
async function planOfRun(ctx: CommandContext, runDir: string): Promise<ObserverPlan | null> {
  const { observerPlanOf } = await import("../../observer/index.ts");
  const r = safeReadFile(`${runDir}/status.json`, 1024 * 1024);
  if (!r.ok) return null;
  try {
    const lab = (JSON.parse(new TextDecoder().decode(r.bytes)) as { lab?: unknown }).lab;
    if (typeof lab !== "string") return null;
    return observerPlanOf((await loadLab(lab, ctx.cwd)).config);
  } catch {
    // the lab moved or changed: seats are then discovered from the run directory alone
    return null;
  }
}

/**
 * Serves the Observer of `[run]` until a signal.
 * @throws HumanishError HUMANISH_RUN_NOT_FOUND, HUMANISH_PORT_IN_USE, HUMANISH_INVALID_PORT
 */
export async function watchCommand(ctx: CommandContext): Promise<CommandOutcome> {
  const { checkObserverPort, startObserver } = await import("../../observer/index.ts");
  const port = checkObserverPort(strFlag(ctx, "port") ?? "0");
  const runDir = await resolveRunDir(ctx.cwd, ctx.args.run ?? "latest");
  const runId = basename(runDir);
  const observer = startObserver({ runId, runDir, cwd: ctx.cwd, secrets: ctx.secrets, plan: await planOfRun(ctx, runDir), port });
  if (ctx.json) ctx.io.stdout(`${JSON.stringify({ schema: ctx.spec.schema, ok: true, runId, watchUrl: observer.url })}\n`);
  else ctx.io.stderr(`humanish: observer of ${runId} at ${observer.url} (Ctrl+C to stop)\n`);
  const sig = await new Promise<"SIGINT" | "SIGTERM">((res) => {
    process.once("SIGINT", () => res("SIGINT"));
    process.once("SIGTERM", () => res("SIGTERM"));
  });
  await observer.stop();
  return {
    result: { schema: ctx.spec.schema, ok: true, runId, watchUrl: observer.url, stoppedBy: sig },
    human: "stopped",
    exitCode: sig === "SIGINT" ? 130 : 143,
    printed: true,
  };
}
