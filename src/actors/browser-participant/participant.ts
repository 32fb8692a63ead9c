/**
 * The seam between a browser lane (a local Docker guest, an E2B desktop) and a browser
 * participant (scripted-browser, openai-computer-use, local-agent, vision-agent).
 *
 * The lane owns the machine: it allocates the desktop, hands the participant the desktop's
 * browser-control executor, and releases the machine by exact id. The participant owns what it
 * does on that desktop and how it is recorded: its preflight (keys, priced models, an account
 * probe — before any run directory exists), its progress and dry-run wording, the run itself
 * (under the seat's time budget and the lab's spend caps, which it enforces before every model
 * request), its trace, its request ledger and its cost lines. A participant never writes files
 * and never prints: the lane writes what {@link BrowserRun} returns, through the run's writer.
 *
 * One participant object is bound to one lab for one study; `run` is called once per seat and may
 * run concurrently for several seats (a study-wide budget is shared by them).
 */

import type { ActorDescriptor } from "../../actor-registry/types.ts";
import type { BrowserControlExecutor } from "../../browser-control/index.ts";
import type { ActorTrace, CleanupProof, CostLine } from "../../bundle/schemas.ts";
import type { ModelLedger } from "../../models/index.ts";
import type { DeclaredOutcome, StopWhen } from "../computer-use/outcome.ts";
import type { BrowserCheck, KeptScreenshot, ObservationRecord } from "../scripted-browser/index.ts";

/** A hidden task the lane checks over the participant's observations (never shown to it). */
export interface BrowserParticipantTask {
  id: string;
  goal: string;
  check: BrowserCheck;
}

/** The seat fields a participant reads (its persona and instruction change its brief). */
export interface BrowserSeatFields {
  id: string;
  persona?: string | undefined;
  instruction?: string | undefined;
}

/** What `preflight` gets: the host env (keys are read by NAME; values stay in this process). */
export interface BrowserPreflightContext {
  env: Record<string, string | undefined>;
  signal: AbortSignal;
}

/** What `run` gets from the lane for one seat. */
export interface BrowserRunContext {
  seat: BrowserSeatFields;
  /** The desktop's browser-control executor (the lane releases the desktop afterwards). */
  executor: BrowserControlExecutor;
  /** App origin, e.g. `http://127.0.0.1:41731`: only its observations count for the checks. */
  origin: string;
  /** The desktop's screen, px. */
  screen: { width: number; height: number };
  /** The study's stop (SIGINT/SIGTERM, a lost lease). */
  signal: AbortSignal;
  /** The seat's wall-clock budget, ms. */
  sessionMs: number;
  /** The run's redactor: literal scrub of provisioned secrets, then secret and path shapes. */
  redact: (text: string) => string;
  /** The live progress line (no model text, no typed text). */
  progress: (detail: string) => void;
  /** A lifecycle event of the seat (the lane redacts and records it). */
  log: (event: string, message: string) => void;
  /**
   * Records the release of a resource of the participant's own (an account app-server) with its
   * proof, the moment it is known (so it is kept even when the run then fails).
   */
  recordCleanup: (proof: CleanupProof) => void;
  /** Each frame the moment it is kept (the lane may write it while the seat runs); never awaited. */
  onScreenshot?: (shot: KeptScreenshot) => void;
}

/** What the lane reads of every participant's outcome: the shared core and its claim. */
export interface BrowserParticipantOutcome {
  status: ActorTrace["status"];
  completionReason: ActorTrace["completionReason"];
  /** One sentence. */
  reason: string;
  /** ISO times and the duration, ms. */
  startedAt: string;
  completedAt: string;
  durationMs: number;
  observations: readonly ObservationRecord[];
  screenshots: readonly KeptScreenshot[];
  /** A model participant's own declared outcome (a claim, never success). */
  declaredOutcome?: DeclaredOutcome;
  /** A harness fault of the participant (not a finding), which fails the seat. */
  harnessError?: { code: string; message: string };
}

/** What the trace needs from the lane. */
export interface BrowserTraceMeta {
  participantId: string;
  /** The desktop's session id (the guest's generation, the E2B sandbox id), or `none`. */
  sessionId: string;
  /** Bundle path of each written screenshot, by its name; missing = not written. */
  shotPaths: ReadonlyMap<string, string>;
  /** The seat's verdict (the hidden checks folded in): the trace carries it as the record does. */
  verdict: { status: ActorTrace["status"]; completionReason: ActorTrace["completionReason"] };
  redact: (text: string) => string;
}

/** One seat's run, as the lane records it. */
export interface BrowserRun {
  outcome: BrowserParticipantOutcome;
  /** The `humanish.actor-trace.v1` of the seat. */
  trace(meta: BrowserTraceMeta): ActorTrace;
  /**
   * The seat's request ledger (model participants that meter their own requests) and its model
   * cost lines; `usd` is the known spend (0 when nothing was metered). `today` is YYYY-MM-DD.
   */
  evidence(o: { participantId: string; today: string }): { ledger?: ModelLedger; costLines: CostLine[]; usd: number };
}

/** A browser participant bound to one lab. */
export interface BrowserParticipant {
  readonly descriptor: ActorDescriptor;
  /** The hidden tasks of the lab (empty: none declared). */
  readonly tasks: readonly BrowserParticipantTask[];
  /** The lab's `stopWhen` (a goal rule observed on the page, when it has no tasks). */
  readonly stopWhen?: StopWhen;
  /**
   * Live preflight, before any run directory exists: keys by name, priced models under a USD
   * cap, an account probe. Resolves once; later `run`s use what it resolved.
   * @throws HumanishError with the participant's code, naming the field or variable.
   */
  preflight(ctx: BrowserPreflightContext): Promise<void>;
  /** The progress line of a seat starting (`3 step(s)`, `computer-use model gpt-5.1`). */
  describeProgress(): string;
  /** What the dry run says the participant would be (no model text, no secret). */
  describeDryRun(): string;
  /** Runs one seat to its end. Never throws for participant outcomes; throws HumanishError for harness faults before it starts. */
  run(ctx: BrowserRunContext): Promise<BrowserRun>;
}

/** The `scenario.caps` a participant enforces (USD and tokens; null = unset). */
export interface BrowserCaps {
  maxUsd: number | null;
  maxTotalUsd: number | null;
  maxTokens: number | null;
  maxTotalTokens: number | null;
}
