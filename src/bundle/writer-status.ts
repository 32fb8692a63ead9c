/**
 * Status and lifecycle of a run writer: `status.json`, the derived liveness index (never listed
 * in run.json), rewritten on every update and by a heartbeat while the run is running, and
 * re-signed once the bundle is sealed since the signature covers it.
 */
import { join } from "node:path";
import { artifactRootFor } from "./paths.ts";
import { type Mode, type Route, type RunStatus, RunStatusSchema } from "./schemas.ts";
import { sealRunDir } from "./signing/seal.ts";
import { atomicWrite } from "./writer-atomic.ts";
import { type LiveWriterState, serial } from "./writer-state.ts";

/** Status fields a route may set; the writer owns schema, runId, pid and timestamps. */
export interface StatusUpdate {
  phase: string;
  detail?: string;
  route?: Route;
  mode?: Mode;
  lab?: string;
  state?: RunStatus["state"];
  outcome?: RunStatus["outcome"];
}

/**
 * Write `status.json` now (not queued): `update` over the previous status (route, mode, lab,
 * state and outcome carried over; `completedAt` set once finished), redacted, schema-checked,
 * written atomically and kept as `w.status`; re-signs a sealed bundle.
 * @throws HUMANISH_BUNDLE_WRITE_FAILED; the signing key loader's codes once sealed
 */
export async function writeStatusNow(w: LiveWriterState, update: StatusUpdate): Promise<void> {
  const now = w.now().toISOString();
  const prev = w.status;
  const next: RunStatus = {
    schema: "humanish.run-status.v1",
    runId: w.runId,
    state: update.state ?? prev?.state ?? "running",
    phase: update.phase,
    ...(update.detail !== undefined ? { detail: update.detail } : {}),
    ...((update.route ?? prev?.route) ? { route: update.route ?? prev?.route } : {}),
    ...((update.mode ?? prev?.mode) ? { mode: update.mode ?? prev?.mode } : {}),
    ...((update.lab ?? prev?.lab) ? { lab: update.lab ?? prev?.lab } : {}),
    pid: prev?.pid ?? process.pid,
    startedAt: prev?.startedAt ?? now,
    updatedAt: now,
    ...((update.state ?? prev?.state) === "finished" ? { completedAt: prev?.completedAt ?? now } : {}),
    ...((update.outcome ?? prev?.outcome) ? { outcome: update.outcome ?? prev?.outcome } : {}),
  };
  const checked = RunStatusSchema.parse(w.redactor.value(next));
  w.status = checked;
  await atomicWrite(join(w.runDir, "status.json"), new TextEncoder().encode(w.redactor.json(checked)), `${artifactRootFor(w.runId)}/status.json`);
  if (w.sealed) sealRunDir(w.runDir, w.runId);
}

/**
 * Start the status heartbeat (every `w.heartbeatMs` ms, queued, rewriting the running status so
 * its `updatedAt` stays fresh) unless one runs, the writer is closed, heartbeats are off or the
 * run was reopened. The timer does not keep the process alive; a failed beat is dropped.
 */
export function startHeartbeat(w: LiveWriterState): void {
  if (w.timer || w.closed || w.heartbeatMs <= 0 || w.reopened) return;
  w.timer = setInterval(() => {
    if (w.status?.state !== "running") return;
    const s = w.status;
    void serial(w, () => writeStatusNow(w, { phase: s.phase, ...(s.detail !== undefined ? { detail: s.detail } : {}) })).catch(() => undefined);
  }, w.heartbeatMs);
  w.timer.unref?.();
}

/** `RunWriter.close`: stop the heartbeat for good. Idempotent. */
export function stopHeartbeat(w: LiveWriterState): void {
  w.closed = true;
  if (w.timer) clearInterval(w.timer);
  w.timer = undefined;
}

/** `RunWriter.writeStatus`: write the status now, and keep the heartbeat going while it says running. */
export async function updateStatusNow(w: LiveWriterState, update: StatusUpdate): Promise<void> {
  await writeStatusNow(w, update);
  if ((update.state ?? "running") === "running") startHeartbeat(w);
}
