/**
 * One seat of a verified bundle → an ATIF v1.4 trajectory. Pure: the caller reads and verifies
 * the bundle, and scrubs and validates what this returns.
 *
 * The humanish actor trace is a flat list of items; ATIF wants turns. Grouping:
 * - the first step is the user's instruction (the study's task goals: the brief itself is kept
 *   in the bundle by digest only), the last a system step with how the participant ended and
 *   what the hidden checks found — humanish's observation, never the participant's claim;
 * - a computer-use seat (`cua-loop`) records one `usage` item per model response, so each
 *   usage item opens an agent step; its reasoning, message, actions (tool calls named
 *   `computer`) and the screenshot after them (an observation naming the bundle path) join it;
 * - other seats (scripted steps, Codex) record no turn boundary: a step is the reasoning and
 *   message before one tool call, that call and its output;
 * - notices become system steps; a safety check joins the step it interrupted.
 * Per-step metrics exist only where the trace has per-response usage (computer use); a step's
 * `cost_usd` is set only when the seat's request ledger priced that very response.
 */
import type { ActorTrace, CostLine, RunBundle, RunParticipant, TaskResult, TraceItem } from "../../bundle/schemas.ts";
import {
  ATIF_VERSION,
  type AtifFinalMetrics,
  type AtifMetrics,
  type AtifObservationResult,
  type AtifStep,
  type AtifToolCall,
  type AtifTrajectory,
} from "./schema.ts";

/** One request of a seat's model ledger (the fields the export reads). */
export interface LedgerRequest {
  model: string | null;
  input: number | null;
  output: number | null;
  usd: number | null;
}

/** Everything the export of one seat reads, already verified. */
export interface SeatEvidence {
  bundle: Pick<RunBundle, "runId" | "route" | "target" | "lab" | "cost">;
  participant: RunParticipant;
  /** The bundle path of the seat's trace. */
  tracePath: string;
  trace: ActorTrace;
  /** This seat's hidden-check results. */
  tasks: readonly TaskResult[];
  /** The seat's model ledger requests in order, when the bundle has one. */
  ledger?: { observedModels: readonly string[]; requests: readonly LedgerRequest[] };
  /** Version of humanish doing the export. */
  humanishVersion: string;
  /**
   * Where a screenshot at a bundle path is, relative to the trajectory file (the exporter copies
   * it there). Absent: references stay bundle paths, relative to the run directory.
   */
  imageRef?: (bundlePath: string) => string;
}

interface Draft {
  timestamp?: string;
  messages: string[];
  reasoning: string[];
  calls: AtifToolCall[];
  results: AtifObservationResult[];
  metrics?: AtifMetrics;
  modelName?: string;
  items: string[];
  screenshots: string[];
  safetyChecks: { status?: string; title: string; text?: string }[];
}

function newDraft(at?: string): Draft {
  return { ...(at ? { timestamp: at } : {}), messages: [], reasoning: [], calls: [], results: [], items: [], screenshots: [], safetyChecks: [] };
}

function isEmpty(d: Draft): boolean {
  return d.messages.length + d.reasoning.length + d.calls.length + d.results.length === 0 && d.metrics === undefined && d.safetyChecks.length === 0;
}

/** The ATIF `agent` block: who acted, at which version, on which observed model. */
export function agentOf(t: ActorTrace, ledger: SeatEvidence["ledger"], humanishVersion: string): AtifTrajectory["agent"] {
  const observedModel = ledger?.observedModels[0] ?? t.ids.model;
  const extra: Record<string, unknown> = {
    actor_type: t.actorType,
    provider: t.provider,
    protocol: t.protocol,
    lane: t.lane,
    humanish_version: humanishVersion,
    persona: t.persona.id,
    ...(t.runtime?.requestedModel ? { requested_model: t.runtime.requestedModel } : {}),
    ...(t.runtime ? { model_status: t.runtime.modelStatus, version_status: t.runtime.versionStatus } : {}),
    ...(t.modelSettings ? { reasoning_effort: t.modelSettings.reasoningEffort } : {}),
  };
  const model = observedModel ? { model_name: observedModel } : {};
  if (t.actorType === "codex-exec") {
    const version = t.runtime?.observedVersion ?? t.providerVersion ?? `unobserved (requested ${t.runtime?.requestedVersion ?? "unknown"})`;
    return { name: "codex", version, ...model, extra };
  }
  if (t.protocol === "scripted-steps" || t.protocol === "cua-loop" || t.provider === "humanish") {
    return { name: `humanish-${t.actorType}`, version: humanishVersion, ...model, extra };
  }
  return { name: t.actorType, version: t.providerVersion ?? humanishVersion, ...model, extra };
}

