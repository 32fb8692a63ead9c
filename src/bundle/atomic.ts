/**
 * Atomic file writes of the bundle layer: a temp file in the same directory (0600, exclusive),
 * fsync, then rename, so a reader sees the old bytes or the new ones, never a torn file.
 */
import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { HumanishError } from "../errors.ts";

/**
 * Writes `data` to a new file at `path` — exclusive (it must not
 * exist yet), mode 0600 — and fsyncs it before closing, so its bytes are on disk before the
 * caller renames or links it into place.
 * @throws the fs error (`EEXIST`, `ENOSPC`, …); a file left behind is the caller's to remove
 */
export function writeNewFileSynced(path: string, data: Uint8Array): void {
  const fd = openSync(path, "wx", 0o600);
  try {
    writeSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Temp file in the same directory → fsync → rename; `label` names the file in errors. */
export function writeFileAtomicSync(path: string, bytes: Uint8Array, label: string): void {
  const tmp = join(dirname(path), `.tmp-${randomBytes(6).toString("hex")}`);
  try {
    writeNewFileSynced(tmp, bytes);
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw new HumanishError("HUMANISH_BUNDLE_WRITE_FAILED", `could not write ${label}: ${(e as NodeJS.ErrnoException).code ?? "error"}`, {
      next: "check free disk space and permissions of the .humanish directory",
      cause: e,
    });
  }
}
