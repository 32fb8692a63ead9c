/**
 * `humanish runtime status | setup` and `humanish doctor`: what this machine can run.
 * Status never builds, pulls or starts anything (reference subsystems.md §4.2); setup builds the
 * images from their embedded recipes through the Engine API, or loads a verified archive.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { createDockerClient, resolveDockerSocket, type DockerClient } from "../../docker/index.ts";
import { HumanishError } from "../../errors.ts";
import { loadLab, selectLabBackend } from "../../lab/index.ts";
import { ensureGuestImage, guestImageStatus } from "../../runtime/guest-image.ts";
import { ensureImage, imageStatus, loadImageArchive } from "../../runtime/images.ts";
import { sandboxRecipe } from "../../runtime/recipes.ts";
import type { CommandOutcome } from "../output.ts";
import { intFlag, strFlag, type CommandContext } from "./context.ts";

interface EngineFacts {
  reachable: boolean;
  socket: string;
  version?: string;
  apiVersion?: string;
  error?: { code: string; message: string };
}

interface ImageFacts {
  name: "sandbox" | "guest";
  ref: string;
  present: boolean;
  revision?: string;
  imageId?: string;
  sizeBytes?: number;
  error?: { code: string; message: string };
}

async function engineFacts(docker: DockerClient): Promise<EngineFacts> {
  try {
    const v = await docker.version({ timeoutMs: 5000 });
    return { reachable: true, socket: docker.socketPath, version: v.Version, apiVersion: v.ApiVersion };
  } catch (e) {
    const err = e instanceof HumanishError ? { code: e.code, message: e.message } : { code: "HUMANISH_DOCKER_UNAVAILABLE", message: String(e) };
    return { reachable: false, socket: docker.socketPath, error: err };
  }
}

async function imageFacts(docker: DockerClient, env: Record<string, string | undefined>): Promise<ImageFacts[]> {
  const out: ImageFacts[] = [];
  try {
    const s = await imageStatus(docker, sandboxRecipe);
    out.push({ name: "sandbox", ref: s.tag, present: s.present, revision: s.revision, ...(s.imageId ? { imageId: s.imageId } : {}), ...(s.sizeBytes !== undefined ? { sizeBytes: s.sizeBytes } : {}) });
  } catch (e) {
    out.push({ name: "sandbox", ref: "humanish-sandbox", present: false, error: errorFacts(e) });
  }
  try {
    const g = await guestImageStatus(docker, env);
    out.push({ name: "guest", ref: g.ref, present: g.present, ...(g.runtimeRevision ? { revision: g.runtimeRevision } : {}), ...(g.imageId ? { imageId: g.imageId } : {}), ...(g.sizeBytes !== undefined ? { sizeBytes: g.sizeBytes } : {}) });
  } catch (e) {
    out.push({ name: "guest", ref: "humanish-guest", present: false, error: errorFacts(e) });
  }
  return out;
}

function errorFacts(e: unknown): { code: string; message: string } {
  return e instanceof HumanishError ? { code: e.code, message: e.message } : { code: "HUMANISH_UNEXPECTED", message: e instanceof Error ? e.message : String(e) };
}

function renderRuntime(engine: EngineFacts, images: ImageFacts[]): string {
  const lines = [engine.reachable ? `engine: Docker ${engine.version} (API ${engine.apiVersion}) on ${engine.socket}` : `engine: unreachable on ${engine.socket} — ${engine.error?.message}`];
  for (const i of images) lines.push(`${i.name.padEnd(8)} ${i.present ? "present" : "missing"}  ${i.ref}${i.error ? `  (${i.error.message})` : ""}`);
  return lines.join("\n");
}

/** `runtime status`: engine + images, read-only. ok = engine reachable and both images present. */
export async function runtimeStatus(ctx: CommandContext): Promise<CommandOutcome> {
  const docker = createDockerClient({ socketPath: resolveDockerSocket(ctx.env) });
  const engine = await engineFacts(docker);
  const images = engine.reachable ? await imageFacts(docker, ctx.env) : [];
  const ok = engine.reachable && images.every((i) => i.present);
  const error = !engine.reachable
    ? { code: engine.error?.code ?? "HUMANISH_DOCKER_UNAVAILABLE", message: engine.error?.message ?? "Docker engine unreachable", next: "start dockerd, or set DOCKER_HOST=unix:///path/to/docker.sock" }
    : !ok
      ? { code: "HUMANISH_LOCAL_RUNTIME_MISSING", message: `missing image(s): ${images.filter((i) => !i.present).map((i) => i.name).join(", ")}`, next: "humanish runtime setup" }
      : undefined;
  return { result: { schema: ctx.spec.schema, ok, engine, images, ...(error ? { error } : {}) }, human: renderRuntime(engine, images) };
}