/** The observation text of a command item: exit code (or why there is none), then the output tail. */
function commandContent(it: TraceItem): string {
  const c = it.command ?? {};
  const head =
    c.exitCode !== undefined && c.exitCode !== null
      ? `exit ${c.exitCode}${c.timedOut ? " (timed out)" : ""}`
      : `no exit code recorded (${it.status ?? it.lifecycle}${c.timedOut ? ", timed out" : ""})`;
  return c.outputTail ? `${head}\n${c.outputTail}` : head;
}

/** The tool call and its result for an action item, or undefined when the item is no action. */
function actionOf(it: TraceItem, actorType: string): { call: AtifToolCall; content: string } | undefined {
  switch (it.kind) {
    case "command":
      return {
        call: {
          tool_call_id: it.id,
          function_name: actorType === "scripted-terminal" ? "bash" : "shell",
          arguments: { command: it.command?.text ?? it.title, ...(it.command?.cwd ? { cwd: it.command.cwd } : {}) },
        },
        content: commandContent(it),
      };
    case "file_change":
      return { call: { tool_call_id: it.id, function_name: "apply_patch", arguments: { summary: it.title } }, content: it.status ?? it.lifecycle };
    case "tool_call":
      return { call: { tool_call_id: it.id, function_name: it.tool || "tool", arguments: { summary: it.title } }, content: it.status ?? it.lifecycle };
    case "plan":
      return { call: { tool_call_id: it.id, function_name: "update_plan", arguments: { plan: it.text ?? it.title } }, content: it.status ?? "recorded" };
    case "ui_action":
      return {
        call: { tool_call_id: it.id, function_name: "computer", arguments: it.action ? { ...it.action } : { type: "unreadable", summary: it.title } },
        content: `${it.status ?? it.lifecycle}: ${it.title}`,
      };
    default:
      return undefined;
  }
}

/** Walks the trace items into steps (see the module comment for the grouping). */
class StepBuilder {
  readonly steps: AtifStep[] = [];
  private cur: Draft | null = null;
  private ledgerAt = 0;

  constructor(
    private readonly ev: SeatEvidence,
    private readonly perResponse: boolean,
  ) {}

  private push(step: Omit<AtifStep, "step_id">): void {
    this.steps.push({ step_id: this.steps.length + 1, ...step });
  }

  system(message: string, at: string | undefined, extra: Record<string, unknown>, results?: AtifObservationResult[]): void {
    this.flush();
    this.push({ ...(at ? { timestamp: at } : {}), source: "system", message, ...(results ? { observation: { results } } : {}), extra });
  }

  user(message: string, at: string, extra: Record<string, unknown>): void {
    this.push({ timestamp: at, source: "user", message, extra });
  }

  flush(): void {
    const d = this.cur;
    this.cur = null;
    if (!d || isEmpty(d)) return;
    const extra: Record<string, unknown> = { trace_items: d.items };
    if (d.screenshots.length) extra.screenshots = d.screenshots;
    if (d.safetyChecks.length) extra.safety_checks = d.safetyChecks;
    this.push({
      ...(d.timestamp ? { timestamp: d.timestamp } : {}),
      source: "agent",
      ...(d.modelName ? { model_name: d.modelName } : {}),
      message: d.messages.join("\n\n"),
      ...(d.reasoning.length ? { reasoning_content: d.reasoning.join("\n\n") } : {}),
      ...(d.calls.length ? { tool_calls: d.calls } : {}),
      ...(d.results.length ? { observation: { results: d.results } } : {}),
      ...(d.metrics ? { metrics: d.metrics } : {}),
      extra,
    });
  }

  private draft(at?: string): Draft {
    if (!this.cur) this.cur = newDraft(at);
    if (!this.cur.timestamp && at) this.cur.timestamp = at;
    return this.cur;
  }

