/**
 * `humanish runtime status | setup | prune` and `humanish doctor`: what this machine can run.
 * Status never builds, pulls or starts anything; setup builds the images from their embedded
 * recipes through the Engine API, or loads a verified archive; prune removes stale humanish
 * images by exact id (src/runtime/prune.ts).
 */
import { dockerClientFor } from "../../docker/index.ts";
import { runDoctor } from "../../doctor/index.ts";
import { HumanishError } from "../../errors.ts";
import { type PruneResult, pruneImages } from "../../runtime/prune.ts";
import { type RuntimeResult, runtimeStatus as readRuntimeStatus, type SetupOnly, runtimeSetup as setupRuntime } from "../../runtime/status.ts";
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

/** `doctor [--lab L]`: machine and project checks (src/doctor/); keys are reported by NAME only. */
export async function doctorCommand(ctx: CommandContext): Promise<CommandOutcome> {
  const labRef = strFlag(ctx, "lab");
  const checks = await runDoctor({ cwd: ctx.cwd, env: ctx.env, docker: dockerFor(ctx), ...(labRef !== undefined ? { labRef } : {}) });
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
              // Off a TTY there are no "rows above": the next step names each failed check and what it said.
              next: failed.some((c) => c.name.endsWith("image"))
                ? "humanish runtime setup"
                : `fix each failed check, then run doctor again: ${failed.map((c) => `${c.name} (${c.message})`).join("; ")}`,
            },
          }),
    },
    human,
  };
}
