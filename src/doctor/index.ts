/**
 * `humanish doctor [--lab L]`'s checks: what this machine and project need, and with a lab what
 * that lab needs (its route's image, the keys its actor and target read — by NAME only — its
 * scorer's path, a Codex account launcher, an E2B template). Nothing is created or started and
 * no model is called. The CLI only renders the rows.
 *
 * It sits above lanes/, actors/, models/ and sandbox/ because it asks each of them about its own
 * prerequisite; none of them imports it.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { findActor, listActors } from "../actor-registry/registry.ts";
import { checkCodexAccountLauncher } from "../actors/codex-account/readiness.ts";
import { codexModel } from "../actors/codex-exec/index.ts";
import { checkScorerRef } from "../adapters/load.ts";
import { configDir } from "../bundle/index.ts";
import type { DockerClient } from "../docker/index.ts";
import { errorMessage, isHumanishError } from "../errors.ts";
import { type LabConfig, loadLab, selectLabBackend } from "../lab/index.ts";
import { checkE2BDesktopLab, DEFAULT_E2B_DESKTOP_TEMPLATE } from "../lanes/e2b-desktop/doctor.ts";
import { checkE2BTemplate } from "../lanes/e2b-terminal/preflight.ts";
import { ratesReport } from "../models/rate-file.ts";
import { modelReadiness } from "../models/readiness.ts";
import { runtimeStatus } from "../runtime/status.ts";
import { DEFAULT_E2B_TEMPLATE } from "../sandbox/e2b.ts";

/** One doctor row. */
export interface DoctorCheck {
  name: string;
  ok: boolean;
  /** A required check failing makes the doctor result `ok: false`. */
  required: boolean;
  message: string;
  /** False when the check could not be made (e.g. the engine is unreachable). */
  checked: boolean;
}

/** What the checks were asked about. */
export interface DoctorInput {
  cwd: string;
  env: Record<string, string | undefined>;
  /** The Docker client of this machine (not contacted beyond a status read). */
  docker: DockerClient;
  /** `--lab`: a lab reference as `lab run` takes it. */
  labRef?: string;
}

/** The lab facts the later checks depend on; all undefined without `--lab` or when it does not load. */
interface LabFacts {
  route?: string;
  actorType?: string;
  target?: string;
  e2bTemplate?: string;
}

type Add = (name: string, ok: boolean, required: boolean, message: string, checked?: boolean) => void;

/** Every doctor row, in display order. Never throws for a failing check: a failure is a row. */
export async function runDoctor(input: DoctorInput): Promise<DoctorCheck[]> {
  const checks: DoctorCheck[] = [];
  const add: Add = (name, ok, required, message, checked = true) => checks.push({ name, ok, required, message, checked });
  projectChecks(input, add);
  const lab = input.labRef === undefined ? {} : await labChecks(input, input.labRef, add);
  await engineChecks(input, lab, add);
  keyChecks(input.env, lab, add);
  await e2bChecks(input.env, lab, add);
  return checks;
}

/** The rows that need no lab: cwd, Bun, the rate table, `.humanish/` ignored. */
function projectChecks(input: DoctorInput, add: Add): void {
  add("target cwd", true, true, input.cwd);
  add("bun runtime", true, true, `bun ${Bun.version}`);
  // The rates every USD cap and cost is computed with: their date, and the user's file if any.
  for (const r of ratesReport(input.env, configDir(input.env), new Date().toISOString().slice(0, 10))) add(r.name, r.ok, r.required, r.message);
  const gi = join(input.cwd, ".gitignore");
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
}

