/**
 * Run ids and run-directory paths.
 * `.humanish/runs/<runId>/` holds one run; `.humanish/runs/latest.json` points at the newest.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { HumanishError } from "../errors.ts";
import { RUN_ID_PATTERN } from "./schemas.ts";

/** `<cwd>/.humanish/runs`. */
export function runsDir(cwd: string): string {
  return join(cwd, ".humanish", "runs");
}

/** `<cwd>/.humanish/runs/<runId>` (the id is validated first). */
export function runDirFor(cwd: string, runId: string): string {
  assertRunId(runId);
  return join(runsDir(cwd), runId);
}

/** Project-relative artifact root `.humanish/runs/<runId>`. */
export function artifactRootFor(runId: string): string {
  return `.humanish/runs/${runId}`;
}

/** The one id reserved for the latest-run pointer (`verify --run latest`); never a run's id. */
export const RESERVED_RUN_ID = "latest";

/**
 * True when `id` is a run id humanish would write (`^[a-z0-9][a-z0-9-]{0,127}$`, no `--`,
 * not the reserved {@link RESERVED_RUN_ID}).
 */
export function isValidRunId(id: string): boolean {
  return RUN_ID_PATTERN.test(id) && !id.includes("--") && id !== RESERVED_RUN_ID;
}

/**
 * Readers accept any single safe path segment: not `.`/`..`, no separators or NUL, ≤ 255 bytes.
 * (Writers are stricter: {@link isValidRunId}.)
 */
export function isSafeRunSegment(id: string): boolean {
  return id.length > 0 && id.length <= 255 && id !== "." && id !== ".." && !/[/\\\0]/.test(id);
}

/**
 * Throw `HUMANISH_INVALID_RUN_ID` unless `id` is a valid run id.
 * @throws HumanishError HUMANISH_INVALID_RUN_ID
 */
export function assertRunId(id: string): void {
  if (id === RESERVED_RUN_ID) {
    throw new HumanishError("HUMANISH_INVALID_RUN_ID", `run id "${RESERVED_RUN_ID}" is reserved: it names the latest run (e.g. humanish verify --run latest)`, {
      next: "pass --run-id with a value like my-study-1, or omit --run-id to get a generated one",
    });
  }
  if (!isValidRunId(id)) {
    throw new HumanishError(
      "HUMANISH_INVALID_RUN_ID",
      `run id ${JSON.stringify(id.slice(0, 140))} is invalid: use lower-case letters, digits and single dashes (^[a-z0-9][a-z0-9-]{0,127}$, no "--")`,
      { next: "pass --run-id with a value like my-study-1, or omit --run-id to get a generated one" },
    );
  }
}

/**
 * A fresh run id: `<route>-<ISO stamp with : and . replaced by ->-<8 hex>`, lower-cased,
 * e.g. `terminal-2026-11-30t02-55-00-000z-1a2b3c4d`.
 */
export function newRunId(prefix: string = "run", now: Date = new Date()): string {
  const stamp = now.toISOString().replace(/[:.]/g, "-").toLowerCase();
  const safePrefix =
    prefix
      .toLowerCase()
      .replace(/[^a-z0-9-]+/g, "-")
      .replace(/-+/g, "-")
      .replace(/^-|-$/g, "") || "run";
  const id = `${safePrefix}-${stamp}-${randomBytes(4).toString("hex")}`;
  return id.slice(0, 128);
}

/**
 * Normalise an artifact path: a relative POSIX path inside the run dir with no `.`/`..`
 * segments, no absolute or URL form, no empty segments, no NUL/backslash, ≤ 512 chars.
 * Returns the normalised path or null when unsafe.
 */
export function safeRelPath(rel: string): string | null {
  if (typeof rel !== "string" || rel.length === 0 || rel.length > 512) return null;
  if (rel.startsWith("/") || rel.includes("\\") || rel.includes("\0") || rel.includes("://")) return null;
  const parts = rel.split("/");
  for (const p of parts) {
    if (p === "" || p === "." || p === "..") return null;
    if (/[\u0000-\u001f\u007f]/.test(p)) return null;
  }
  return parts.join("/");
}

/**
 * Orphan-release record (`humanish.orphan-release.v1`) that orphan reconciliation appends to a
 * run's directory after the run's own process died (src/runtime/reconcile.ts).
 */
export const ORPHAN_RELEASE_FILE = "orphan-release.json";

/**
 * Files in a run dir that are written after (or beside) the sealed bundle and therefore never
 * listed in `run.json`: the derived liveness index `status.json`, and the after-the-fact
 * {@link ORPHAN_RELEASE_FILE}. Both are still schema-checked and scanned by `verifyRun`.
 */
export const DERIVED_FILES: readonly string[] = ["status.json", ORPHAN_RELEASE_FILE];
/** The evidence-of-record file itself (not listed in its own `artifacts`). */
export const RUN_FILE = "run.json";
