/** `humanish export --run ID --format atif [--out DIR]` — trajectories others can read. */
import { relative, resolve } from "node:path";
import { defaultTrust, resolveRunDir } from "../../bundle/index.ts";
import { HumanishError } from "../../errors.ts";
import { exportAtif } from "../../export/atif/index.ts";
import type { CommandOutcome } from "../output.ts";
import { type CommandContext, strFlag } from "./context.ts";

/** Formats `export` writes. */
const FORMATS = ["atif"] as const;

/**
 * `export [--run ID|latest] --format atif [--out DIR] [--force]`: one ATIF v1.4 trajectory per
 * seat, by default in `.humanish/exports/<runId>/atif/`; an existing file is replaced only with
 * `--force`, and never through a symlink.
 * @throws HumanishError HUMANISH_EXPORT_FORMAT_REQUIRED / HUMANISH_EXPORT_FORMAT_UNSUPPORTED,
 *         HUMANISH_EXPORT_OUT_INVALID (an empty --out),
 *         HUMANISH_INVALID_RUN_BUNDLE, HUMANISH_EXPORT_* (see src/export/atif/index.ts)
 */
export async function exportCommand(ctx: CommandContext): Promise<CommandOutcome> {
  const format = strFlag(ctx, "format");
  if (format === undefined) {
    throw new HumanishError("HUMANISH_EXPORT_FORMAT_REQUIRED", "--format is required", { next: "pass --format atif" });
  }
  if (!(FORMATS as readonly string[]).includes(format)) {
    throw new HumanishError(
      "HUMANISH_EXPORT_FORMAT_UNSUPPORTED",
      `--format ${JSON.stringify(format.slice(0, 40))} is not supported; supported: ${FORMATS.join(", ")}`,
      {
        next: "pass --format atif",
      },
    );
  }
  const runDir = await resolveRunDir(ctx.cwd, strFlag(ctx, "run") ?? "latest");
  const runId = runDir.split("/").pop() ?? "";
  const outFlag = strFlag(ctx, "out");
  // An empty --out would resolve to the working directory; refuse it rather than guess.
  if (outFlag !== undefined && outFlag.trim() === "") {
    throw new HumanishError("HUMANISH_EXPORT_OUT_INVALID", "--out is empty", {
      next: "pass --out a directory, or leave it out for .humanish/exports/<runId>/atif",
    });
  }
  const outDir = outFlag !== undefined ? resolve(ctx.cwd, outFlag) : resolve(ctx.cwd, ".humanish", "exports", runId, "atif");
  const r = await exportAtif({ runDir, outDir, trust: defaultTrust(ctx.env), secrets: ctx.secrets, force: ctx.flags.force === true, signal: ctx.signal });
  const rel = (p: string) => relative(ctx.cwd, p) || ".";
  const human = [
    `exported ${r.exported.length} trajectory file(s) (ATIF-v1.4) from verified run ${r.runId} to ${rel(r.outDir)}`,
    ...r.exported.map(
      (s) =>
        `  ${s.participantId}: ${rel(s.path)} · ${s.steps} steps · ${s.toolCalls} tool calls${s.screenshots ? ` · ${s.screenshots} screenshots` : ""}${s.images.length ? ` (${s.images.length} image file(s) beside it)` : ""}`,
    ),
    ...r.skipped.map((s) => `  skipped ${s.participantId}: ${s.reason}`),
  ].join("\n");
  return {
    result: {
      schema: ctx.spec.schema,
      ok: true,
      runId: r.runId,
      format,
      schemaVersion: "ATIF-v1.4",
      outDir: rel(r.outDir),
      exported: r.exported.map((s) => ({ ...s, path: rel(s.path), images: s.images.map(rel) })),
      skipped: r.skipped,
    },
    human,
  };
}