/** `runtime setup [--from-archive F --sha256 HEX --bytes N] [--only sandbox|guest]`. */
export async function runtimeSetup(ctx: CommandContext): Promise<CommandOutcome> {
  const docker = createDockerClient({ socketPath: resolveDockerSocket(ctx.env) });
  const log = (line: string) => {
    if (!ctx.json) ctx.io.stderr(line + "\n");
  };
  const archive = strFlag(ctx, "from-archive");
  if (archive !== undefined) {
    const sha256 = strFlag(ctx, "sha256");
    if (!sha256 || ctx.flags.bytes === undefined) {
      throw new HumanishError("HUMANISH_LOCAL_RUNTIME_SETUP_FAILED", "--from-archive needs --sha256 HEX and --bytes N (the archive's published digest and size)", {
        next: "humanish runtime setup --from-archive FILE --sha256 HEX --bytes N",
      });
    }
    const bytes = intFlag(ctx, "bytes", 0);
    const loaded = await loadImageArchive(docker, archive, { sha256: sha256.toLowerCase(), bytes });
    return { result: { schema: ctx.spec.schema, ok: true, loaded }, human: `loaded ${loaded.loaded.join(", ")} (${loaded.bytes} bytes, sha256 ${loaded.sha256})` };
  }
  const only = strFlag(ctx, "only");
  if (only !== undefined && only !== "sandbox" && only !== "guest") {
    throw new HumanishError("HUMANISH_INVALID_OPTION", `--only must be sandbox or guest, got ${JSON.stringify(only)}`, { next: "humanish runtime setup --only sandbox" });
  }
  const engine = await engineFacts(docker);
  if (!engine.reachable) {
    throw new HumanishError(engine.error?.code ?? "HUMANISH_DOCKER_UNAVAILABLE", engine.error?.message ?? "Docker engine unreachable", { next: "start dockerd, or set DOCKER_HOST=unix:///path/to/docker.sock" });
  }
  const built: { name: string; ref: string; built: boolean }[] = [];
  const onProgress = (m: { stream?: string; status?: string }) => {
    const line = (m.stream ?? m.status ?? "").trim();
    if (line.startsWith("Step ")) log(`  ${line}`);
  };
  if (only !== "guest") {
    log(`sandbox image: ${sandboxRecipe.name}`);
    const r = await ensureImage(docker, sandboxRecipe, { onProgress });
    built.push({ name: "sandbox", ref: r.tag, built: r.built });
  }
  if (only !== "sandbox") {
    log("guest image: humanish-guest");
    const g = await ensureGuestImage(docker, { env: ctx.env, onProgress });
    built.push({ name: "guest", ref: g.ref, built: g.built });
  }
  const images = await imageFacts(docker, ctx.env);
  return {
    result: { schema: ctx.spec.schema, ok: true, engine, images, built },
    human: built.map((b) => `${b.name.padEnd(8)} ${b.built ? "built  " : "present"}  ${b.ref}`).join("\n"),
  };
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
  const gi = join(ctx.cwd, ".gitignore");
  const ignored = existsSync(gi) && readFileSync(gi, "utf8").split(/\r?\n/).some((l) => /^\/?\.humanish\/?$/.test(l.trim()));
  add("runtime ignore", ignored, false, ignored ? ".gitignore has .humanish/" : ".humanish/ is not in .gitignore (run bundles would be committable): humanish init adds it");

  let route: string | undefined;
  let actorType: string | undefined;
  let target: string | undefined;
  const labRef = strFlag(ctx, "lab");
  if (labRef !== undefined) {
    try {
      const loaded = await loadLab(labRef, ctx.cwd);
      route = selectLabBackend(loaded.config);
      actorType = loaded.config.actors[0]?.type;
      target = loaded.config.execution?.target;
      add("lab", true, true, `${loaded.config.id}: ${route} route, actor ${actorType}, target ${target} (${loaded.warnings.length} warning(s))`);
    } catch (e) {
      add("lab", false, true, e instanceof Error ? e.message : String(e));
    }
  }
  const localDocker = route === undefined || target === "docker" || target === "local";
  const docker = createDockerClient({ socketPath: resolveDockerSocket(ctx.env) });
  const engine = await engineFacts(docker);
  add("docker engine", engine.reachable, route !== undefined && localDocker, engine.reachable ? `Docker ${engine.version} (API ${engine.apiVersion}) on ${engine.socket}` : `${engine.error?.message ?? "unreachable"} — start dockerd or set DOCKER_HOST`);
  if (engine.reachable) {
    for (const img of await imageFacts(docker, ctx.env)) {
      const needed = route !== undefined && localDocker && ((img.name === "sandbox" && route === "terminal") || (img.name === "guest" && route === "browser"));
      add(`${img.name} image`, img.present, needed, img.present ? img.ref : `${img.ref} missing${img.error ? ` (${img.error.message})` : ""} — humanish runtime setup`);
    }
  } else {
    add("sandbox image", false, false, "not checked: engine unreachable", false);
    add("guest image", false, false, "not checked: engine unreachable", false);
  }
  const has = (n: string) => typeof ctx.env[n] === "string" && ctx.env[n] !== "";
  const codexKey = has("CODEX_API_KEY") || has("OPENAI_API_KEY");
  add("key CODEX_API_KEY|OPENAI_API_KEY", codexKey, actorType === "codex-exec" || actorType === "openai-computer-use", codexKey ? `set (${has("CODEX_API_KEY") ? "CODEX_API_KEY" : "OPENAI_API_KEY"})` : "not set (needed by codex-exec and computer-use participants in live mode)");
  add("key E2B_API_KEY", has("E2B_API_KEY"), target === "e2b-terminal" || target === "e2b-desktop", has("E2B_API_KEY") ? "set" : "not set (needed for e2b targets)");
  const ok = checks.every((c) => c.ok || !c.required);
  const human = checks.map((c) => `${c.ok ? "✓" : c.required ? "✗" : "·"} ${c.name.padEnd(34)} ${c.message}`).join("\n");
  const failed = checks.filter((c) => !c.ok && c.required);
  return {
    result: {
      schema: ctx.spec.schema,
      ok,
      cwd: ctx.cwd,
      checks,
      ...(ok ? {} : { error: { code: "HUMANISH_DOCTOR_FAILED", message: `failed: ${failed.map((c) => c.name).join(", ")}`, next: failed.some((c) => c.name.endsWith("image")) ? "humanish runtime setup" : "fix the ✗ rows above" } }),
    },
    human,
  };
}
