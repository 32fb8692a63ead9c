/**
 * The report model: everything the HTML study report shows, already read from a run directory
 * and reduced to plain values. `renderReportHtml(model)` is a pure function
 * of this model; `loadReportModel(runDir)` (load.ts) builds it from the bundle's files.
 *
 * Null discipline follows the bundle (a null cost is unmeasured, never zero): a cost of `null` means
 * "exists but unmeasured" and is shown as the word `unmeasured`, never as 0.
 */

import type { ReportCombined } from "./combined.ts";
import type { ReportFindings } from "./findings.ts";

/** One participant row: who took part and how their session ended. */
export interface ReportParticipant {
  /** Stream/simulation id or lane id, e.g. `stream-001`, `p1`. */
  id: string;
  /** Actor type, e.g. `scripted-terminal`, `codex-exec`, `scripted-browser`. */
  actorType?: string;
  /** Model id when an LLM actor declared or reported one. */
  model?: string;
  /** Actor status (`passed`, `abandoned`, `incomplete`, `blocked`, `timed_out`, `failed`, `contract_proof_only`, …). */
  status: string;
  /** Completion reason (`goal_satisfied`, `gave_up`, `timed_out`, `harness_error`, …) or `—` when none. */
  completionReason: string;
  /** Redacted free text the route recorded about the outcome. */
  reason?: string;
  /** Wall time of the session in ms, when known. */
  durationMs?: number;
  /** Persona the seat played (the lane's persona, else its trace's persona id), when known. */
  persona?: string;
  /** Device of a browser seat, e.g. `desktop 1440×950`, when known. */
  device?: string;
  /**
   * What the seat's ending says: `goal` (reached it), `finding` (about the product) or `harness`
   * (humanish or the runtime failed: never a finding).
   */
  category?: "goal" | "finding" | "harness";
  /**
   * What the participant said about its own result (`passed`, `blocked`, `failed`, `none`): a
   * claim, never counted; absent in bundles written before claims were recorded.
   */
  claimed?: string;
  /** The participant claimed success and the hidden checks say it did not reach the goal (a finding of its own). */
  contradicted?: boolean;
  /** Hidden checks this seat passed / checks assigned to it (absent when none were assigned). */
  tasksPassed?: number;
  tasksTotal?: number;
  /**
   * The seat's cost in USD: the sum of its measured cost lines, `usd: null` when none was
   * measured, `fullyMeasured: false` when some line is unmeasured. Absent = no line names the
   * seat (shown as unmeasured, never as 0).
   */
  cost?: { usd: number | null; fullyMeasured: boolean };
  /** Screenshots attributed to this seat. */
  screenshotCount?: number;
  /**
   * How the study runner says the seat ended (`completed`, `failed`, `interrupted`,
   * `budget_reached`), the phase it ended in, and its harness error (`CODE: message`), when the
   * bundle has a study section.
   */
  seatState?: string;
  seatPhase?: string;
  seatError?: string;
}

/** The study runner's plan and totals (bundle `study` section), when the bundle has one. */
export interface ReportStudy {
  /** Lane every seat ran on, e.g. `docker-terminal`, `local-guest`. */
  lane: string;
  declaredSeats: number;
  concurrency: number;
  waves: number;
  /** The study's spend cap in USD, or null when not declared. */
  maxTotalUsd: number | null;
  /** Known spend of all seats in USD (a lower bound when some line is unmeasured). */
  knownUsd: number;
  /** Seats whose release was not confirmed (their capacity slot stayed held). */
  heldSlots: number;
}

/** One task of the funnel: how many participants completed it. */
export interface ReportTask {
  id: string;
  goal: string;
  /** Participants whose hidden check passed. */
  passed: number;
  /** Participants the task was assigned to. */
  total: number;
  /** `passed` | `failed` | `not_run` for a single participant, or a roll-up label. */
  status: string;
  /** Redacted detail (e.g. the check's exit code), if any. */
  detail?: string;
}

/** One row of the timeline of actions, commands and lifecycle events, in order. */
export interface ReportTimelineEntry {
  /** ISO timestamp, when recorded. */
  at?: string;
  /** `command` | `ui_action` | `message` | `screenshot` | `lifecycle` | `check` | … */
  kind: string;
  /** One-line title (command text, action description, event name). */
  title: string;
  /** Redacted detail, e.g. an output tail or a message. */
  detail?: string;
  /** Exit code of a command, if any. */
  exitCode?: number | null;
  /** Whether this row reports a problem (level warn/error, non-zero exit). */
  problem?: boolean;
}

