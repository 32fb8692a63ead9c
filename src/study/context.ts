/**
 * What a study runs with and what it returns: the CLI resolves the lab and the run id, then
 * calls the route's `run…Study(ctx)`; the route plans the seats and hands them to the study
 * runner (allocate → provision → participate → check → release per seat, then write → verify →
 * report; ARCHITECTURE.md "Data flow"), and returns the result. Kept with the runner, below the
 * routes, so the runner never imports a route.
 */
import type { LoadedScorer } from "../adapters/load.ts";
import type { Continues, VerifyResult } from "../bundle/index.ts";
import type { PostAnalysisOutcome } from "./post-analysis.ts";

/** One progress update for the live stderr display (human mode only). */
export interface ProgressEvent {
  /** Participant label, e.g. `p1` or the actor type. */
  participant: string;
  /** `preflight` | `allocate` | `provision` | `participate` | `check` | `teardown` | `write` | `verify` | `done`. */
  phase: string;
  /** Current step or command (already redacted), if any. */
  detail?: string;
  /** Tasks passed so far / total, once checks ran. */
  tasksPassed?: number;
  tasksTotal?: number;
  /** On a seat's `done` event: its participant's status and completion reason (for the summary line). */
  status?: string;
  completionReason?: string;
}

/** Everything a route needs to run one study. */
export interface StudyContext<LabConfig = unknown> {
  /** Project directory (`--cwd`), absolute. */
  cwd: string;
  /** The validated lab (`src/lab` LabConfig). */
  lab: LabConfig;
  /** Where the lab came from: a file path or `embedded:<id>`, and the SHA-256 of its text. */
  labSource: { ref: string; sha256: string };
  /** Lab warnings to carry into the bundle and result. */
  labWarnings: { code: string; message: string; path?: string }[];
  /** The run id (validated, not yet used). */
  runId: string;
  /** `dry-run` unless the lab or `--live` said live (invariant 3). */
  mode: "dry-run" | "live";
  /** Environment for this invocation: process env merged with `--env-file`. Secret VALUES live only here. */
  env: Record<string, string | undefined>;
  /**
   * Secret values the CLI already knows (e.g. every `--env-file` value). Routes scrub the union
   * of these and `secretValuesFromEnv(env)` — use `studySecrets(ctx)` from src/secrets.
   */
  secrets?: string[];
  /** SIGINT/SIGTERM: routes stop the participant, then still tear down and write the bundle. */
  signal: AbortSignal;
  /** Live progress sink (no-op in `--json` mode). */
  progress: (e: ProgressEvent) => void;
  /**
   * The lab's product adapter, loaded (fail-closed) before the study started; `finishStudy`
   * runs its hooks once every seat's evidence is in and before the bundle is sealed.
   */
  scorer?: LoadedScorer;
  /** Deadline of each scorer hook, ms (default: the seam's 30 s). */
  scorerDeadlineMs?: number;
  /**
   * A continued run (`lab run --rerun-failed-from`): only these seats of the lab run, in lab
   * order, keeping their ids (src/study/rerun.ts `pickSeats`). Absent: every seat.
   */
  seatIds?: readonly string[];
  /** The run this one continues, recorded in run.json as `continues`. */
  continues?: Continues;
}

/** A task's outcome in the funnel. */
export interface TaskOutcome {
  id: string;
  goal: string;
  /** The seat the result belongs to. */
  participantId?: string;
  passed: boolean;
  /** `passed` | `failed` | `not_run` (e.g. the participant crashed before checks). */
  status: "passed" | "failed" | "not_run";
  detail?: string;
}

/** What a route returns to the CLI; the CLI prints it as `humanish.<route>-lab-result.v1`. */
export interface StudyResult {
  ok: boolean;
  runId: string;
  runDir: string;
  route: "terminal" | "browser";
  mode: "dry-run" | "live";
  /** Stakeholder line, e.g. `1/1 reached the goal; tasks: a 1/1 · b 0/1`. */
  verdict: string;
  /**
   * Each seat's status after its hidden checks, and what its participant claimed (`passed`,
   * `blocked`, `failed`, `none`; absent on dry runs); `contradicted` when it claimed success and
   * the checks say it did not reach the goal — a finding of its own.
   */
  participants: { id: string; status: string; completionReason: string; claimed?: string; contradicted?: boolean }[];
  tasks: TaskOutcome[];
  /** passed / total, or null when there are no tasks. */
  reward: number | null;
  /** `humanish.verify-result.v1` of the written bundle. */
  verify: { ok: boolean; shareSafety: string };
  /**
   * The route's full verify result of the sealed bundle, handed to the report step so it is not
   * verified twice; `runStudy` (src/routes/index.ts) removes it before the result is printed.
   */
  verification?: VerifyResult;
  warnings: { code: string; message: string }[];
  /**
   * The lab's product adapter, when it declares one: which module, whether its hooks ran, its
   * score (null when none was produced), and how many feedback candidates and files it added.
   */
  adapter?: {
    ref: string;
    hooks: "ran" | "loaded-only";
    score: { namespace: string; status: "pass" | "partial" | "fail"; score: number; summary: string } | null;
    feedbackCandidates: number;
    artifacts: string[];
  };
  /**
   * The post-run analyst (`review.analysis`): its outcome, the stored attempt id, or why it was
   * skipped. Set by `runStudy` once the bundle is sealed; never makes the study fail.
   */
  analysis?: PostAnalysisOutcome;
  /** Set when the study failed as a harness (never for a participant giving up). */
  error?: { code: string; message: string; next?: string };
  /** Which signal interrupted the run, if any (`SIGINT` → exit 130, `SIGTERM` → 143). */
  interrupted?: "SIGINT" | "SIGTERM";
  /** One entry per seat, in seat order: how the study runner ended it. */
  seats?: {
    id: string;
    state: "completed" | "failed" | "interrupted" | "budget_reached";
    phase: string;
    release: "released" | "retained" | "unconfirmed" | "none";
    durationMs: number;
    /** Spend, USD; null (unmeasured) when any of the seat's cost lines is unmeasured. */
    usd: number | null;
    error?: { code: string; message: string; next?: string };
  }[];
  /** The study aggregate: declared seats, concurrency, waves and totals. */
  study?: {
    declaredSeats: number;
    concurrency: number;
    waves: number;
    totals: {
      seats: number;
      completed: number;
      failed: number;
      interrupted: number;
      budgetReached: number;
      knownUsd: number;
      knownJobs: number;
      heldSlots: number;
    };
  };
}
