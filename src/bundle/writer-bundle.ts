/**
 * The `run.json` a run writer seals: the route's input, redacted, with the manifest of every
 * tracked artifact (bytes and SHA-256 read back from disk) attached afterwards and the whole
 * checked against `humanish.run-bundle.v1`. Nothing here writes.
 */
import { readFile } from "node:fs/promises";
import { basename, isAbsolute, join, relative, sep } from "node:path";
import type { z } from "zod";
import { HASH_WINDOW_BYTES, scratchWindow } from "../bytes/scratch.ts";
import { sha256Hex } from "../bytes/sha256.ts";
import { HumanishError } from "../errors.ts";
import { zodIssues } from "../text/zod-issues.ts";
import { deriveReview, summarizeCost } from "./derive.ts";
import { artifactRootFor } from "./paths.ts";
import { type ArtifactEntry, type RunBundle, type RunBundleInputSchema, RunBundleSchema } from "./schemas.ts";
import type { WriterState } from "./writer-state.ts";

/** The scorer's blocks of a bundle input, copied only when present (older bundles carry none). */
export function adapterBlocks(
  inp: Pick<RunBundle, "scorerProvenance" | "adapterScore" | "feedbackCandidates" | "adapterArtifacts">,
): Pick<RunBundle, "scorerProvenance" | "adapterScore" | "feedbackCandidates" | "adapterArtifacts"> {
  return {
    ...(inp.scorerProvenance ? { scorerProvenance: inp.scorerProvenance } : {}),
    ...(inp.adapterScore ? { adapterScore: inp.adapterScore } : {}),
    ...(inp.feedbackCandidates ? { feedbackCandidates: inp.feedbackCandidates } : {}),
    ...(inp.adapterArtifacts ? { adapterArtifacts: inp.adapterArtifacts } : {}),
  };
}

/**
 * The lab reference as persisted: `embedded:<id>` and relative paths stay; an absolute path under
 * the project becomes project-relative; any other absolute path keeps only its file name under
 * `[external]/` (the absolute cwd and host paths are never persisted).
 */
export function labRefFor(ref: string, cwd: string): string {
  if (!ref.startsWith("/")) return ref;
  const rel = relative(cwd, ref);
  if (rel && !rel.startsWith("..") && !isAbsolute(rel)) return rel.split(sep).join("/");
  return `[external]/${basename(ref)}`;
}

/**
 * The manifest of every tracked artifact in path order (code-unit order), each with its byte
 * count and the SHA-256 of its bytes as they are on disk now.
 * @throws HUMANISH_BUNDLE_WRITE_FAILED when a tracked file is gone
 */
async function manifestOf(st: WriterState): Promise<ArtifactEntry[]> {
  const artifacts: ArtifactEntry[] = [];
  // Each file's bytes are dropped after hashing; the window collects them so a 1,600-frame
  // bundle's pass costs a window of reads, not the whole bundle.
  const scratch = scratchWindow(HASH_WINDOW_BYTES);
  for (const [rel, kind] of [...st.tracked.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    let bytes: Uint8Array;
    try {
      bytes = new Uint8Array(await readFile(join(st.runDir, rel)));
    } catch (e) {
      throw new HumanishError("HUMANISH_BUNDLE_WRITE_FAILED", `artifact ${rel} vanished before finalize: ${(e as NodeJS.ErrnoException).code ?? "error"}`, {
        next: "do not modify the run directory while a run is being written",
      });
    }
    artifacts.push({ path: rel, kind, bytes: bytes.byteLength, sha256: sha256Hex(bytes) });
    scratch.add(bytes.byteLength);
  }
  return artifacts;
}

/**
 * The bundle `inp` seals into, completed at `completedAt` (ISO time): manifest read back from
 * disk, content redacted, schema-checked; without writing anything: `finalize` writes it,
 * `preview` hands it to the scorer seam.
 * @throws HUMANISH_INVALID_RUN_BUNDLE, HUMANISH_REDACTION_FAILED, HUMANISH_BUNDLE_WRITE_FAILED
 */
export async function buildBundle(st: WriterState, inp: z.output<typeof RunBundleInputSchema>, completedAt: string): Promise<RunBundle> {
  const artifacts = await manifestOf(st);
  const review = inp.review ?? deriveReview({ mode: inp.mode, outcome: inp.outcome, participants: inp.participants, tasks: inp.tasks });
  const bundle: RunBundle = {
    schema: "humanish.run-bundle.v1",
    runId: st.runId,
    route: inp.route,
    mode: inp.mode,
    target: inp.target,
    createdAt: inp.createdAt,
    completedAt,
    durationMs: Math.max(0, Date.parse(completedAt) - Date.parse(inp.createdAt)),
    cwd: "[target-cwd]",
    artifactRoot: artifactRootFor(st.runId),
    lab: { ...inp.lab, source: { ...inp.lab.source, ref: labRefFor(inp.lab.source.ref, st.cwd) } },
    subject: inp.subject,
    outcome: inp.outcome,
    lifecycle: inp.lifecycle,
    participants: inp.participants,
    tasks: inp.tasks,
    review,
    caps: inp.caps,
    cost: inp.cost ?? summarizeCost([]),
    cleanup: inp.cleanup,
    warnings: inp.warnings,
    redaction: {
      status: "passed",
      notes:
        inp.redactionNotes ??
        "every artifact passed the literal secret scrub, secret-shape and local-path patterns before it was written; screenshots are raw frames admitted as PNG",
    },
    artifacts,
    ...(inp.study ? { study: inp.study } : {}),
    ...adapterBlocks(inp),
    ...(inp.continues ? { continues: inp.continues } : {}),
  };
  // Everything the route supplied is redacted; the manifest (our own checked paths, sizes
  // and digests) is attached afterwards so a short secret value can never rewrite a digest.
  const { artifacts: manifest, ...content } = bundle;
  const redactedContent = st.redactor.value(content);
  if (st.redactor.containsSecretIn(redactedContent)) {
    throw new HumanishError("HUMANISH_REDACTION_FAILED", "run.json: a secret value survived redaction; nothing was written", {
      next: "report this as a bug",
    });
  }
  const checked = RunBundleSchema.safeParse({ ...redactedContent, artifacts: manifest });
  if (!checked.success) {
    throw new HumanishError("HUMANISH_INVALID_RUN_BUNDLE", `run.json for ${st.runId} does not match humanish.run-bundle.v1: ${zodIssues(checked.error)}`, {
      next: "fix the named field of the finalize input",
    });
  }
  return checked.data;
}
