/**
 * The seam between the terminal route and a terminal participant (scripted-terminal, codex-exec).
 *
 * The route owns the sandbox and the evidence; a participant gets a sandbox handle, its brief,
 * its deadlines and (codex-exec only) its runtime key, and reports every command, output chunk
 * and lifecycle step through a {@link TerminalRecorder}. A participant never writes files on the
 * host and never prints: the recorder redacts and persists.
 */

import type {
  ActorDescriptor,
  ActorItem,
  ActorRuntime,
  ActorStatus,
  CompletionReason,
  DeadlineKind,
  EstimatedCost,
  TokenUsage,
} from "../../actor-registry/types.ts";
import type { Sandbox } from "../../sandbox/types.ts";

/** One command the harness ran in the sandbox (for the command log: digests and NAMES only). */
export interface RecordedCommand {
  /** What the command was for, e.g. `participant-step-1`, `codex-install`, `codex-exec`. */
  label: string;
  /** The exact argv run; the recorder stores only its SHA-256 digest, never the text. */
  argv: string[];
  /** Env var NAMES passed to this one command (values never leave the participant). */
  envNames: string[];
  /** `root` or the participant user. */
  user: string;
  exitCode: number | null;
  timedOut: boolean;
  /** Which deadline stopped it, if any. */
  deadline: DeadlineKind | null;
  durationMs: number;
}

/** Where a participant reports what happened. Implemented by the route. */
export interface TerminalRecorder {
  /** A lifecycle step, e.g. (`terminal-lab.runtime.version`, `codex-cli 0.171.0 verified`). */
  lifecycle(event: string, message: string): void;
  /** One finished command. */
  command(entry: RecordedCommand): void;
  /** Raw participant output as it arrives (redacted by the recorder before it is stored). */
  output(stream: "stdout" | "stderr", chunk: Uint8Array): void;
  /** The current step for the live progress line (redacted by the recorder). */
  progress(detail: string): void;
}

/** Deadlines of the participant phase. */
export interface ParticipantDeadlines {
  /** Kill a participant command that has printed nothing after this many ms. */
  firstOutputMs: number;
  /** Epoch ms at which the participant is killed (`scenario.caps.maxMinutes` after it started). */
  deadlineAt: number;
}

/** The runtime key of a keyed participant: the NAME it came from and its value. */
export interface RuntimeKey {
  /** `CODEX_API_KEY` or `OPENAI_API_KEY`. */
  sourceName: string;
  value: string;
}

/** How a model-driven participant reaches its model from inside the sandbox. */
export interface ModelGatewayAccess {
  /** Base URL inside the sandbox, e.g. `http://127.0.0.1:41400/v1`. */
  baseURL: string;
  /** The per-seat gateway token (the agent's only credential in `openai-egress` mode). */
  token: string;
  /** `openai-egress`: the real key stays on the host; `openai-env`: the agent also holds it. */
  auth: "openai-env" | "openai-egress";
}

/** What `prepare` gets: the sandbox to provision into (unkeyed, before the participant runs). */
export interface PrepareContext {
  sandbox: Sandbox;
  /** The user the participant runs as (non-root). */
  user: string;
  /** Working directory of the study inside the sandbox. */
  workdir: string;
  recorder: TerminalRecorder;
  signal: AbortSignal;
  /**
   * Non-secret env for commands that reach the network (e.g. `NODE_EXTRA_CA_CERTS` behind an
   * intercepting proxy); empty when none is needed.
   */
  networkEnv: Record<string, string>;
}

/** What `run` gets. */
export interface RunContext extends PrepareContext {
  /** The participant's brief (persona, product, mission, task goals — never task checks). */
  brief: string;
  /** The verdict nonce the brief asks a model participant to echo back. */
  nonce: string;
  deadlines: ParticipantDeadlines;
  /** Present only for participants whose descriptor has `runtimeKeyNames`, in `openai-env` mode. */
  runtimeKey?: RuntimeKey;
  /** The seat's model gateway, as the sandbox reaches it (model-driven participants only). */
  modelGateway?: ModelGatewayAccess;
  /**
   * No gateway: the model is reached directly from the sandbox (hosted lanes), the key held as
   * `auth` says — `openai-env` in the command's env, `openai-egress` in the sandbox's egress rule;
   * `baseURL` is the endpoint (`openai-env` only; default the public API).
   */
  modelDirect?: { auth: "openai-env" | "openai-egress"; baseURL?: string };
  /** The route's redactor: literal scrub of provisioned secrets, then secret/path shapes. */
  redact: (text: string) => string;
}

/** How the participant ended, plus its trace content. Text is already redacted via `ctx.redact`. */
export interface TerminalParticipantOutcome {
  status: ActorStatus;
  completionReason: CompletionReason;
  /** One redacted sentence. */
  reason: string;
  /** The deadline that stopped it, or null. */
  deadline: DeadlineKind | null;
  items: ActorItem[];
  counts: { commands: number; actions: number; messages: number; terminalEvents: number };
  ids?: { threadId?: string };
  /**
   * What the participant said about its own result (a model participant's verdict marker); a
   * claim, never success — the route's hidden checks decide. Absent: it said nothing (`none`).
   */
  claimed?: "passed" | "blocked" | "failed" | "none";
  tokenUsage?: TokenUsage;
  estimatedCost?: EstimatedCost;
  startedAt: string;
  completedAt: string;
  durationMs: number;
}

/** A terminal participant bound to one lab. */
export interface TerminalParticipant {
  readonly descriptor: ActorDescriptor;
  /** The runtime provenance as declared (dry-run) or as observed after `prepare` (live); undefined for unversioned actors. */
  runtime(): ActorRuntime | undefined;
  /**
   * Participant-owned provisioning (e.g. install the Codex CLI and probe its version), unkeyed.
   * @throws HumanishError with a `HUMANISH_TERMINAL_LAB_RUNTIME_*` code when it fails.
   */
  prepare(ctx: PrepareContext): Promise<void>;
  /** Runs the participant to its end. Never throws for participant outcomes; throws HumanishError for harness faults. */
  run(ctx: RunContext): Promise<TerminalParticipantOutcome>;
}
