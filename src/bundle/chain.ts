/**
 * Reading a continued study: verify a run, then follow its `continues` link back through the
 * runs directory, verifying each earlier run and checking that its `run.json` bytes are the ones
 * the later run recorded. Every bundle is parsed from the very bytes its verification judged.
 */
import { basename, dirname, join } from "node:path";
import { sha256Hex } from "../bytes/sha256.ts";
import { HumanishError } from "../errors.ts";
import { type RunBundle, RunBundleSchema } from "./schemas.ts";
import type { TrustSet } from "./signing/keys.ts";
import { verifyRunBytes } from "./verify.ts";

/** Most runs a chain may hold (a study has at most 16 seats, and each link reruns one or more, so this is ample). */
export const MAX_CHAIN_RUNS = 32;

/** One verified run: its bundle and the SHA-256 of the `run.json` bytes that verified. */
export interface VerifiedRun {
  bundle: RunBundle;
  runJsonSha256: string;
}

/**
 * Verify the run at `runDir` fail-closed and return its bundle with the digest of its run.json.
 * @throws HUMANISH_RUN_NOT_FOUND when there is no such run directory; HUMANISH_INVALID_RUN_BUNDLE
 *         naming the failed checks (or why nothing was checked)
 */
export async function loadVerifiedRun(runDir: string, trust: TrustSet): Promise<VerifiedRun> {
  const id = basename(runDir);
  const { result, runJson } = await verifyRunBytes(runDir, { trust });
  const failed = result.checks.filter((c) => !c.ok).map((c) => c.name);
  if (result.error?.code === "HUMANISH_RUN_NOT_FOUND")
    throw new HumanishError("HUMANISH_RUN_NOT_FOUND", `run ${id} not found in .humanish/runs`, { next: "list runs with: humanish runs" });
  const parsed = result.ok && runJson ? parseBundle(runJson) : undefined;
  if (!parsed || !runJson) {
    throw new HumanishError(
      "HUMANISH_INVALID_RUN_BUNDLE",
      `run ${id} does not verify (${failed.length ? `failed: ${failed.join(", ")}` : (result.error?.message ?? "no checks ran")})`,
      { next: `see why with: humanish verify --run ${id}`, details: { run: id, failedChecks: failed } },
    );
  }
  return { bundle: parsed, runJsonSha256: sha256Hex(runJson) };
}

function parseBundle(bytes: Uint8Array): RunBundle | undefined {
  try {
    const r = RunBundleSchema.safeParse(JSON.parse(new TextDecoder().decode(bytes)));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The verified chain ending at `runDir`, oldest first (one run when it continues nothing).
 * @throws HUMANISH_INVALID_RUN_BUNDLE when a run of the chain does not verify;
 *         HUMANISH_CONTINUES_BROKEN when an earlier run is missing, its run.json is not the one
 *         recorded, it is of another lab, or the chain loops or runs longer than {@link MAX_CHAIN_RUNS}
 */
export async function loadVerifiedChain(runDir: string, trust: TrustSet): Promise<{ chain: RunBundle[]; last: VerifiedRun }> {
  const last = await loadVerifiedRun(runDir, trust);
  const chain = [last.bundle];
  const seen = new Set([last.bundle.runId]);
  for (let at = last.bundle; at.continues; ) {
    const c = at.continues;
    const broken = (why: string) =>
      new HumanishError("HUMANISH_CONTINUES_BROKEN", `run ${at.runId} continues ${c.runId}, but ${why}`, {
        next: `keep the runs of a continued study together in .humanish/runs (humanish verify --run ${at.runId} says what its link checks)`,
      });
    if (seen.has(c.runId) || chain.length >= MAX_CHAIN_RUNS) throw broken(`the chain loops or is longer than ${MAX_CHAIN_RUNS} runs`);
    let earlier: VerifiedRun;
    try {
      earlier = await loadVerifiedRun(join(dirname(runDir), c.runId), trust);
    } catch (e) {
      if (e instanceof HumanishError && e.code === "HUMANISH_RUN_NOT_FOUND") throw broken(`run ${c.runId} is not in .humanish/runs`);
      throw e;
    }
    if (earlier.runJsonSha256 !== c.runJsonSha256) throw broken(`its run.json is not the one that run continued (SHA-256 changed)`);
    if (earlier.bundle.lab.id !== at.lab.id) throw broken(`it is of lab ${earlier.bundle.lab.id}`);
    seen.add(c.runId);
    chain.unshift(earlier.bundle);
    at = earlier.bundle;
  }
  return { chain, last };
}