  /** The next ledger request with exactly these token counts (the response this usage item came from). */
  private matchRequest(input: number | undefined, output: number | undefined): LedgerRequest | undefined {
    const reqs = this.ev.ledger?.requests ?? [];
    for (let i = this.ledgerAt; i < reqs.length; i++) {
      const r = reqs[i]!;
      if (r.input !== null && r.input === input && r.output === output) {
        this.ledgerAt = i + 1;
        return r;
      }
    }
    return undefined;
  }

  private usage(it: TraceItem): void {
    // Without per-response usage (Codex reports per turn, after the fact) the totals go to final_metrics only.
    if (!this.perResponse || !it.usage) return;
    this.flush();
    const d = this.draft(it.at);
    const u = it.usage;
    const req = this.matchRequest(u.input, u.output);
    d.metrics = {
      ...(u.input !== undefined ? { prompt_tokens: u.input } : {}),
      ...(u.output !== undefined ? { completion_tokens: u.output } : {}),
      ...(u.cachedInput !== undefined ? { cached_tokens: u.cachedInput } : {}),
      ...(req && req.usd !== null ? { cost_usd: req.usd } : {}),
      ...(u.reasoningOutput !== undefined ? { extra: { reasoning_tokens: u.reasoningOutput } } : {}),
    };
    if (req?.model) d.modelName = req.model;
    d.items.push(it.id);
  }

  private text(it: TraceItem, into: "messages" | "reasoning"): void {
    const c = this.cur;
    if (c && (c.calls.length > 0 || (!this.perResponse && c.messages.length > 0))) this.flush();
    const d = this.draft(it.at);
    d[into].push(it.text ?? "");
    d.items.push(it.id);
  }

  private screenshot(it: TraceItem): void {
    const kept = it.screenshotRef?.path;
    const path = kept && this.ev.imageRef ? this.ev.imageRef(kept) : kept;
    const content = path ? `screenshot: ${path}` : `screenshot ${it.title} (not kept in the bundle)`;
    const c = this.cur;
    if (c && c.calls.length > 0) {
      const last = c.results.at(-1);
      if (last) last.content = `${last.content ?? ""}\n${content}`;
      if (path) c.screenshots.push(path);
      c.items.push(it.id);
      return;
    }
    this.system(`screenshot ${it.title}`, it.at, { trace_items: [it.id], ...(path ? { screenshots: [path] } : {}) }, [{ content }]);
  }

  item(it: TraceItem): void {
    switch (it.kind) {
      case "usage":
        this.usage(it);
        return;
      case "reasoning":
        this.text(it, "reasoning");
        return;
      case "message":
        this.text(it, "messages");
        return;
      case "screenshot":
        this.screenshot(it);
        return;
      case "approval":
        if (this.cur) {
          this.cur.safetyChecks.push({ ...(it.status ? { status: it.status } : {}), title: it.title, ...(it.text ? { text: it.text } : {}) });
          this.cur.items.push(it.id);
          return;
        }
        this.system(`${it.title}${it.status ? ` (${it.status})` : ""}${it.text ? `: ${it.text}` : ""}`, it.at, { trace_items: [it.id] });
        return;
      case "notice":
        this.system(`${it.title}${it.text ? `: ${it.text}` : ""}`, it.at, { trace_items: [it.id], ...(it.status ? { status: it.status } : {}) });
        return;
      default: {
        const a = actionOf(it, this.ev.trace.actorType);
        if (!a) return;
        if (!this.perResponse && this.cur && this.cur.calls.length > 0) this.flush();
        const d = this.draft(it.at);
        d.calls.push(a.call);
        d.results.push({ source_call_id: a.call.tool_call_id, content: a.content });
        d.items.push(it.id);
      }
    }
  }
}

const LINES_BASIS = "the bundle's cost lines for this participant (rate-table estimate or known zero)";

/** A persona digest of all zeros: the lane's mark for a participant that was given no prompt (a scripted one). */
const NO_PROMPT_DIGEST = /^0+$/;

/**
 * Known model spend of the seat (USD) and its basis, or the reason it is unknown. A scripted
 * participant with no model line calls no model: a known zero, not an unknown.
 */
