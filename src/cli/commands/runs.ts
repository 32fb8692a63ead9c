/** `humanish runs | verify | report | serve` — the run library. */
import { basename, join, relative } from "node:path";
import { defaultTrust, listRuns, parseTrust, type RunSummary, readTrustFile, resolveRunDir, runsDir, summarizeRunDir, verifyRun } from "../../bundle/index.ts";
import { formatDuration } from "../../report/html.ts";
import { type ServedState, servedState } from "../../report/served.ts";
import type { CommandOutcome } from "../output.ts";
import { type CommandContext, intFlag, strFlag } from "./context.ts";

/** `k/N` (reached the goal / participants) of a run, `—` when not recorded yet. */
export function reachedOfRun(r: RunSummary): string {
  // A continued run's denominator is its study's: each seat once, its last attempt.
  if (r.combined) return `${r.combined.reachedGoal}/${r.combined.total}`;
  return r.participants ? `${r.participants.reachedGoal}/${r.participants.total}` : "—";
}

/** The stakeholder line of a row; a dry run says nobody ran instead of "0/N reached the goal". */
function lineOfRun(r: RunSummary): string {
  if (r.mode === "dry-run" && r.participants) {
    const tasks = r.tasks.length ? `; tasks: ${r.tasks.map((t) => t.id).join(" · ")}` : "";
    return `dry run (contract only): 0/${r.participants.total} participants ran${tasks}`;
  }
  if (r.combined) return `${r.combined.line}; this run (continues ${r.continues}): ${r.line ?? r.verdict ?? ""}`;
  if (r.continues) return `${r.line ?? r.verdict ?? ""} (continues ${r.continues}, which is not here with the SHA-256 it recorded: no combined result)`;
  return r.line ?? r.verdict ?? "";
}

/**
 * Warnings after the state: a sealed run whose bundle does not verify (its headline is no result),
 * a run that failed as a whole (its k/N is no product result), a
 * sealed run whose cleanup is not proven (a sandbox may still be alive, or billing), and
 * participants who claimed success while the hidden checks say they did not (a finding).
 */
function flagsOfRun(r: RunSummary, v: ServedState | undefined): string {
  const failed = `${v?.kind === "not_verified" ? ` · ${v.label}` : ""}${r.failure ? ` · FAILED (${r.failure})` : ""}`;
  const n = r.cleanupUnproven ?? 0;
  const c = r.contradictedClaims ?? [];
  const claims = c.length ? ` · CLAIM CONTRADICTED (${c.join(", ")}: believed ${c.length === 1 ? "it" : "they"} succeeded; the checks say not)` : "";
  return `${failed}${n ? ` · CLEANUP UNPROVEN (${n} resource${n === 1 ? "" : "s"} retained or unconfirmed)` : ""}${claims}`;
}

/**
 * `runs`: every run, newest first. Human output is one aligned row per run: id, `k/N` reached
 * the goal, lab · route · mode · state (flagged when the run failed or its cleanup is unproven), the stakeholder line,
 * cost (`unmeasured` when any cost line is) and duration.
 */
export async function runsCommand(ctx: CommandContext): Promise<CommandOutcome> {
  const listed = await listRuns(ctx.cwd);
  // A sealed run is verified before its headline is shown: a bundle edited after the seal must
  // not read as a result. Verify is bounded in memory, so this costs time, not risk.
  const trust = defaultTrust(ctx.env);
  const states = new Map<string, ServedState>();
  for (const r of listed) {
    if (r.derivedFrom === "bundle") states.set(r.runId, servedState(await verifyRun(join(runsDir(ctx.cwd), r.runId), { trust })));
  }
  const runs = listed.map((r) => {
    const st = states.get(r.runId);
    return { ...r, verify: st ? { state: st.kind, label: st.label } : null };
  });
  const idWidth = Math.max(3, ...runs.map((r) => r.runId.length));
  const knWidth = Math.max(3, ...runs.map((r) => reachedOfRun(r).length));
  const human = runs.length
    ? [
        `${"run".padEnd(idWidth)}  ${"k/N".padStart(knWidth)}  lab · route · mode · state`,
        ...runs.map(
          (r) =>
            `${r.runId.padEnd(idWidth)}  ${reachedOfRun(r).padStart(knWidth)}  ${r.lab ?? "?"} · ${r.route ?? "?"} · ${r.mode ?? "?"} · ${r.liveness}${flagsOfRun(r, states.get(r.runId))}  ${lineOfRun(r)}  cost ${r.costLabel} · ${r.durationMs === null ? "duration unknown" : formatDuration(r.durationMs)}`,
        ),
      ].join("\n")
    : "no runs yet: humanish lab run default";
  return { result: { schema: ctx.spec.schema, ok: true, cwd: ctx.cwd, runs }, human };
}

