/** `humanish lab list | inspect | run` — parse and print; the study itself lives in src/routes/. */
import { relative } from "node:path";
import { assertRunId, newRunId } from "../../bundle/index.ts";
import { HumanishError } from "../../errors.ts";
import { listLabs, loadLab, resolveLabMode, selectLabBackend } from "../../lab/index.ts";
import { runStudy, type StudyContext, type StudyResult } from "../../routes/index.ts";
import { secretIn } from "../../secrets/index.ts";
import { type CommandOutcome, failure } from "../output.ts";
import { createProgressDisplay } from "../progress.ts";
import { type CommandContext, strFlag } from "./context.ts";

/** `lab list`: always exit 0; labs that fail to parse are listed with their error. */
export async function labList(ctx: CommandContext): Promise<CommandOutcome> {
  const labs = await listLabs(ctx.cwd);
  const human = labs.length
    ? labs
        .map(
          (l) =>
            `${l.id.padEnd(24)} ${String(l.route ?? "invalid").padEnd(9)} ${l.source}${l.error ? `  ✗ ${l.error.message}` : l.title ? `  ${l.title}` : ""}`,
        )
        .join("\n")
    : "no labs yet: humanish init";
  return { result: { schema: ctx.spec.schema, ok: true, cwd: ctx.cwd, labs }, human };
}

/** `lab inspect <lab>`: the validated config, route and warnings. */
export async function labInspect(ctx: CommandContext): Promise<CommandOutcome> {
  const loaded = await loadLab(ctx.args.lab!, ctx.cwd);
  const route = selectLabBackend(loaded.config);
  const human = [
    `${loaded.config.id} · ${route} · ${loaded.config.scenario?.mode ?? "dry-run"}  (${loaded.ref})`,
    loaded.config.title ? `title: ${loaded.config.title}` : "",
    ...loaded.warnings.map((w) => `warning ${w.code}: ${w.message}`),
    "",
    JSON.stringify(loaded.config, null, 2),
  ]
    .filter((l) => l !== "")
    .join("\n");
  return {
    result: {
      schema: ctx.spec.schema,
      ok: true,
      cwd: ctx.cwd,
      lab: loaded.config.id,
      ref: loaded.ref,
      sha256: loaded.sha256,
      route,
      config: loaded.config,
      warnings: loaded.warnings,
    },
    human,
  };
}

/**
 * `lab run <lab>`: resolve → route → the route's study. SIGINT/SIGTERM abort the study; the
 * route still tears down and writes the bundle, then we exit 130/143.
 */
