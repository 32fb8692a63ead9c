/**
 * The bundle blocks a product adapter (the lab's scorer module) fills: its score, its feedback
 * candidates, the files it added, and the provenance of the module itself. Product nouns live
 * only under `{namespace, data}`; every other field is humanish's own vocabulary, so a reader
 * who knows nothing about the product can still read the block.
 *
 * Strict objects: a payload with an unknown key is malformed (the seam drops it with a warning),
 * and `verifyRun` re-checks the same shapes fail-closed.
 */
import { z } from "zod";

/** A namespace an adapter files its nouns under: `acme`, `acme.billing` (lower-case, dots and dashes). */
export const AdapterNamespaceSchema = z
  .string()
  .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/, "namespace must be 1–64 of a-z, 0-9, `.`, `_`, `-`, starting with a letter or digit");

/** Any JSON value (one schema object, so the published types name it once). */
export const JsonValueSchema = z.json();

/** Product data: a JSON object of the adapter's own nouns (values are scrubbed like all evidence). */
export const AdapterDataSchema = z.record(z.string(), JsonValueSchema);

/** Largest `data` of a score or a feedback candidate, bytes of its JSON text (bulk belongs in an adapter file). */
export const MAX_ADAPTER_DATA_BYTES = 256 * 1024;

/** {@link AdapterDataSchema} within {@link MAX_ADAPTER_DATA_BYTES}: `run.json` stays small enough to read and verify quickly. */
export const BoundedAdapterDataSchema = AdapterDataSchema.refine((d) => new TextEncoder().encode(JSON.stringify(d)).byteLength <= MAX_ADAPTER_DATA_BYTES, {
  message: `data is over ${MAX_ADAPTER_DATA_BYTES} bytes as JSON; put bulk in an adapter file (deriveArtifacts)`,
});

/** `humanish.adapter-score.v1`: the adapter's judgement of the run, 0–100. */
export const RunAdapterScoreSchema = z.strictObject({
  schema: z.literal("humanish.adapter-score.v1"),
  namespace: AdapterNamespaceSchema,
  /** `fail` fails the run result and turns a passing verdict into `fail`. */
  status: z.enum(["pass", "partial", "fail"]),
  /** 0–100. */
  score: z.number().finite().min(0).max(100),
  summary: z.string().min(1).max(2000),
  data: BoundedAdapterDataSchema.optional(),
});
export type RunAdapterScore = z.infer<typeof RunAdapterScoreSchema>;

/** Kinds of evidence a feedback candidate may point at. */
export const FeedbackEvidenceKindSchema = z.enum(["review", "state", "log", "trace", "screenshot", "filesystem"]);

/**
 * `humanish.feedback-candidate.v1`: one thing the product team may want to act on, with where in
 * the bundle to look. Fields are snake_case as in the upstream feedback contract.
 */
export const RunFeedbackCandidateSchema = z.strictObject({
  schema: z.literal("humanish.feedback-candidate.v1"),
  /** Unique within the run. */
  id: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}$/, "id must be 1–80 of letters, digits, `_`, `.`, `-`"),
  run_id: z.string().min(1),
  /** The participant (seat) the candidate is about, when it is about one. */
  participant_id: z.string().min(1).optional(),
  /** The adapter's namespace. */
  adapter_id: AdapterNamespaceSchema,
  lab_id: z.string().min(1),
  failure_owner: z.enum(["harness", "target-app", "actor", "environment", "unknown"]),
  summary: z.string().min(1).max(2000),
  expected: z.string().max(2000),
  actual: z.string().max(2000),
  /** Bundle-relative paths (each must be a listed artifact or `run.json`). */
  evidence: z.array(z.strictObject({ path: z.string().min(1), kind: FeedbackEvidenceKindSchema, note: z.string().max(500) })).max(32),
  redaction: z.strictObject({ status: z.literal("passed"), notes: z.string() }),
  /** Stable across reruns of the same finding, so a tracker can de-duplicate. */
  idempotency_key: z.string().min(1).max(200),
  proposed_next_state: z.enum(["watch", "adapter-hardening", "target-app-setup", "actor-auth", "setup-quality-review", "study-quality-review"]),
  acceptance_proof: z.array(z.string().max(500)).max(16),
  adapter: z.strictObject({ namespace: AdapterNamespaceSchema, data: BoundedAdapterDataSchema }).optional(),
});
export type RunFeedbackCandidate = z.infer<typeof RunFeedbackCandidateSchema>;

