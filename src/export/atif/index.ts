/**
 * `humanish export --format atif`: every seat of a verified run as an ATIF v1.4 trajectory
 * file, `<out>/<participantId>.trajectory.json`. The bundle is verified first and every file
 * read is checked against its listed SHA-256; each trajectory is scrubbed (the run's secret
 * values, then secret and local-path shapes) and passes our own validator before it is
 * written. A seat without a trace (it never started) is listed as skipped, with why; a run
 * where no seat has one is an error. Existing files are replaced only when asked, and a
 * symlink at a target name is never written through.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { createRedactor } from "../../bundle/redact.ts";
import { checkUserTargets, type SafeWriteOptions, writeUserFileSync } from "../../bundle/safe-write.ts";
import { ActorTraceSchema, type RunBundle, type RunParticipant } from "../../bundle/schemas.ts";
import type { TrustSet } from "../../bundle/signing/keys.ts";
import { HumanishError } from "../../errors.ts";
import { VERSION } from "../../version.ts";
import { labRunArg, loadVerifiedBundle, readVerifiedArtifact } from "../verified.ts";
import { buildTrajectory, type LedgerRequest, type SeatEvidence } from "./build.ts";
import type { AtifTrajectory } from "./schema.ts";
import { validateAtif } from "./validate.ts";

export { buildTrajectory, type SeatEvidence } from "./build.ts";
export { ATIF_VERSION, type AtifTrajectory, AtifTrajectorySchema } from "./schema.ts";
export { type AtifValidation, type AtifValidationError, validateAtif } from "./validate.ts";

/** Largest trace or ledger read (bytes); the verifier bounds them too. */
const MAX_JSON_BYTES = 64 * 1024 * 1024;

/** One written trajectory. */
export interface ExportedSeat {
  participantId: string;
  /** Absolute path of the trajectory file. */
  path: string;
  steps: number;
  toolCalls: number;
  screenshots: number;
}

/** What an export did. */
export interface AtifExportResult {
  runId: string;
  outDir: string;
  exported: ExportedSeat[];
  /** Seats with nothing to export (no trace), and why. */
  skipped: { participantId: string; reason: string }[];
}

function parseJson(bytes: Uint8Array, what: string, runId: string): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new HumanishError("HUMANISH_INVALID_RUN_BUNDLE", `run ${runId}: ${what} is not JSON`, { next: `humanish verify --run ${runId}` });
  }
}

/** The seat's model ledger (`humanish.model-ledger.v1` listed as `model-ledger`), when there is one. */
function seatLedger(runDir: string, b: RunBundle, pid: string): SeatEvidence["ledger"] {
  for (const a of b.artifacts) {
    if (a.kind !== "model-ledger") continue;
    const v = parseJson(readVerifiedArtifact(runDir, b, a.path, MAX_JSON_BYTES), a.path, b.runId) as Record<string, unknown>;
    if (v?.participantId !== pid || !Array.isArray(v.lines)) continue;
    const num = (x: unknown): number | null => (typeof x === "number" && Number.isFinite(x) ? x : null);
    const requests: LedgerRequest[] = v.lines
      .filter((l): l is Record<string, unknown> => typeof l === "object" && l !== null)
      .map((l) => ({ model: typeof l.model === "string" ? l.model : null, input: num(l.input), output: num(l.output), usd: num(l.usd) }));
    const observedModels = Array.isArray(v.observedModels) ? v.observedModels.filter((m): m is string => typeof m === "string") : [];
    return { observedModels, requests };
  }
  return undefined;
}

/** The evidence of one seat, or why it has none. */
function seatEvidence(runDir: string, b: RunBundle, p: RunParticipant): SeatEvidence | string {
  if (p.trace === null) return `participant ${p.id} has no trace (${p.status}: ${p.reason || "it never started"})`;
  const raw = parseJson(readVerifiedArtifact(runDir, b, p.trace, MAX_JSON_BYTES), p.trace, b.runId);
  const t = ActorTraceSchema.safeParse(raw);
  if (!t.success) {
    throw new HumanishError("HUMANISH_INVALID_RUN_BUNDLE", `run ${b.runId}: ${p.trace} is not a humanish.actor-trace.v1`, {
      next: `humanish verify --run ${b.runId}`,
    });
  }
  const one = b.participants.length === 1;
  const ledger = seatLedger(runDir, b, p.id);
  return {
    bundle: b,
    participant: p,
    tracePath: p.trace,
    trace: t.data,
    tasks: b.tasks.filter((x) => x.participantId === p.id || (x.participantId === undefined && one)),
    ...(ledger ? { ledger } : {}),
    humanishVersion: VERSION,
  };
}

