/**
 * Recovery markers: what a session leaves behind when it could not give everything back, under
 * `$XDG_CACHE_HOME/humanish/codex-analysis-recovery/` (else `~/.cache/...`). Two reasons:
 * - `process_cleanup_unconfirmed`: the child did not confirm its exit; its private directory is
 *   kept and every new session is refused (`HUMANISH_CODEX_BUSY`) until that exact child (pid
 *   and start time) is gone, after which the next start finishes the cleanup;
 * - `unexpected_auth_replacement`: the private `auth.json` link was replaced by a file (Codex
 *   rewrote the login, e.g. after a token refresh). The file is kept 0600 in its 0700 home and
 *   never copied back — which copy of the login is current is the operator's call — and new
 *   sessions are refused (`HUMANISH_CODEX_CLEANUP_FAILED`) until the operator resolves it.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { isAbsolute, join } from "node:path";
import { HumanishError } from "../../errors.ts";
import { inspectAuthLink, readOwner, TASK_DIR_PREFIX } from "./home.ts";
import { isAlive } from "./process.ts";

/** Marker schema id. */
export const RECOVERY_SCHEMA = "humanish.codex-auth-recovery.v1";

/** One marker file's content. */
export interface RecoveryMarker {
  schema: typeof RECOVERY_SCHEMA;
  /** Absolute path of the kept private directory. */
  taskDirectory: string;
  taskDirectoryName: string;
  homeDirectoryName: "home";
  authFileName: "auth.json";
  reason: "unexpected_auth_replacement" | "process_cleanup_unconfirmed";
  /** The unconfirmed child (only for `process_cleanup_unconfirmed`). */
  pid?: number;
  pidStartTime?: string;
  /** Realpath the link pointed to (the operator's login file). */
  authTarget: string;
  at: string;
}

/** The marker directory for an environment. */
export function recoveryDir(env: Record<string, string | undefined>): string {
  const cache =
    env.XDG_CACHE_HOME && isAbsolute(env.XDG_CACHE_HOME) ? env.XDG_CACHE_HOME : join(env.HOME && isAbsolute(env.HOME) ? env.HOME : homedir(), ".cache");
  return join(cache, "humanish", "codex-analysis-recovery");
}

/** Writes (or replaces) the marker of a task directory; returns its path. */
export function writeMarker(env: Record<string, string | undefined>, m: Omit<RecoveryMarker, "schema" | "at" | "homeDirectoryName" | "authFileName">): string {
  const dir = recoveryDir(env);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, `${m.taskDirectoryName}.json`);
  const full: RecoveryMarker = { schema: RECOVERY_SCHEMA, homeDirectoryName: "home", authFileName: "auth.json", at: new Date().toISOString(), ...m };
  writeFileSync(file, `${JSON.stringify(full, null, 2)}\n`, { mode: 0o600 });
  return file;
}

function readMarkers(dir: string): Array<{ file: string; marker: RecoveryMarker | null }> {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => n.endsWith(".json"))
    .map((n) => {
      const file = join(dir, n);
      try {
        const m = JSON.parse(readFileSync(file, "utf8")) as RecoveryMarker;
        return { file, marker: m?.schema === RECOVERY_SCHEMA ? m : null };
      } catch {
        return { file, marker: null };
      }
    });
}

/**
 * Settles what earlier sessions left: an unconfirmed child that is now gone has its directory
 * removed (or, if its auth link was replaced meanwhile, becomes an auth-replacement marker).
 * @throws HumanishError `HUMANISH_CODEX_BUSY` while an unconfirmed child is still alive;
 *   `HUMANISH_CODEX_CLEANUP_FAILED` while an auth-replacement marker is unresolved or a marker is unreadable.
 */
export function settleRecoveryMarkers(env: Record<string, string | undefined>): void {
  const dir = recoveryDir(env);
  for (const { file, marker } of readMarkers(dir)) {
    if (!marker)
      throw new HumanishError("HUMANISH_CODEX_CLEANUP_FAILED", `recovery marker ${file} is unreadable`, {
        next: `Inspect ${file} and the directory it names, then delete the marker.`,
      });
    if (marker.reason === "process_cleanup_unconfirmed") {
      const child = { pid: marker.pid ?? -1, startTime: marker.pidStartTime ?? "" };
      if (isAlive(child))
        throw new HumanishError(
          "HUMANISH_CODEX_BUSY",
          `an earlier Codex app-server (pid ${child.pid}) did not confirm its exit; no new Codex session starts until it is gone`,
          {
            next: `Wait for pid ${child.pid} to exit (or end it yourself: kill -9 ${child.pid}), then retry.`,
            details: { marker: file, taskDirectory: marker.taskDirectory },
          },
        );
      const link = existsSync(marker.taskDirectory) ? inspectAuthLink(join(marker.taskDirectory, "home", "auth.json"), marker.authTarget) : "missing";
      if (link === "replaced") {
        writeMarker(env, { ...marker, reason: "unexpected_auth_replacement", pid: undefined, pidStartTime: undefined });
        continue;
      }
      rmSync(marker.taskDirectory, { recursive: true, force: true });
      rmSync(file, { force: true });
      continue;
    }
    if (!existsSync(join(marker.taskDirectory, "home", "auth.json"))) {
      // The operator moved or deleted the kept login: resolved.
      rmSync(marker.taskDirectory, { recursive: true, force: true });
      rmSync(file, { force: true });
      continue;
    }
    throw new HumanishError(
      "HUMANISH_CODEX_CLEANUP_FAILED",
      `a Codex session replaced its auth.json link with a file (kept 0600 at ${join(marker.taskDirectory, "home", "auth.json")}); humanish never copies it back`,
      {
        next: `Decide which login is current: keep yours (${marker.authTarget}) or move the kept file over it yourself; then delete ${marker.taskDirectory} and ${file}.`,
        details: { marker: file, taskDirectory: marker.taskDirectory },
      },
    );
  }
}

/**
 * Removes task directories abandoned by a humanish process that died before closing its
 * session (killed, crashed): only when the directory's recorded owner AND child (pid + start
 * time) are both gone. A directory whose login link was replaced becomes an auth-replacement
 * marker instead of being removed. Directories without an owner file are never touched.
 * @returns the directories removed.
 */
export function sweepAbandonedTaskDirs(env: Record<string, string | undefined>, tmpRoot: string = tmpdir()): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(tmpRoot).filter((n) => n.startsWith(TASK_DIR_PREFIX));
  } catch {
    return removed;
  }
  const marked = new Set(existsSync(recoveryDir(env)) ? readdirSync(recoveryDir(env)) : []);
  for (const name of names) {
    if (marked.has(`${name}.json`)) continue;
    const root = join(tmpRoot, name);
    const owner = readOwner(root);
    if (!owner) continue;
    if (isAlive({ pid: owner.ownerPid, startTime: owner.ownerStartTime })) continue;
    if (owner.childPid !== undefined && isAlive({ pid: owner.childPid, startTime: owner.childStartTime ?? "" })) continue;
    if (inspectAuthLink(join(root, "home", "auth.json"), owner.authTarget) === "replaced") {
      writeMarker(env, { taskDirectory: root, taskDirectoryName: name, reason: "unexpected_auth_replacement", authTarget: owner.authTarget });
      continue;
    }
    rmSync(root, { recursive: true, force: true });
    removed.push(root);
  }
  return removed;
}
