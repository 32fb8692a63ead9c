/**
 * Host processes owned like containers (ARCHITECTURE.md invariant 7): a process humanish starts
 * on the host for a study (a browser lab's `serve.command`) leads its own process group, and its
 * identity — pid plus start time (field 22 of /proc/<pid>/stat), the controller that started it,
 * run and project — is written to an owner record BEFORE the process is waited on. When the
 * controller ends it normally it removes the record; when the controller dies (SIGKILL, crash),
 * the next command's orphan sweep ({@link reconcileHostProcesses}) ends that exact process group
 * and records the outcome (`released` / `unconfirmed`) in the run's `orphan-release.json`.
 *
 * Records live in a private per-user directory (mode 0700) under the temp dir, one JSON file
 * per process, so any later command of the same user finds them whatever its cwd. A pid is only
 * ever signalled while its start time still matches the record (a reused pid is never touched).
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join, relative } from "node:path";
import { z } from "zod";
import { ORPHAN_RELEASE_FILE, recordOrphanRelease } from "../bundle/index.ts";
import { hasEnded, procStat } from "../proc.ts";
import { controllerIdentity, isControllerLive, processStartTicks } from "../sandbox/controller.ts";
import type { ReleaseProof } from "../sandbox/types.ts";

/** Schema id of an owner record. */
export const HOST_PROCESS_SCHEMA = "humanish.host-process.v1";

const RecordSchema = z.strictObject({
  schema: z.literal(HOST_PROCESS_SCHEMA),
  /** Exact id `host-process:<pid>:<start ticks>` used in release proofs. */
  id: z.string().regex(/^host-process:[0-9]+:[0-9]+$/),
  pid: z.number().int().positive(),
  /** Start time of `pid` in clock ticks since boot. */
  startTicks: z.string().regex(/^[0-9]+$/),
  /** The owning controller's identity (`<host>:<pid>:<start ticks>`, see sandbox/controller.ts). */
  controller: z.string().min(1),
  kind: z.literal("app-server"),
  runId: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]{0,127}$/)
    .nullable(),
  /** Absolute project directory of the run, where the release is recorded. */
  project: z.string().nullable(),
  /** The loopback port the process serves, when known. */
  port: z.number().int().min(1).max(65535).nullable(),
  at: z.string(),
});

/** One owner record. */
export type HostProcessRecord = z.infer<typeof RecordSchema>;

/** Who owns a process being recorded. */
export interface HostProcessOwner {
  runId?: string;
  /** Absolute project directory. */
  project?: string;
  port?: number;
}

/** The owner-record directory of this user (created 0700 on first use). */
export function hostProcessDir(): string {
  const uid = typeof process.getuid === "function" ? process.getuid() : 0;
  return join(tmpdir(), `humanish-owned-${uid}`);
}

function recordFile(dir: string, pid: number, ticks: string): string {
  return join(dir, `${pid}-${ticks}.json`);
}

/** A handle on a recorded process. */
export interface OwnedHostProcess {
  /** `host-process:<pid>:<start ticks>`. */
  id: string;
  record: HostProcessRecord;
  /** Removes the owner record (call only once the process is proven gone). */
  disown(): void;
}

/**
 * Records that this controller owns process `pid` (which must lead its own process group).
 * Throws when the pid is already gone (nothing to own) or the record cannot be written — the
 * caller must then end the process itself, since no later sweep could.
 */
