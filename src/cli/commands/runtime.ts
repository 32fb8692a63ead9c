/**
 * `humanish runtime status | setup | prune` and `humanish doctor`: what this machine can run.
 * Status never builds, pulls or starts anything; setup builds the images from their embedded
 * recipes through the Engine API, or loads a verified archive; prune removes stale humanish
 * images by exact id (src/runtime/prune.ts).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { checkCodexAccountLauncher } from "../../actors/codex-account/readiness.ts";
import { codexModel } from "../../actors/codex-exec/index.ts";
import { checkScorerRef } from "../../adapters/load.ts";
import { configDir } from "../../bundle/index.ts";
import { dockerClientFor } from "../../docker/index.ts";
import { errorMessage, HumanishError, isHumanishError } from "../../errors.ts";
import { loadLab, selectLabBackend } from "../../lab/index.ts";
import { checkE2BDesktopLab, DEFAULT_E2B_DESKTOP_TEMPLATE } from "../../lanes/e2b-desktop/doctor.ts";
import { checkE2BTemplate } from "../../lanes/e2b-terminal/preflight.ts";
import { ratesReport } from "../../models/rate-file.ts";
import { modelReadiness } from "../../models/readiness.ts";
import { type PruneResult, pruneImages } from "../../runtime/prune.ts";
import { type RuntimeResult, runtimeStatus as readRuntimeStatus, type SetupOnly, runtimeSetup as setupRuntime } from "../../runtime/status.ts";
import { DEFAULT_E2B_TEMPLATE } from "../../sandbox/e2b.ts";
import { type CommandOutcome, inertText } from "../output.ts";
import { type CommandContext, intFlag, strFlag } from "./context.ts";

function renderRuntime(r: RuntimeResult): string {
  const lines = [r.engine.reachable ? `engine: Docker ${r.engine.version} (API ${r.engine.apiVersion})` : "engine: unreachable"];
  for (const [name, img] of Object.entries(r.images)) {
    if (img) {
      const node = img.node ? `  node ${img.node.version} (sha256 ${img.node.sha256.slice(0, 12)}…)` : "";
      lines.push(`${name.padEnd(8)} ${img.present ? "present" : "missing"}  ${img.ref}${img.origin === "env" ? " (HUMANISH_LOCAL_RUNTIME_IMAGE)" : ""}${node}`);
    }
  }
  if (r.reclaimable && r.reclaimable.count > 0) {
    lines.push(`reclaimable: ${r.reclaimable.count} stale image(s), ${formatBytes(r.reclaimable.bytes)} — humanish runtime prune`);
  }
  for (const a of r.actions ?? []) lines.push(`- ${a}`);
  lines.push(r.message);
  return lines.join("\n");
}

function dockerFor(ctx: CommandContext) {
  return dockerClientFor(ctx.env);
}

/** Bytes as a short human figure (MiB/GiB, 1 decimal); exact bytes stay in `--json`. */
function formatBytes(n: number): string {
  if (n >= 1024 ** 3) return `${(n / 1024 ** 3).toFixed(1)} GiB`;
  return `${(n / 1024 ** 2).toFixed(1)} MiB`;
}

/** `runtime status`: engine + images, read-only (src/runtime/status.ts). */
export async function runtimeStatus(ctx: CommandContext): Promise<CommandOutcome> {
  const r = await readRuntimeStatus(dockerFor(ctx), ctx.env);
  return { result: { ...r, schema: ctx.spec.schema }, human: renderRuntime(r) };
}

/** `runtime setup [--from-archive F --sha256 HEX --bytes N]`: build or load, then status. */
export async function runtimeSetup(ctx: CommandContext): Promise<CommandOutcome> {
  const archive = strFlag(ctx, "from-archive");
  let fromArchive: { file: string; sha256: string; bytes: number } | undefined;
  if (archive !== undefined) {
    const sha256 = strFlag(ctx, "sha256");
    if (!sha256 || ctx.flags.bytes === undefined) {
      throw new HumanishError(
        "HUMANISH_LOCAL_RUNTIME_SETUP_FAILED",
        "--from-archive needs --sha256 HEX and --bytes N (the archive's published digest and size)",
        {
          next: "humanish runtime setup --from-archive FILE --sha256 HEX --bytes N",
        },
      );
    }
    fromArchive = { file: archive, sha256: sha256.toLowerCase(), bytes: intFlag(ctx, "bytes", 0) };
  }
  const only = strFlag(ctx, "only");
  if (only !== undefined && only !== "sandbox" && only !== "guest") {
    throw new HumanishError("HUMANISH_USAGE", `--only must be sandbox or guest, got ${JSON.stringify(only)}`, {
      next: "humanish runtime setup --only sandbox (or --only guest; omit it for both)",
    });
  }
  const r = await setupRuntime(dockerFor(ctx), {
    env: ctx.env,
    ...(fromArchive ? { fromArchive } : {}),
    ...(only ? { only: only as SetupOnly } : {}),
    onProgress: (line) => {
      if (!ctx.json && line.startsWith("Step ")) ctx.io.stderr(`  ${inertText(line)}\n`);
    },
  });
  return { result: { ...r, schema: ctx.spec.schema }, human: renderRuntime(r) };
}

