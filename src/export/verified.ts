/**
 * Reading a run only after it verified: the bundle (`run.json`) and any listed artifact, whose
 * bytes must still match the SHA-256 `run.json` lists for them — so what a comparison or an
 * export reads is exactly what `verify` judged, even if a file changed since.
 */
import { basename, join } from "node:path";
import { RUN_FILE } from "../bundle/paths.ts";
import { describeSafeReadFailure, safeReadFile } from "../bundle/safe-read.ts";
import { type RunBundle, RunBundleSchema } from "../bundle/schemas.ts";
import type { TrustSet } from "../bundle/signing/keys.ts";
import { verifyRun } from "../bundle/verify.ts";
import { sha256Hex } from "../bytes/sha256.ts";
import { HumanishError } from "../errors.ts";

/** Largest `run.json` read (bytes), as the run listing reads it. */
const MAX_RUN_JSON_BYTES = 32 * 1024 * 1024;

/**
 * Verify the run at `runDir` fail-closed and return its bundle.
 * @throws HUMANISH_INVALID_RUN_BUNDLE naming the failed checks when it does not verify, or when
 *         `run.json` no longer parses after it verified
 */
export async function loadVerifiedBundle(runDir: string, trust: TrustSet): Promise<RunBundle> {
  const id = basename(runDir);
  const v = await verifyRun(runDir, { trust });
  if (!v.ok) {
    const failed = v.checks.filter((c) => !c.ok).map((c) => c.name);
    throw new HumanishError(
      "HUMANISH_INVALID_RUN_BUNDLE",
      `run ${id} does not verify (${failed.length ? `failed: ${failed.join(", ")}` : (v.error?.message ?? "no checks ran")}); only verified runs are compared or exported`,
      { next: `see why with: humanish verify --run ${id}`, details: { run: id, failedChecks: failed } },
    );
  }
  const r = safeReadFile(join(runDir, RUN_FILE), MAX_RUN_JSON_BYTES);
  let parsed: ReturnType<typeof RunBundleSchema.safeParse> | null = null;
  try {
    parsed = r.ok ? RunBundleSchema.safeParse(JSON.parse(new TextDecoder().decode(r.bytes))) : null;
  } catch {
    parsed = null;
  }
  if (!parsed?.success) {
    throw new HumanishError("HUMANISH_INVALID_RUN_BUNDLE", `run ${id}: run.json changed or became unreadable after it verified`, {
      next: `re-check with: humanish verify --run ${id}`,
    });
  }
  return parsed.data;
}

/**
 * The bytes of the listed artifact `path` of a verified bundle.
 * @throws HUMANISH_INVALID_RUN_BUNDLE when it is not listed, cannot be read safely, or its bytes
 *         no longer match the listed SHA-256
 */
export function readVerifiedArtifact(runDir: string, bundle: RunBundle, path: string, maxBytes: number): Uint8Array {
  const entry = bundle.artifacts.find((a) => a.path === path);
  const id = bundle.runId;
  if (!entry) {
    throw new HumanishError("HUMANISH_INVALID_RUN_BUNDLE", `run ${id}: ${path} is not a listed artifact`, { next: `humanish verify --run ${id}` });
  }
  const r = safeReadFile(join(runDir, path), maxBytes);
  if (!r.ok) {
    throw new HumanishError("HUMANISH_INVALID_RUN_BUNDLE", `run ${id}: ${path} is refused: ${describeSafeReadFailure(r, maxBytes)}`, {
      next: `humanish verify --run ${id}`,
    });
  }
  if (sha256Hex(r.bytes) !== entry.sha256) {
    throw new HumanishError("HUMANISH_INVALID_RUN_BUNDLE", `run ${id}: ${path} changed after the bundle verified (SHA-256 differs from run.json)`, {
      next: `humanish verify --run ${id}`,
    });
  }
  return r.bytes;
}

/**
 * What to pass `humanish lab run` to run this run's lab again: the lab id for an embedded lab,
 * the persisted project-relative path for a lab file (a file-path lab has no id `lab run`
 * resolves), and a placeholder naming the file for a lab outside the project (its path was
 * never persisted).
 */
export function labRunArg(b: Pick<RunBundle, "lab">): string {
  const ref = b.lab.source.ref;
  if (ref.startsWith("embedded:")) return ref.slice("embedded:".length);
  if (ref.startsWith("[external]/")) return `<path to ${ref.slice("[external]/".length)}>`;
  return ref;
}