export function ownHostProcess(pid: number, owner: HostProcessOwner = {}, dir: string = hostProcessDir()): OwnedHostProcess {
  const ticks = processStartTicks(pid);
  if (ticks === undefined) throw new Error(`process ${pid} exited before it could be recorded`);
  const record: HostProcessRecord = {
    schema: HOST_PROCESS_SCHEMA,
    id: `host-process:${pid}:${ticks}`,
    pid,
    startTicks: ticks,
    controller: controllerIdentity(),
    kind: "app-server",
    runId: owner.runId ?? null,
    project: owner.project ?? null,
    port: owner.port ?? null,
    at: new Date().toISOString(),
  };
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = recordFile(dir, pid, ticks);
  const tmp = `${file}.${randomBytes(6).toString("hex")}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
  return { id: record.id, record, disown: () => rmSync(file, { force: true }) };
}

/** Pids of live (non-zombie) processes whose process group is `pgid`. */
export function processGroupMembers(pgid: number): number[] {
  const out: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync("/proc");
  } catch {
    return out;
  }
  for (const name of entries) {
    if (!/^[0-9]+$/.test(name)) continue;
    const stat = procStat(name);
    if (stat && !hasEnded(stat) && stat.pgrp === pgid) out.push(Number(name));
  }
  return out;
}

async function waitGone(pgid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (processGroupMembers(pgid).length === 0) return true;
    if (Date.now() >= deadline) return false;
    await Bun.sleep(50);
  }
}

/**
 * Ends the recorded process group: SIGTERM, then SIGKILL after `graceMs`, and confirms no member
 * is left. A leader whose start time no longer matches means the pid was reused — the original
 * group is gone (Linux never reuses a pid while its group exists) and nothing is signalled.
 * Never throws; the proof says what happened.
 */
export async function releaseHostProcess(record: Pick<HostProcessRecord, "id" | "pid" | "startTicks">, graceMs = 3_000): Promise<ReleaseProof> {
  const at = new Date().toISOString();
  const proof = (outcome: ReleaseProof["outcome"], reason: string): ReleaseProof => ({
    id: record.id,
    provider: "host",
    kind: "app-server",
    outcome,
    reason,
    at,
  });
  const leaderTicks = processStartTicks(record.pid);
  if (leaderTicks !== undefined && leaderTicks !== record.startTicks)
    return proof("released", "pid reused by another process; the recorded process group is gone");
  if (processGroupMembers(record.pid).length === 0) return proof("released", "process group already gone");
  const signal = (sig: NodeJS.Signals): string | undefined => {
    try {
      process.kill(-record.pid, sig);
      return undefined;
    } catch (e) {
      return (e as NodeJS.ErrnoException).code ?? String(e);
    }
  };
  const termErr = signal("SIGTERM");
  if (await waitGone(record.pid, graceMs))
    return proof("released", termErr ? `group gone (SIGTERM: ${termErr})` : "SIGTERM to the process group; no member left");
  const killErr = signal("SIGKILL");
  if (await waitGone(record.pid, 2_000)) return proof("released", "SIGKILL to the process group after SIGTERM; no member left");
  return proof("unconfirmed", `process group ${record.pid} still has members after SIGKILL${killErr ? ` (${killErr})` : ""}`);
}

/** One host process released by the sweep. */
export interface HostProcessRelease {
  runId: string | null;
  proof: ReleaseProof;
  /** Path of the run's orphan-release.json, relative to cwd, or null when not recorded. */
  recordedIn: string | null;
}

function recordIn(cwd: string, rec: HostProcessRecord, proof: ReleaseProof): string | null {
  if (!rec.runId) return null;
  const root = rec.project && isAbsolute(rec.project) && existsSync(join(rec.project, ".humanish", "runs", rec.runId)) ? rec.project : cwd;
  try {
    return recordOrphanRelease(root, rec.runId, proof) ? relative(cwd, join(root, ".humanish", "runs", rec.runId, ORPHAN_RELEASE_FILE)) : null;
  } catch {
    return null;
  }
}

/**
 * The host half of the orphan sweep: every owner record whose controller is gone is released
 * ({@link releaseHostProcess}) and the proof appended to its run's `orphan-release.json`; a
 * released record is removed, an unconfirmed one kept for the next sweep. Unreadable records are
 * left alone. Never throws.
 */
export async function reconcileHostProcesses(cwd: string, dir: string = hostProcessDir()): Promise<HostProcessRelease[]> {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => /^[0-9]+-[0-9]+\.json$/.test(n));
  } catch {
    return [];
  }
  const out: HostProcessRelease[] = [];
  for (const name of names) {
    const file = join(dir, name);
    let rec: HostProcessRecord;
    try {
      const parsed = RecordSchema.safeParse(JSON.parse(readFileSync(file, "utf8")));
      if (!parsed.success) continue;
      rec = parsed.data;
    } catch {
      continue;
    }
    if (isControllerLive(rec.controller)) continue;
    const released = await releaseHostProcess(rec);
    const proof = { ...released, reason: `orphan (controller gone): ${released.reason}` };
    const recordedIn = recordIn(cwd, rec, proof);
    if (released.outcome === "released") rmSync(file, { force: true });
    out.push({ runId: rec.runId, proof, recordedIn });
  }
  return out;
}