/**
 * `verify [--run ID|latest] [--trust KEYS]`: exit 0 iff the bundle verifies. It is shareable only
 * when signed by the local user's key or one named with `--trust`.
 */
export async function verifyCommand(ctx: CommandContext): Promise<CommandOutcome> {
  const runDir = await resolveRunDir(ctx.cwd, strFlag(ctx, "run") ?? "latest");
  const extra = parseTrust([strFlag(ctx, "trust") ?? ""], readTrustFile);
  const v = await verifyRun(runDir, { trust: defaultTrust(ctx.env, extra) });
  const failed = v.checks.filter((c) => !c.ok);
  const human = [
    `${relative(ctx.cwd, runDir)}: ${v.ok ? "verified" : "NOT verified"} · share safety ${v.shareSafety.status}${v.shareSafety.reasons.length ? ` (${v.shareSafety.reasons.map((r) => r.code).join(", ")})` : ""}`,
    ...v.checks.map((c) => `  ${c.ok ? "✓" : "✗"} ${c.name}${c.ok ? "" : `: ${c.message}`}`),
    ...(v.signer ? [`  signer ${v.signer.fingerprint} (${v.signer.trusted ? "trusted" : "not trusted: pass --trust to trust it"})`] : []),
    // A check can pass and still warn (an old bundle whose headline counted a claim): say so here too.
    ...(v.warnings ?? []).map((w) => `  ! ${w}`),
  ].join("\n");
  // A run whose controller is still alive has not sealed its bundle yet: say so, not "re-run".
  const running = !v.ok && (await summarizeRunDir(ctx.cwd, basename(runDir)))?.liveness === "running";
  const error = running
    ? {
        code: "HUMANISH_RUN_IN_PROGRESS",
        message: `run ${basename(runDir)} is still running; its bundle is sealed (and verifiable) only when the run ends`,
        next: `wait until \`humanish runs\` shows it finished, then: humanish verify --run ${basename(runDir)}`,
      }
    : {
        code: "HUMANISH_INVALID_RUN_BUNDLE",
        message: `${failed.length} check(s) failed: ${failed.map((c) => c.name).join(", ")}`,
        next: "treat this run as failed; re-run the lab",
      };
  const result = {
    ...v,
    schema: "humanish.verify-result.v1",
    ok: v.ok,
    runDir: relative(ctx.cwd, runDir),
    ...(v.ok ? {} : { error }),
  };
  return { result, human };
}

/** `report [--run ID|latest] [--open]`: (re)write report/index.html. */
export async function reportCommand(ctx: CommandContext): Promise<CommandOutcome> {
  const runDir = await resolveRunDir(ctx.cwd, strFlag(ctx, "run") ?? "latest");
  const { writeReport } = await import("../../report/index.ts");
  const { path } = await writeReport(runDir);
  if (ctx.flags.open) openInBrowser(path);
  return {
    result: { schema: ctx.spec.schema, ok: true, runDir: relative(ctx.cwd, runDir), path: relative(ctx.cwd, path) },
    human: `report: ${relative(ctx.cwd, path)}`,
  };
}

/** `serve [--port P] [--host 127.0.0.1]`: the run library on loopback until SIGINT/SIGTERM. */
export async function serveCommand(ctx: CommandContext): Promise<CommandOutcome> {
  const { startLibraryServer } = await import("../../report/index.ts");
  const port = intFlag(ctx, "port", 0, "HUMANISH_INVALID_PORT");
  const server = await startLibraryServer({ cwd: ctx.cwd, host: strFlag(ctx, "host") ?? "127.0.0.1", port, trust: defaultTrust(ctx.env) });
  if (ctx.json) ctx.io.stdout(`${JSON.stringify({ schema: ctx.spec.schema, ok: true, url: server.url, mode: "loopback" })}\n`);
  else ctx.io.stderr(`serving the run library at ${server.url} (Ctrl+C to stop)\n`);
  const sig = await new Promise<"SIGINT" | "SIGTERM">((res) => {
    process.once("SIGINT", () => res("SIGINT"));
    process.once("SIGTERM", () => res("SIGTERM"));
  });
  await server.stop();
  // The JSON document was already printed at start; exit without a second one.
  return {
    result: { schema: ctx.spec.schema, ok: true, url: server.url, stoppedBy: sig },
    human: "stopped",
    exitCode: sig === "SIGINT" ? 130 : 143,
    printed: true,
  };
}

function openInBrowser(path: string): void {
  const opener = Bun.which("xdg-open") ?? Bun.which("open");
  if (opener) Bun.spawn([opener, path], { stdout: "ignore", stderr: "ignore", stdin: "ignore" }).unref();
}
