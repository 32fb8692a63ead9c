/**
 * The shapes of the scorer seam: what a hook receives (the scoring context) and what it may
 * return, as zod schemas. The bundle blocks the results land in are defined with the bundle
 * (src/bundle/schemas-adapter.ts) and re-exported here; the return shapes below are the same
 * blocks minus the fields humanish fills itself (schema ids, run and lab ids, redaction), so an
 * adapter writes only its own judgement.
 *
 * `humanish types` prints these as TypeScript declarations (./contract.ts), so the types an
 * adapter is written against are these schemas and cannot drift from them.
 */
import { z } from "zod";
import { ActorTraceSchema, CleanupProofSchema, RunBundleSchema, TaskResultSchema, TerminalLedgersSchema } from "../bundle/schemas.ts";
import {
  AdapterArtifactKindSchema,
  AdapterDataSchema,
  AdapterNamespaceSchema,
  JsonValueSchema,
  RunAdapterScoreSchema,
  RunFeedbackCandidateSchema,
} from "../bundle/schemas-adapter.ts";

export {
  AdapterNamespaceSchema,
  type RunAdapterArtifact,
  RunAdapterArtifactSchema,
  type RunAdapterScore,
  RunAdapterScoreSchema,
  type RunFeedbackCandidate,
  RunFeedbackCandidateSchema,
  type ScorerProvenance,
  ScorerProvenanceSchema,
} from "../bundle/schemas-adapter.ts";

/** Most feedback candidates kept from one run. */
export const MAX_FEEDBACK_CANDIDATES = 64;
/** Most files one run's adapter may add. */
export const MAX_ADAPTER_ARTIFACTS = 16;
/** Largest file an adapter may add, bytes (after serialisation). */
export const MAX_ADAPTER_ARTIFACT_BYTES = 1024 * 1024;

/** What `score(ctx)` returns: the score block without its schema id (added by humanish when absent). */
export const ScoreResultSchema = RunAdapterScoreSchema.extend({ schema: RunAdapterScoreSchema.shape.schema.optional() });
export type ScoreResult = z.input<typeof ScoreResultSchema>;

/**
 * What `deriveFeedback(ctx)` returns per candidate: humanish fills `schema`, `run_id`, `lab_id`,
 * `redaction`, and `adapter_id` (from the score's namespace) and `acceptance_proof` (empty) when
 * absent.
 */
export const FeedbackResultSchema = RunFeedbackCandidateSchema.omit({ schema: true, run_id: true, lab_id: true, redaction: true }).extend({
  adapter_id: AdapterNamespaceSchema.optional(),
  acceptance_proof: RunFeedbackCandidateSchema.shape.acceptance_proof.optional(),
});
export type FeedbackResult = z.input<typeof FeedbackResultSchema>;

/**
 * What `deriveArtifacts(ctx)` returns per file: where under `adapter/<namespace>/` to put it
 * (a relative path of safe segments), and its content — text as is, anything else as JSON.
 */
export const ArtifactResultSchema = z.strictObject({
  namespace: AdapterNamespaceSchema,
  label: z.string().min(1).max(200),
  path: z.string().regex(/^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}(\/[A-Za-z0-9_-][A-Za-z0-9_.-]{0,63}){0,3}$/, {
    message: "path must be 1–4 segments of letters, digits, `_`, `.`, `-` (no leading dot), joined by /",
  }),
  kind: AdapterArtifactKindSchema,
  note: z.string().max(1000).optional(),
  content: z.union([z.string(), AdapterDataSchema, z.array(JsonValueSchema)]),
});
export type ArtifactResult = z.input<typeof ArtifactResultSchema>;

/**
 * A seat's model request ledger (`humanish.model-ledger.v1`, listed as `model-ledger`): written
 * for model-driven participants (a computer-use or Codex seat), on either route. The fields
 * humanish relies on are typed; a line carries more (token detail, cost source), typed as unknown.
 */