function renderPrune(r: PruneResult): string {
  const lines = r.images.map(
    (i) =>
      `${i.state.padEnd(7)} ${(i.tags[0] ?? i.id.slice(7, 19)).padEnd(32)} ${formatBytes(i.bytes)}${i.containers ? ` (used by ${i.containers.length} container(s))` : ""}`,
  );
  for (const x of r.removed) lines.push(`${x.outcome === "removed" ? "removed" : "kept   "} ${x.tags[0] ?? x.id}${x.reason ? ` — ${x.reason}` : ""}`);
  lines.push(r.message);
  return lines.join("\n");
}

/** `runtime prune [--dry-run]`: remove stale humanish images by exact id (src/runtime/prune.ts). */
export async function runtimePrune(ctx: CommandContext): Promise<CommandOutcome> {
  const r = await pruneImages(dockerFor(ctx), ctx.env, { dryRun: ctx.flags["dry-run"] === true });
  return { result: { ...r, schema: ctx.spec.schema }, human: renderPrune(r) };
}

interface DoctorCheck {
  name: string;
  ok: boolean;
  /** A required check failing makes the doctor result `ok: false`. */
  required: boolean;
  message: string;
  checked: boolean;
}

/** `doctor [--lab L]`: machine and project checks; keys are reported by NAME only. */
export async function doctorCommand(ctx: CommandContext): Promise<CommandOutcome> {
  const checks: DoctorCheck[] = [];
  const add = (name: string, ok: boolean, required: boolean, message: string, checked = true) => checks.push({ name, ok, required, message, checked });
  add("target cwd", true, true, ctx.cwd);
  add("bun runtime", true, true, `bun ${Bun.version}`);
  // The rates every USD cap and cost is computed with: their date, and the user's file if any.
  for (const r of ratesReport(ctx.env, configDir(ctx.env), new Date().toISOString().slice(0, 10))) add(r.name, r.ok, r.required, r.message);
  const gi = join(ctx.cwd, ".gitignore");
  const ignored =
    existsSync(gi) &&
    readFileSync(gi, "utf8")
      .split(/\r?\n/)
      .some((l) => /^\/?\.humanish\/?$/.test(l.trim()));
  add(
    "runtime ignore",
    ignored,
    false,
    ignored ? ".gitignore has .humanish/" : ".humanish/ is not in .gitignore (run bundles would be committable): humanish init adds it",
  );

  let route: string | undefined;
  let actorType: string | undefined;
  let target: string | undefined;
  let e2bTemplate: string | undefined;
  const labRef = strFlag(ctx, "lab");
  if (labRef !== undefined) {
    try {
      const loaded = await loadLab(labRef, ctx.cwd);
      route = selectLabBackend(loaded.config);
      actorType = loaded.config.actors[0]?.type;
      target = loaded.config.execution?.target;
      e2bTemplate = (loaded.config.execution as { template?: string }).template;
      add("lab", true, true, `${loaded.config.id}: ${route} route, actor ${actorType}, target ${target} (${loaded.warnings.length} warning(s))`);
      const actor = loaded.config.actors[0];
      if (actor?.type === "codex-exec") {
        const ex = loaded.config.execution as { runtimeAuth?: string };
        const maxUsd = loaded.config.scenario?.caps?.maxUsd ?? null;
        for (const row of modelReadiness({ model: codexModel(actor), maxUsd, runtimeAuth: ex.runtimeAuth ?? "openai-env", env: ctx.env })) {
          add(row.name, row.ok, row.required, row.message);
        }
      }
      // A declared scorer: the same path rules lab run applies (the module is not imported here).
      if (loaded.config.review?.scorer?.ref !== undefined) {
        try {
          await checkScorerRef({ config: loaded.config, ...(loaded.path ? { labPath: loaded.path } : {}), cwd: ctx.cwd });
          add("lab scorer", true, true, `review.scorer.ref ${loaded.config.review.scorer.ref} is a module file in the lab's folder`);
        } catch (e) {
          add("lab scorer", false, true, isHumanishError(e) ? `${e.code}: ${e.message}${e.next ? ` — ${e.next}` : ""}` : String(e));
        }
      }
      // Codex account seats: launch and close the restricted app-server, no model call.
      if (loaded.config.actors.some((a) => (a as { localAgent?: string }).localAgent === "codex")) {
        const r = await checkCodexAccountLauncher(ctx.env);
        add("codex account launcher", r.ok, true, r.ok ? r.message : `${r.message}${r.next ? ` — ${r.next}` : ""}`);
      }
    } catch (e) {
      add("lab", false, true, errorMessage(e));
    }
  }
  const localDocker = route === undefined || target === "docker" || target === "local";
  const rt = await readRuntimeStatus(dockerFor(ctx), ctx.env);
  add(
    "docker engine",
    rt.engine.reachable,
    route !== undefined && localDocker,
    rt.engine.reachable
      ? `Docker ${rt.engine.version} (API ${rt.engine.apiVersion})`
      : `${rt.error?.message ?? "unreachable"} — start dockerd or set DOCKER_HOST`,
  );
  for (const name of ["sandbox", "guest"] as const) {
    const img = rt.images[name];
    const needed = route !== undefined && localDocker && ((name === "sandbox" && route === "terminal") || (name === "guest" && route === "browser"));
    if (!rt.engine.reachable || !img)
      add(
        `${name} image`,
        false,
        needed,
        rt.engine.reachable ? `not checked: ${rt.error?.message ?? "status failed"}` : "not checked: engine unreachable",
        false,
      );
    else {
      const node = img.node ? `; node ${img.node.version}, tarball sha256 ${img.node.sha256}` : "";
      add(`${name} image`, img.present, needed, img.present ? `${img.ref}${node}` : `${img.ref} missing — humanish runtime setup`);
    }
  }
  const has = (n: string) => typeof ctx.env[n] === "string" && ctx.env[n] !== "";
  const codexKey = has("CODEX_API_KEY") || has("OPENAI_API_KEY");
  add(
    "key CODEX_API_KEY|OPENAI_API_KEY",
    codexKey,
    actorType === "codex-exec" || actorType === "openai-computer-use",
    codexKey
      ? `set (${has("CODEX_API_KEY") ? "CODEX_API_KEY" : "OPENAI_API_KEY"})`
      : "not set (needed by codex-exec and computer-use participants in live mode)",
  );
  add(
    "key E2B_API_KEY",
    has("E2B_API_KEY"),
    target === "e2b-terminal" || target === "e2b-desktop",
    has("E2B_API_KEY") ? "set" : "not set (needed for e2b targets)",
  );
  if (target === "e2b-terminal") {
    // The template is looked up by name; nothing is created.
    for (const c of await checkE2BTemplate(ctx.env, e2bTemplate ?? DEFAULT_E2B_TEMPLATE))
      add(c.name, c.ok, true, c.ok ? c.detail : `${c.detail}${c.next ? ` — ${c.next}` : ""}`);
  } else if (target === "e2b-desktop") {
    for (const c of await checkE2BDesktopLab(ctx.env, e2bTemplate ?? DEFAULT_E2B_DESKTOP_TEMPLATE))
      add(c.name, c.ok, true, c.ok ? c.detail : `${c.detail}${c.next ? ` — ${c.next}` : ""}`);
  }
  const ok = checks.every((c) => c.ok || !c.required);
  const human = checks.map((c) => `${c.ok ? "✓" : c.required ? "✗" : "·"} ${c.name.padEnd(34)} ${c.message}`).join("\n");
  const failed = checks.filter((c) => !c.ok && c.required);
  return {
    result: {
      schema: ctx.spec.schema,
      ok,
      cwd: ctx.cwd,
      checks,
      ...(ok
        ? {}
        : {
            error: {
              code: "HUMANISH_DOCTOR_FAILED",
              message: `failed: ${failed.map((c) => c.name).join(", ")}`,
              next: failed.some((c) => c.name.endsWith("image")) ? "humanish runtime setup" : "fix the ✗ rows above",
            },
          }),
    },
    human,
  };
}