/** The lab's own rows: it loads, its model is ready, its scorer path holds, its Codex account launcher starts. */
async function labChecks(input: DoctorInput, labRef: string, add: Add): Promise<LabFacts> {
  try {
    const loaded = await loadLab(labRef, input.cwd);
    const facts: LabFacts = {
      route: selectLabBackend(loaded.config),
      actorType: loaded.config.actors[0]?.type,
      target: loaded.config.execution?.target,
      e2bTemplate: (loaded.config.execution as { template?: string }).template,
    };
    add(
      "lab",
      true,
      true,
      `${loaded.config.id}: ${facts.route} route, actor ${facts.actorType}, target ${facts.target} (${loaded.warnings.length} warning(s))`,
    );
    modelChecks(loaded.config, input.env, add);
    // A declared scorer: the same path rules lab run applies (the module is not imported here).
    if (loaded.config.review?.scorer?.ref !== undefined) {
      try {
        await checkScorerRef({ config: loaded.config, ...(loaded.path ? { labPath: loaded.path } : {}), cwd: input.cwd });
        add("lab scorer", true, true, `review.scorer.ref ${loaded.config.review.scorer.ref} is a module file in the lab's folder`);
      } catch (e) {
        add("lab scorer", false, true, isHumanishError(e) ? `${e.code}: ${e.message}${e.next ? ` — ${e.next}` : ""}` : String(e));
      }
    }
    // Codex account seats: launch and close the restricted app-server, no model call.
    if (loaded.config.actors.some((a) => (a as { localAgent?: string }).localAgent === "codex")) {
      const r = await checkCodexAccountLauncher(input.env);
      add("codex account launcher", r.ok, true, r.ok ? r.message : `${r.message}${r.next ? ` — ${r.next}` : ""}`);
    }
    return facts;
  } catch (e) {
    add("lab", false, true, errorMessage(e));
    return {};
  }
}

/** A codex-exec lab's model: priced where its USD cap needs it, its key present by name. */
function modelChecks(config: LabConfig, env: Record<string, string | undefined>, add: Add): void {
  const actor = config.actors[0];
  if (actor?.type !== "codex-exec") return;
  const ex = config.execution as { runtimeAuth?: string };
  const maxUsd = config.scenario?.caps?.maxUsd ?? null;
  for (const row of modelReadiness({ model: codexModel(actor), maxUsd, runtimeAuth: ex.runtimeAuth ?? "openai-env", env })) {
    add(row.name, row.ok, row.required, row.message);
  }
}

/** The engine and the two local images; required only when the lab's route runs here. */
async function engineChecks(input: DoctorInput, lab: LabFacts, add: Add): Promise<void> {
  const localDocker = lab.route === undefined || lab.target === "docker" || lab.target === "local";
  const rt = await runtimeStatus(input.docker, input.env);
  add(
    "docker engine",
    rt.engine.reachable,
    lab.route !== undefined && localDocker,
    rt.engine.reachable
      ? `Docker ${rt.engine.version} (API ${rt.engine.apiVersion})`
      : `${rt.error?.message ?? "unreachable"} — start dockerd or set DOCKER_HOST`,
  );
  for (const name of ["sandbox", "guest"] as const) {
    const img = rt.images[name];
    const needed =
      lab.route !== undefined && localDocker && ((name === "sandbox" && lab.route === "terminal") || (name === "guest" && lab.route === "browser"));
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
}

/** The keys the lab's actor and target read, by NAME only (a value is never shown). */
function keyChecks(env: Record<string, string | undefined>, lab: LabFacts, add: Add): void {
  const has = (n: string) => typeof env[n] === "string" && env[n] !== "";
  const codexKey = has("CODEX_API_KEY") || has("OPENAI_API_KEY");
  add(
    "key CODEX_API_KEY|OPENAI_API_KEY",
    codexKey,
    lab.actorType !== undefined && (findActor(lab.actorType)?.runtimeKeyNames.length ?? 0) > 0,
    codexKey
      ? `set (${has("CODEX_API_KEY") ? "CODEX_API_KEY" : "OPENAI_API_KEY"})`
      : `not set (needed in live mode by ${listActors()
          .filter((a) => a.runtimeKeyNames.length > 0)
          .map((a) => a.type)
          .join(", ")} participants)`,
  );
  add(
    "key E2B_API_KEY",
    has("E2B_API_KEY"),
    lab.target === "e2b-terminal" || lab.target === "e2b-desktop",
    has("E2B_API_KEY") ? "set" : "not set (needed for e2b targets)",
  );
}

/** An E2B target's template, looked up by name; nothing is created. */
async function e2bChecks(env: Record<string, string | undefined>, lab: LabFacts, add: Add): Promise<void> {
  const rows =
    lab.target === "e2b-terminal"
      ? await checkE2BTemplate(env, lab.e2bTemplate ?? DEFAULT_E2B_TEMPLATE)
      : lab.target === "e2b-desktop"
        ? await checkE2BDesktopLab(env, lab.e2bTemplate ?? DEFAULT_E2B_DESKTOP_TEMPLATE)
        : [];
  for (const c of rows) add(c.name, c.ok, true, c.ok ? c.detail : `${c.detail}${c.next ? ` — ${c.next}` : ""}`);
}
