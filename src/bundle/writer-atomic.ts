/**
 * The asynchronous atomic write every run writer method ends in (the synchronous one is
 * ./atomic.ts): a reader of the run directory sees a file's old bytes or its new ones, never a
 * torn file.
 */
import { randomBytes } from "node:crypto";
import { open, rename, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { HumanishError } from "../errors.ts";

/**
 * Write `bytes` to the absolute `path`: a temp file in the same directory (0600, exclusive),
 * fsync, rename. `label` names the file in errors (never an absolute path).
 * @throws HUMANISH_BUNDLE_WRITE_FAILED (the temp file is removed)
 */
export async function atomicWrite(path: string, bytes: Uint8Array, label: string): Promise<void> {
  const tmp = join(dirname(path), `.tmp-${randomBytes(6).toString("hex")}`);
  try {
    const fh = await open(tmp, "wx", 0o600);
    try {
      await fh.writeFile(bytes);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(tmp, path);
  } catch (e) {
    await rm(tmp, { force: true }).catch(() => undefined);
    throw new HumanishError("HUMANISH_BUNDLE_WRITE_FAILED", `could not write ${label}: ${(e as NodeJS.ErrnoException).code ?? "error"}`, {
      next: "check free disk space and permissions of the .humanish directory",
      cause: e,
    });
  }
}