export function seatCost(ev: Pick<SeatEvidence, "bundle" | "participant" | "trace">): { usd: number; basis: string } | { unknown: string } {
  const lines: CostLine[] = ev.bundle.cost.lines.filter((l) => l.participantId === ev.participant.id && (l.kind === "model-tokens" || l.kind === "provider"));
  if (lines.length > 0) {
    const unknown = lines.find((l) => l.usd === null);
    if (unknown) return { unknown: unknown.reason ?? "unmeasured" };
    return { usd: Math.round(lines.reduce((a, l) => a + (l.usd ?? 0), 0) * 1e6) / 1e6, basis: LINES_BASIS };
  }
  const e = ev.trace.estimatedCost;
  if (e && e.estimatedCostUsd !== null) return { usd: e.estimatedCostUsd, basis: "the participant's own cost estimate in its trace" };
  if (!e && ev.participant.actorType.startsWith("scripted-")) return { usd: 0, basis: "a scripted participant calls no model (known zero)" };
  return { unknown: e?.reason ?? "no model cost line recorded for this participant" };
}

function finalMetrics(ev: SeatEvidence, steps: number): AtifFinalMetrics {
  const u = ev.trace.tokenUsage;
  const cost = seatCost(ev);
  return {
    ...(u?.input !== undefined ? { total_prompt_tokens: u.input } : {}),
    ...(u?.output !== undefined ? { total_completion_tokens: u.output } : {}),
    ...(u?.cachedInput !== undefined ? { total_cached_tokens: u.cachedInput } : {}),
    ...("usd" in cost ? { total_cost_usd: cost.usd } : {}),
    total_steps: steps,
    extra: {
      ...(u?.reasoningOutput !== undefined ? { total_reasoning_tokens: u.reasoningOutput } : {}),
      ...(u?.turns !== undefined ? { turns: u.turns } : {}),
      ...("usd" in cost ? { cost_basis: cost.basis } : { cost_unknown: cost.unknown }),
    },
  };
}

/** The ATIF trajectory of one seat. */
export function buildTrajectory(ev: SeatEvidence): AtifTrajectory {
  const t = ev.trace;
  const perResponse = t.protocol === "cua-loop";
  const b = new StepBuilder(ev, perResponse);
  const goals = ev.tasks.map((x) => `${x.id}: ${x.goal}`);
  b.user(goals.length ? `Tasks:\n${goals.join("\n")}` : "(no tasks declared)", t.startedAt, {
    persona: t.persona.id,
    ...(NO_PROMPT_DIGEST.test(t.persona.promptDigest)
      ? { note: "the participant is scripted and was given no prompt; this message lists the study's task goals" }
      : {
          prompt_digest: t.persona.promptDigest,
          note: "the participant's exact brief is kept in the bundle by its digest only; this message lists the study's task goals",
        }),
  });
  for (const it of t.items) b.item(it);
  b.flush();
  const checks = ev.tasks.map((x) => `${x.id} ${x.status}`);
  b.system(`participant ${t.status} (${t.completionReason}): ${t.reason}${checks.length ? `; hidden checks: ${checks.join(", ")}` : ""}`, t.completedAt, {
    status: t.status,
    completion_reason: t.completionReason,
    ...(t.stopCause ? { stop_cause: t.stopCause } : {}),
    tasks: ev.tasks.map((x) => ({ id: x.id, status: x.status, passed: x.passed })),
  });
  const steps = b.steps;
  return {
    schema_version: ATIF_VERSION,
    session_id: `${ev.bundle.runId}/${ev.participant.id}`,
    agent: agentOf(t, ev.ledger, ev.humanishVersion),
    steps,
    notes: [
      `Exported by humanish ${ev.humanishVersion} from the verified run ${ev.bundle.runId} (lab ${ev.bundle.lab.id}), participant ${ev.participant.id} (${t.actorType}), trace ${ev.tracePath}.`,
      perResponse
        ? `Each agent step is one model response; screenshot paths are relative to ${ev.imageRef ? "this trajectory file" : "the run directory"}.`
        : "The trace records no model-response boundaries: each agent step is the reasoning and message before one tool call, that call and its output; token usage is known per turn only, so it appears in final_metrics.",
      "The first step lists the study's task goals; the last is humanish's record of how the participant ended and what the hidden checks found.",
    ].join(" "),
    final_metrics: finalMetrics(ev, steps.length),
    extra: {
      humanish: {
        run_id: ev.bundle.runId,
        lab: ev.bundle.lab.id,
        route: ev.bundle.route,
        target: ev.bundle.target,
        participant_id: ev.participant.id,
        trace: ev.tracePath,
        ids: { ...t.ids },
      },
    },
  };
}