/** Options of {@link exportAtif}. */
export interface AtifExportOptions {
  runDir: string;
  /** Directory the trajectory files go to (created). */
  outDir: string;
  trust: TrustSet;
  /** Secret values of this invocation, scrubbed from every string (on top of the shape patterns). */
  secrets: readonly string[];
  /** Replace trajectory files already in `outDir` (a symlink at a target is refused even then). */
  force?: boolean;
}

/**
 * Export every seat of the verified run at `runDir`.
 * @throws HUMANISH_INVALID_RUN_BUNDLE (does not verify, or a file changed since),
 *         HUMANISH_EXPORT_DRY_RUN (a contract-only run has no trajectories),
 *         HUMANISH_EXPORT_INVALID_TRAJECTORY (a built trajectory failed our validator: a bug, the
 *         errors are in `details`), HUMANISH_EXPORT_NOTHING_TO_EXPORT (no seat has a trace),
 *         HUMANISH_EXPORT_TARGET_EXISTS (a target exists without `force`, or is a symlink or not a
 *         regular file; checked for every seat before anything is written), HUMANISH_EXPORT_WRITE_FAILED
 */
export async function exportAtif(opts: AtifExportOptions): Promise<AtifExportResult> {
  const b = await loadVerifiedBundle(opts.runDir, opts.trust);
  if (b.mode === "dry-run") {
    throw new HumanishError("HUMANISH_EXPORT_DRY_RUN", `run ${b.runId} is a dry run: contract only, nobody ran, so there is no trajectory to export`, {
      next: `run the lab live (humanish lab run ${labRunArg(b)} --live), then export that run`,
    });
  }
  const redactor = createRedactor(opts.secrets);
  const built: { pid: string; trajectory: AtifTrajectory }[] = [];
  const skipped: AtifExportResult["skipped"] = [];
  for (const p of b.participants) {
    const ev = seatEvidence(opts.runDir, b, p);
    if (typeof ev === "string") {
      skipped.push({ participantId: p.id, reason: ev });
      continue;
    }
    const trajectory = redactor.value(buildTrajectory(ev));
    const v = validateAtif(trajectory);
    if (!v.ok) {
      throw new HumanishError(
        "HUMANISH_EXPORT_INVALID_TRAJECTORY",
        `the trajectory of ${p.id} fails ATIF validation (${v.errors.length} error(s), first: ${v.errors[0]?.path}: ${v.errors[0]?.message})`,
        {
          next: "report this as a humanish bug with the run's trace; nothing was written",
          details: { participantId: p.id, errors: v.errors },
        },
      );
    }
    built.push({ pid: p.id, trajectory });
  }
  if (built.length === 0) {
    throw new HumanishError("HUMANISH_EXPORT_NOTHING_TO_EXPORT", `run ${b.runId} has no trajectory to export: ${skipped.map((s) => s.reason).join("; ")}`, {
      next: "export a run whose participants started; nothing was written",
      details: { skipped },
    });
  }
  const targets = built.map(({ pid }) => join(opts.outDir, `${pid.replace(/[^A-Za-z0-9._-]/g, "_")}.trajectory.json`));
  const safe: SafeWriteOptions = {
    force: opts.force === true,
    label: `in --out ${opts.outDir}`,
    flag: "--out",
    codes: { exists: "HUMANISH_EXPORT_TARGET_EXISTS", unsafe: "HUMANISH_EXPORT_TARGET_EXISTS", failed: "HUMANISH_EXPORT_WRITE_FAILED" },
  };
  // Every target is checked before the first is written, so a refused export writes nothing.
  checkUserTargets(targets, safe);
  try {
    mkdirSync(opts.outDir, { recursive: true });
  } catch (e) {
    throw new HumanishError("HUMANISH_EXPORT_WRITE_FAILED", `cannot create ${opts.outDir}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, {
      next: "pass --out a directory you can write",
      cause: e,
    });
  }
  const exported: ExportedSeat[] = [];
  for (const [i, { pid, trajectory }] of built.entries()) {
    const path = targets[i]!;
    writeUserFileSync(path, `${JSON.stringify(trajectory, null, 2)}\n`, safe);
    exported.push({
      participantId: pid,
      path,
      steps: trajectory.steps.length,
      toolCalls: trajectory.steps.reduce((a, s) => a + (s.tool_calls?.length ?? 0), 0),
      screenshots: trajectory.steps.reduce((a, s) => a + (Array.isArray(s.extra?.screenshots) ? s.extra.screenshots.length : 0), 0),
    });
  }
  return { runId: b.runId, outDir: opts.outDir, exported, skipped };
}