/** Kinds of file an adapter may add. */
export const AdapterArtifactKindSchema = z.enum(["state", "review", "log", "trace", "screenshot", "filesystem", "summary"]);

/** `humanish.adapter-artifact.v1`: a file the adapter added, at `adapter/<namespace>/…` in the bundle. */
export const RunAdapterArtifactSchema = z.strictObject({
  schema: z.literal("humanish.adapter-artifact.v1"),
  namespace: AdapterNamespaceSchema,
  label: z.string().min(1).max(200),
  /** Bundle-relative path, always under `adapter/<namespace>/`; listed in `artifacts` with its digest. */
  path: z.string().min(1),
  kind: AdapterArtifactKindSchema,
  note: z.string().max(1000),
});
export type RunAdapterArtifact = z.infer<typeof RunAdapterArtifactSchema>;

/** The hooks a scorer module may export. */
export const ScorerHookSchema = z.enum(["score", "deriveFeedback", "deriveArtifacts"]);
export type ScorerHook = z.infer<typeof ScorerHookSchema>;

/** A container the scorer ran in and how its removal ended (by exact id, confirmed by an inspect answering 404 for `released`). */
export const ScorerContainerSchema = z.strictObject({
  id: z.string().min(1),
  outcome: z.enum(["released", "retained", "unconfirmed"]),
  reason: z.string().max(2000),
  /** ISO time of the release. */
  at: z.string(),
});

/**
 * Where the scorer ran. `container`: in sandbox containers of its own (no network, no home,
 * read-only root), one to load it and one to run its hooks, each listed with its release.
 * `unconfined`: as a plain process of the operator, because no engine was usable (`reason`),
 * which the operator allowed with `HUMANISH_ALLOW_UNCONFINED_SCORER=1` (`optIn`). Absent in
 * bundles written before scorers were confined: they ran unconfined without being asked.
 */
export const ScorerConfinementSchema = z.strictObject({
  mode: z.enum(["container", "unconfined"]),
  /** `container`: the image the containers ran. */
  image: z.string().min(1).optional(),
  /** `container`: the containers, in the order they ran. */
  containers: z.array(ScorerContainerSchema).max(8).optional(),
  /** `unconfined`: why no container, and what the scorer could therefore read and do. */
  reason: z.string().max(2000).optional(),
  /** `unconfined`: the operator's opt-in. */
  optIn: z.literal("HUMANISH_ALLOW_UNCONFINED_SCORER=1").optional(),
});
export type ScorerConfinement = z.infer<typeof ScorerConfinementSchema>;

/** `humanish.scorer-provenance.v1`: which module scored the run, as loaded. */
export const ScorerProvenanceSchema = z.strictObject({
  schema: z.literal("humanish.scorer-provenance.v1"),
  /** The reference as declared (lab-relative for the manifest, project-relative for the flag). */
  ref: z.string().min(1),
  /** SHA-256 of the module file's bytes (its own imports are not covered). */
  digest: z.string().regex(/^[0-9a-f]{64}$/),
  source: z.enum(["manifest", "cli-flag"]),
  exports: z.array(ScorerHookSchema).min(1),
  /** Whether the hooks ran: `ran` on live runs, `loaded-only` on dry runs (nothing to score). */
  hooks: z.enum(["ran", "loaded-only"]),
  /** Where it ran (absent in older bundles). */
  confinement: ScorerConfinementSchema.optional(),
});
export type ScorerProvenance = z.infer<typeof ScorerProvenanceSchema>;
