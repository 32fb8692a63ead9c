/**
 * `humanish export --format atif`: every seat of a verified run as an ATIF v1.4 trajectory
 * file, `<out>/<participantId>.trajectory.json`, and the seat's screenshots beside it in
 * `<out>/<participantId>/images/`, referenced relative to the trajectory file (so the export
 * reads on its own, without the run directory). The bundle is verified first and every file
 * read is checked against its listed SHA-256; each trajectory is scrubbed (the run's secret
 * values, then secret and local-path shapes) and passes our own validator before it is
 * written. A seat without a trace (it never started) is listed as skipped, with why; a run
 * where no seat has one is an error. Existing files are replaced only when asked, and a
 * symlink at a target name is never written through.
 */
import { lstatSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
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
/** Largest screenshot copied (bytes); the PNG gate admitted every one far below this. */
const MAX_IMAGE_BYTES = 32 * 1024 * 1024;

/** A participant id as one safe file-name segment. */
function fileSegment(pid: string): string {
  return pid.replace(/[^A-Za-z0-9._-]/g, "_");
}

/** Where a seat's screenshot goes, relative to the export directory (and so to its trajectory file). */
function imageRefOf(pid: string, bundlePath: string): string {
  const name = bundlePath.replace(/^screenshots\//, "").replace(/[^A-Za-z0-9._-]/g, "_");
  return `${fileSegment(pid)}/images/${name}`;
}

/** The bundle paths of the screenshots a trace keeps, in trace order, each once. */
function keptScreenshots(trace: SeatEvidence["trace"]): string[] {
  const paths = trace.items.flatMap((it) => (it.kind === "screenshot" && it.screenshotRef?.path ? [it.screenshotRef.path] : []));
  return [...new Set(paths)];
}

/** One written trajectory. */
export interface ExportedSeat {
  participantId: string;
  /** Absolute path of the trajectory file. */
  path: string;
  steps: number;
  toolCalls: number;
  screenshots: number;
  /** Absolute paths of the screenshots copied beside the trajectory. */
  images: string[];
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
    imageRef: (path) => imageRefOf(p.id, path),
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
  /** Stops the export between two files (SIGINT/SIGTERM); what was written stays whole. */
  signal?: AbortSignal;
}

/** @throws HumanishError HUMANISH_INTERRUPTED when `signal` has aborted. */
function stopIfAborted(signal: AbortSignal | undefined, done: number): void {
  if (!signal?.aborted) return;
  throw new HumanishError(
    "HUMANISH_INTERRUPTED",
    `the export was interrupted by ${signal.reason === "SIGTERM" ? "SIGTERM" : "SIGINT"} after ${done} file(s); each file written is whole`,
    {
      next: "run the export again (with --force to replace the files already written)",
    },
  );
}

/**
 * Refuse an image folder below `outDir` (the seat folder or its `images/`) that exists and is a
 * symlink or not a directory: writing into it would put the images somewhere else.
 * @throws HumanishError HUMANISH_EXPORT_TARGET_EXISTS
 */
function checkRealDirs(outDir: string, dir: string): void {
  for (let d = dir; d.length > outDir.length && d.startsWith(outDir); d = dirname(d)) {
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(d);
    } catch {
      continue;
    }
    if (st.isSymbolicLink() || !st.isDirectory()) {
      throw new HumanishError(
        "HUMANISH_EXPORT_TARGET_EXISTS",
        `${d} is ${st.isSymbolicLink() ? "a symlink (never followed)" : "not a directory"}; nothing was written`,
        {
          next: "remove it, or pass --out another directory",
        },
      );
    }
  }
}

/**
 * Export every seat of the verified run at `runDir`.
 * @throws HUMANISH_INVALID_RUN_BUNDLE (does not verify, or a file changed since),
 *         HUMANISH_EXPORT_DRY_RUN (a contract-only run has no trajectories),
 *         HUMANISH_EXPORT_INVALID_TRAJECTORY (a built trajectory failed our validator: a bug, the
 *         errors are in `details`), HUMANISH_EXPORT_NOTHING_TO_EXPORT (no seat has a trace),
 *         HUMANISH_EXPORT_TARGET_EXISTS (a target exists without `force`, or is a symlink or not a
 *         regular file; checked for every seat before anything is written), HUMANISH_EXPORT_WRITE_FAILED,
 *         HUMANISH_INTERRUPTED (`signal` aborted; checked before each file)
 */
export async function exportAtif(opts: AtifExportOptions): Promise<AtifExportResult> {
  stopIfAborted(opts.signal, 0);
  const b = await loadVerifiedBundle(opts.runDir, opts.trust);
  stopIfAborted(opts.signal, 0);
  if (b.mode === "dry-run") {
    throw new HumanishError("HUMANISH_EXPORT_DRY_RUN", `run ${b.runId} is a dry run: contract only, nobody ran, so there is no trajectory to export`, {
      next: `run the lab live (humanish lab run ${labRunArg(b)} --live), then export that run`,
    });
  }
  const redactor = createRedactor(opts.secrets);
  const built: { pid: string; trajectory: AtifTrajectory; images: string[] }[] = [];
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
    built.push({ pid: p.id, trajectory, images: keptScreenshots(ev.trace) });
  }
  if (built.length === 0) {
    throw new HumanishError("HUMANISH_EXPORT_NOTHING_TO_EXPORT", `run ${b.runId} has no trajectory to export: ${skipped.map((s) => s.reason).join("; ")}`, {
      next: "export a run whose participants started; nothing was written",
      details: { skipped },
    });
  }
  const targets = built.map(({ pid }) => join(opts.outDir, `${fileSegment(pid)}.trajectory.json`));
  const images = built.flatMap(({ pid, images }) => images.map((src) => ({ src, dest: join(opts.outDir, imageRefOf(pid, src)) })));
  const safe: SafeWriteOptions = {
    force: opts.force === true,
    label: `in --out ${opts.outDir}`,
    flag: "--out",
    codes: { exists: "HUMANISH_EXPORT_TARGET_EXISTS", unsafe: "HUMANISH_EXPORT_TARGET_EXISTS", failed: "HUMANISH_EXPORT_WRITE_FAILED" },
  };
  // Every target is checked before the first is written, so a refused export writes nothing;
  // an image folder that is a symlink would carry the images elsewhere, so it is refused too.
  checkUserTargets([...targets, ...images.map((i) => i.dest)], safe);
  const imageDirs = [...new Set(images.map((i) => dirname(i.dest)))];
  for (const dir of imageDirs) checkRealDirs(opts.outDir, dir);
  try {
    mkdirSync(opts.outDir, { recursive: true });
    for (const dir of imageDirs) mkdirSync(dir, { recursive: true });
  } catch (e) {
    throw new HumanishError("HUMANISH_EXPORT_WRITE_FAILED", `cannot create ${opts.outDir}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, {
      next: "pass --out a directory you can write",
      cause: e,
    });
  }
  // Images first: a trajectory never names a file that is not there yet.
  let written = 0;
  for (const { src, dest } of images) {
    stopIfAborted(opts.signal, written);
    writeUserFileSync(dest, readVerifiedArtifact(opts.runDir, b, src, MAX_IMAGE_BYTES), safe);
    written += 1;
  }
  const exported: ExportedSeat[] = [];
  for (const [i, { pid, trajectory, images: shots }] of built.entries()) {
    const path = targets[i]!;
    stopIfAborted(opts.signal, written);
    writeUserFileSync(path, `${JSON.stringify(trajectory, null, 2)}\n`, safe);
    written += 1;
    exported.push({
      participantId: pid,
      path,
      steps: trajectory.steps.length,
      toolCalls: trajectory.steps.reduce((a, s) => a + (s.tool_calls?.length ?? 0), 0),
      screenshots: trajectory.steps.reduce((a, s) => a + (Array.isArray(s.extra?.screenshots) ? s.extra.screenshots.length : 0), 0),
      images: shots.map((src) => join(opts.outDir, imageRefOf(pid, src))),
    });
  }
  return { runId: b.runId, outDir: opts.outDir, exported, skipped };
}
