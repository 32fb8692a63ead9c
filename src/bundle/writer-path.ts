/**
 * Where a run writer may write: an artifact path is a safe relative path inside the run
 * directory, free of secrets, under real directories only, and never a file humanish owns
 * (run.json, the signature, the derived files) or a temp file of an atomic write.
 */
import type { Stats } from "node:fs";
import { lstat, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { HumanishError } from "../errors.ts";
import { artifactRootFor, DERIVED_FILES, RUN_FILE, safeRelPath } from "./paths.ts";
import { SIGNATURE_FILE } from "./signing/manifest.ts";
import type { WriterState } from "./writer-state.ts";

const RESERVED = new Set<string>([RUN_FILE, SIGNATURE_FILE, ...DERIVED_FILES]);

/**
 * The normalised artifact path `rel` (`/`-separated, relative to the run) and its absolute path
 * `abs` for `relPath`. Missing parent directories are created (0700); an existing file at `abs`
 * must be a plain single-link file.
 * @throws HUMANISH_UNSAFE_ARTIFACT_PATH (unsafe, reserved, secret-bearing, or through a symlink),
 *   HUMANISH_BUNDLE_WRITE_FAILED (a parent directory could not be created)
 */
export async function containedPath(st: WriterState, relPath: string): Promise<{ rel: string; abs: string }> {
  const rel = safeRelPath(relPath);
  if (rel === null || RESERVED.has(rel) || rel.split("/").some((s) => s.startsWith(".tmp-"))) {
    throw new HumanishError("HUMANISH_UNSAFE_ARTIFACT_PATH", `artifact path ${JSON.stringify(relPath)} is not a safe relative path inside the run directory`, {
      next: "use a relative path like actor.json or screenshots/001.png (no .., no absolute paths, not run.json/status.json)",
    });
  }
  // Paths are fixed names plus lab ids and counters, never values: a secret equal to a word of
  // a fixed name (`sandbox`) is a coincidence; any other secret or a shape is refused.
  if (st.redactor.nameContainsSecret(rel)) {
    throw new HumanishError("HUMANISH_UNSAFE_ARTIFACT_PATH", "artifact path contains a secret value or a secret/local-path shape", {
      next: "name artifacts with fixed names and participant ids, never with values",
    });
  }
  // Walk every parent segment: each must be a real directory (created when missing), never a symlink.
  const parts = rel.split("/");
  let cur = st.runDir;
  for (const seg of parts.slice(0, -1)) {
    cur = join(cur, seg);
    let s: Stats;
    try {
      s = await lstat(cur);
    } catch {
      try {
        await mkdir(cur, { mode: 0o700 });
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== "EEXIST") {
          throw new HumanishError(
            "HUMANISH_BUNDLE_WRITE_FAILED",
            `could not create ${artifactRootFor(st.runId)}/${parts.slice(0, parts.indexOf(seg) + 1).join("/")}: ${(e as NodeJS.ErrnoException).code ?? "error"}`,
            {
              next: "check free disk space and permissions of the .humanish directory",
              cause: e,
            },
          );
        }
      }
      s = await lstat(cur);
    }
    if (!s.isDirectory() || s.isSymbolicLink()) {
      throw new HumanishError("HUMANISH_UNSAFE_ARTIFACT_PATH", `artifact path ${rel}: ${seg} is not a real directory inside the run`, {
        next: "remove the symlink or file from the run directory",
      });
    }
  }
  const abs = join(st.runDir, rel);
  try {
    const s = await lstat(abs);
    if (!s.isFile() || s.isSymbolicLink() || s.nlink > 1) {
      throw new HumanishError("HUMANISH_UNSAFE_ARTIFACT_PATH", `artifact path ${rel} exists and is not a plain single-link file`, {
        next: "remove it from the run directory",
      });
    }
  } catch (e) {
    if (e instanceof HumanishError) throw e;
  }
  return { rel, abs };
}