/**
 * A screenshot: inlined as bytes so the report stays self-contained, or — past the report's
 * inline budget — linked as the bundle's file (then `png` is absent and nothing of it was read).
 */
export interface ReportScreenshot {
  /** Bundle-relative path, e.g. `screenshots/turn-01.png`. */
  path: string;
  /** Caption (the step or turn that took it). */
  caption: string;
  /** PNG bytes, already admitted; rendered as a `data:image/png;base64,…` URI. Absent: linked, not inlined. */
  png?: Uint8Array;
  /** Pixel size, when known. */
  width?: number;
  height?: number;
  /** The seat that took it (from its trace, or its path), when known. */
  participantId?: string;
}

/** One cost line; `usd: null` renders as `unmeasured`. */
export interface ReportCostLine {
  /** `provider`, `product`, `media`, `payment`, `model-tokens`, … */
  label: string;
  /** Amount in USD, or null when it exists but was not measured. */
  usd: number | null;
  /** Date of the rates used (`YYYY-MM-DD`), or null/absent for measured-by-provider or unmeasured lines. */
  ratesAsOf?: string | null;
  /** Where the number comes from (e.g. `provider-token-usage`, `no-spend-signal`, `unmeasured`). */
  source?: string;
  /** Redacted note. */
  note?: string;
}

/** One released (or not) resource. */
export interface ReportCleanup {
  /** What it was, e.g. `docker container`, `e2b sandbox`. */
  resource: string;
  /** Exact id (container id, sandbox id), when one existed. */
  id?: string;
  /** `released` | `retained` | `unconfirmed` | `no resource`. */
  outcome: string;
  reason?: string;
}

/** A warning carried by the run (lab warnings, verify warnings, route warnings). */
export interface ReportWarning {
  code?: string;
  message: string;
}

/** The verify result summary (`humanish.verify-result.v1`). */
export interface ReportVerify {
  ok: boolean;
  /** `share_ready` | `local_only` | `blocked`. */
  shareSafety: string;
  shareReasons: { code: string; message: string }[];
  checks: { name: string; ok: boolean; message: string }[];
}

/** Everything the report shows. All strings are untrusted and are escaped by the renderer. */
export interface ReportModel {
  runId: string;
  /** Lab id and title, when the bundle records them. */
  labId?: string;
  labTitle?: string;
  /** `terminal` | `browser` (or another route label); decides transcript vs screenshots. */
  route: string;
  /** `dry-run` | `live`. */
  mode: string;
  createdAt?: string;
  completedAt?: string;
  durationMs?: number;
  /** Review verdict word (`pass`, `fail`, `blocked`, `timed_out`, `contract_proof_only`). */
  verdict: string;
  /** Stakeholder line with its denominator, e.g. `1/1 reached the goal; tasks: a 1/1 · b 0/1`. */
  verdictLine: string;
  /** Participants that reached the goal / participants in the study. */
  reached: number;
  total: number;
  /** `1 participant believed it succeeded; the checks say it did not: p1`, when any claim was contradicted. */
  contradictions?: string;
  /**
   * Set for a bundle written under the older claim-counting rule (no `study.goalRule`): its
   * headline may count a participant's own word; `verify`'s `headline from checks` says what the
   * checks give.
   */
  olderGoalRule?: boolean;
  /** Participants whose session ended in a harness failure (named beside the denominator; never a finding). */
  harnessFailed?: number;
  /** The study runner's plan and totals, when the bundle records them. */
  study?: ReportStudy;
  /** Review summary sentence and gaps (what the run could not show). */
  summary?: string;
  gaps: string[];
  participants: ReportParticipant[];
  tasks: ReportTask[];
  timeline: ReportTimelineEntry[];
  /** Terminal route: the normalised transcript (redacted at source); null when none was written. */
  transcript: string | null;
  /** Browser route: screenshots grouped by seat (seats in participant order), each seat's in capture order. */
  screenshots: ReportScreenshot[];
  cost: ReportCostLine[];
  /** Known total in USD (sum of measured lines) and whether every line was measured. */
  costTotal: { usd: number | null; fullyMeasured: boolean };
  cleanup: ReportCleanup[];
  warnings: ReportWarning[];
  /** Verify result of the bundle, or null when verify could not run. */
  verify: ReportVerify | null;
  /** When the report was rendered (ISO). */
  generatedAt: string;
  /** The latest `humanish analyze` attempt, when the bundle lists one (./findings.ts). */
  findings?: ReportFindings | null;
  /** A continued run's combined result over the runs it continues (./combined.ts). */
  combined?: ReportCombined;
  /** Bundle path of the transcript the report shows (`#transcript`), when it shows one. */
  transcriptPath?: string | null;
}