export const ScoringModelLedgerSchema = z.looseObject({
  schema: z.literal("humanish.model-ledger.v1"),
  participantId: z.string(),
  /** Endpoint host the requests went to (never a key). */
  endpointHost: z.string(),
  caps: z.looseObject({ maxUsd: z.number().nullable(), maxTotalUsd: z.number().nullable() }),
  /** Requests made, and how many the spend cap refused. */
  requests: z.number(),
  refused: z.number(),
  /** Known spend, USD; null when any request's cost is unknown. */
  usd: z.number().nullable(),
  observedModels: z.array(z.string()),
  lines: z.array(
    z.looseObject({
      ordinal: z.number(),
      at: z.string(),
      model: z.string().nullable(),
      input: z.number().nullable(),
      output: z.number().nullable(),
      /** USD of the request; null when unknown. */
      usd: z.number().nullable(),
      status: z.number(),
      outcome: z.string(),
    }),
  ),
});
export type ScoringModelLedger = z.infer<typeof ScoringModelLedgerSchema>;

/** Browser route: the seat's part of `desktop-ledgers.json` — its desktop's release proof and its screen geometry. */
export const ScoringDesktopLedgerSchema = z.strictObject({
  /** Release proofs of this seat's desktop (and the app server, when it was the seat's). */
  cleanup: z.array(CleanupProofSchema),
  /** Device preset and screen size in px; `startMs` is how long the desktop took to start, ms (null when unmeasured). */
  geometry: z.strictObject({ preset: z.string(), width: z.number(), height: z.number(), startMs: z.number().nullable() }).nullable(),
});
export type ScoringDesktopLedger = z.infer<typeof ScoringDesktopLedgerSchema>;

/** One participant (seat) of the run as a scorer sees it: its trace, ledgers, transcript and tasks. */
export const ScoringParticipantSchema = z.strictObject({
  id: z.string(),
  actorType: z.string(),
  status: z.string(),
  completionReason: z.string().nullable(),
  /** The seat's folder in the bundle (`seats/<id>/`), or null for a one-seat run's root layout. */
  folder: z.string().nullable(),
  /** The actor trace, or null when the participant never started. */
  trace: ActorTraceSchema.nullable(),
  /** Terminal route: `terminal-ledgers.json` (command log, cost ledger, cleanup); null on the browser route. */
  ledgers: TerminalLedgersSchema.nullable(),
  /** The seat's model request ledger, either route; null for a participant that made no model requests (scripted). */
  modelLedger: ScoringModelLedgerSchema.nullable(),
  /** Browser route: the seat's desktop release proofs and geometry from `desktop-ledgers.json`; null on the terminal route. */
  desktop: ScoringDesktopLedgerSchema.nullable(),
  /** Terminal route: the full transcript as persisted (already scrubbed); null elsewhere. */
  transcript: z.string().nullable(),
  /** Bundle-relative paths of the seat's screenshots (browser route). */
  screenshots: z.array(z.string()),
  /** This participant's hidden-check results. */
  tasks: z.array(TaskResultSchema),
});
export type ScoringParticipant = z.infer<typeof ScoringParticipantSchema>;

/**
 * `humanish.scoring-context.v1`: everything a hook receives, assembled after the hidden checks
 * and evidence collection and before the bundle is sealed. Every string in it is already redacted
 * (it is what the bundle holds); the whole object is deep-frozen.
 */
export const ScoringContextSchema = z.strictObject({
  schema: z.literal("humanish.scoring-context.v1"),
  runId: z.string(),
  labId: z.string(),
  route: z.enum(["terminal", "browser"]),
  mode: z.enum(["dry-run", "live"]),
  /** The product under study, from the lab's subject. */
  product: z.strictObject({
    source: z.enum(["terminal-product", "app-url"]),
    name: z.string().optional(),
    publicSurfaces: z.array(z.string()).optional(),
    appUrl: z.string().optional(),
  }),
  /** `run.json` as it will be sealed, before the scorer's own blocks are added. */
  bundle: RunBundleSchema,
  participants: z.array(ScoringParticipantSchema),
  /** The first participant's trace, ledgers and transcript (the only one in a one-seat run). */
  trace: ActorTraceSchema.nullable(),
  ledgers: TerminalLedgersSchema.nullable(),
  transcript: z.string().nullable(),
});
export type ScoringContext = z.infer<typeof ScoringContextSchema>;
