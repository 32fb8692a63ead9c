/**
 * Atomic file writes of the bundle layer: a temp file in the same directory (0600, exclusive),
 * fsync, then rename, so a reader sees the old bytes or the new ones, never a torn file.
 */
import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { HumanishError } from "../errors.ts";

/** Temp file in the same directory → fsync → rename; `label` names the file in errors. */
export function writeFileAtomicSync(path: string, bytes: Uint8Array, label: string): void {
  const tmp = join(dirname(path), `.tmp-${randomBytes(6).toString("hex")}`);
  try {
    const fd = openSync(tmp, "wx", 0o600);
    try {
      writeSync(fd, bytes);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw new HumanishError("HUMANISH_BUNDLE_WRITE_FAILED", `could not write ${label}: ${(e as NodeJS.ErrnoException).code ?? "error"}`, {
      next: "check free disk space and permissions of the .humanish directory",
      cause: e,
    });
  }
}