export async function labRun(ctx: CommandContext): Promise<CommandOutcome> {
  if (ctx.flags["dry-run"] && ctx.flags.live) {
    throw new HumanishError("HUMANISH_LAB_OPTION_CONFLICT", "--dry-run and --live cannot be combined", { next: "pass one of --dry-run or --live" });
  }
  const loaded = await loadLab(ctx.args.lab!, ctx.cwd);
  const route = selectLabBackend(loaded.config);
  const mode = resolveLabMode(loaded.config, ctx.flags.live ? "live" : ctx.flags["dry-run"] ? "dry-run" : undefined);
  const requested = strFlag(ctx, "run-id");
  if (requested !== undefined) assertRunId(requested);
  const runId = requested ?? newRunId(loaded.config.id);
  // An identifier becomes a directory name and structure in every file, which is never scrubbed:
  // one that carries a secret value is refused before anything is written.
  for (const [what, value, fix] of [
    ["run id", runId, "choose another --run-id (or omit it)"],
    ["lab id", loaded.config.id, `rename the lab's id in ${loaded.ref}`],
  ] as const) {
    if (secretIn(value, ctx.secrets) !== undefined) {
      throw new HumanishError("HUMANISH_SECRET_IN_IDENTIFIER", `the ${what} contains the value of a secret variable; nothing was written`, {
        next: fix,
      });
    }
  }

  const controller = new AbortController();
  let interrupted: "SIGINT" | "SIGTERM" | undefined;
  let signals = 0;
  const onSignal = (sig: "SIGINT" | "SIGTERM") => () => {
    signals++;
    if (!interrupted) {
      interrupted = sig;
      if (!ctx.json) ctx.io.stderr(`\nhumanish: ${sig} — stopping the participant, then releasing its sandbox and writing the bundle\n`);
      controller.abort(sig);
    } else if (signals === 2) {
      if (!ctx.json)
        ctx.io.stderr("humanish: cleanup is running; one more signal quits without waiting (the next humanish command then releases what is left)\n");
    } else {
      process.exit(sig === "SIGINT" ? 130 : 143);
    }
  };
  const sigint = onSignal("SIGINT");
  const sigterm = onSignal("SIGTERM");
  process.on("SIGINT", sigint);
  process.on("SIGTERM", sigterm);

  const display = ctx.json
    ? undefined
    : createProgressDisplay({ stream: { write: (s: string) => ctx.io.stderr(s), columns: process.stderr.columns }, isTTY: ctx.io.stderrIsTTY });
  const study: StudyContext<typeof loaded.config> = {
    cwd: ctx.cwd,
    lab: loaded.config,
    labSource: { ref: loaded.ref, sha256: loaded.sha256 },
    labWarnings: loaded.warnings,
    runId,
    mode,
    env: ctx.env,
    secrets: ctx.secrets,
    signal: controller.signal,
    progress: display ? (e) => display.update(e) : () => {},
  };
  let result: StudyResult;
  try {
    result = await runStudy(study);
  } catch (e) {
    // Interrupted before the run existed (e.g. during preflight or an image build): still 130/143.
    if (interrupted) {
      const outcome = failure("humanish.lab-run-result.v1", e, { lab: loaded.config.id, interrupted });
      return { ...outcome, exitCode: interrupted === "SIGINT" ? 130 : 143 };
    }
    throw e;
  } finally {
    display?.done();
    process.off("SIGINT", sigint);
    process.off("SIGTERM", sigterm);
  }
  const why = result.interrupted ?? interrupted;
  const schema = route === "terminal" ? "humanish.terminal-lab-result.v1" : "humanish.browser-lab-result.v1";
  // Project-relative, so scripts can use it (an absolute local path is redacted from stdout).
  const runDir = relative(ctx.cwd, result.runDir) || result.runDir;
  const envelope = { schema, ...result, runDir, ok: result.ok && !why, lab: loaded.config.id, labRef: loaded.ref, ...(why ? { interrupted: why } : {}) };
  if (why && !envelope.error) {
    envelope.error = {
      code: "HUMANISH_INTERRUPTED",
      message: `the run was interrupted by ${why}; cleanup ran and the partial bundle is in ${runDir}`,
      next: `humanish verify --run ${result.runId}`,
    };
  }
  return { result: envelope, human: renderStudy(envelope), exitCode: why ? (why === "SIGINT" ? 130 : 143) : envelope.ok ? 0 : 2 };
}

/** Human summary; `r.runDir` is already project-relative. */
function renderStudy(r: StudyResult & { lab: string }): string {
  const dir = r.runDir;
  const lines = [`${r.lab} · ${r.route} · ${r.mode}`, r.verdict];
  for (const p of r.participants) lines.push(`participant ${p.id}: ${p.status} (${p.completionReason})`);
  lines.push(`run:    ${dir}`);
  lines.push(`verify: ${r.verify.ok ? "ok" : "FAILED"} · ${r.verify.shareSafety}`);
  lines.push(`report: ${dir}/report/index.html`);
  for (const w of r.warnings) lines.push(`warning ${w.code}: ${w.message}`);
  if (r.mode === "dry-run") lines.push("dry run: contract only, nothing was started or spent; add --live to run it for real");
  return lines.join("\n");
}
