/**
 * Small real bundles for the export tests, written by the real run writer and checked by the
 * real verifier, without a model or a desktop:
 * - a Codex seat whose trace items are the real `codex exec --json` fold (CodexEventStream) of
 *   a JSONL stream in the CLI's public event format, renumbered `<kind>-NNN` as the terminal
 *   lane does, with per-turn usage items at the end;
 * - a computer-use seat whose trace has the computer-use loop's item order (per response:
 *   usage, reasoning, message, safety check, actions; then the screenshot after them), real
 *   PNGs (pngjs) in `screenshots/`, and its request ledger (`model-ledger.json`).
 */
import { CodexEventStream, codexTokenUsage } from "../../src/actors/codex-exec/events.ts";
import { type ActorTrace, createRunWriter, digestText, type RunBundleInput, summarizeCost, type TraceItem } from "../../src/bundle/index.ts";
import { terminalLedgers } from "../bundle/helpers.ts";
import { labBlock, liveBrowserInput, writeDesktopShots } from "../support/bundles.ts";
import { makePng } from "../support/png.ts";

/** A secret value of the run: it must never reach a trajectory. */
export const SECRET = "sk-proj-exportCANARY-3b7e1f9c0a2d4e68";
const T0 = "2026-12-01T10:00:00.000Z";
const T1 = "2026-12-01T10:02:00.000Z";

/** A Codex session in the CLI's JSONL event format: learn jq from its help, use it, report. */
export function codexEvents(): string {
  const ev = (o: unknown) => `${JSON.stringify(o)}\n`;
  return [
    ev({ type: "thread.started", thread_id: "th-export-1" }),
    ev({ type: "turn.started" }),
    ev({ type: "item.completed", item: { id: "r1", type: "reasoning", text: "I have never used jq; its help first." } }),
    ev({ type: "item.started", item: { id: "c1", type: "command_execution", command: "jq --help", status: "in_progress" } }),
    ev({
      type: "item.completed",
      item: {
        id: "c1",
        type: "command_execution",
        command: "jq --help",
        exit_code: 0,
        status: "completed",
        aggregated_output: `Usage: jq [OPTIONS] FILTER\nOPENAI_API_KEY=${SECRET}`,
      },
    }),
    ev({ type: "item.completed", item: { id: "m1", type: "agent_message", text: "The help shows FILTER first; trying `.`." } }),
    ev({
      type: "item.completed",
      item: { id: "c2", type: "command_execution", command: "jq . orders.json > pretty.json", exit_code: 0, status: "completed", aggregated_output: "" },
    }),
    ev({ type: "item.completed", item: { id: "f1", type: "file_change", status: "completed", changes: [{ kind: "add", path: "notes.md" }] } }),
    ev({ type: "item.completed", item: { id: "m2", type: "agent_message", text: "Done: pretty.json written. The help never says what `.` means." } }),
    ev({ type: "turn.completed", usage: { input_tokens: 5200, cached_input_tokens: 4096, output_tokens: 310, reasoning_output_tokens: 64 } }),
  ].join("");
}

/** The Codex trace: the real fold of {@link codexEvents}, shaped as the terminal lane writes it. */
export function codexTrace(): ActorTrace {
  const stream = new CodexEventStream((s) => s);
  stream.push(new TextEncoder().encode(codexEvents()));
  const state = stream.end();
  const perKind = new Map<string, number>();
  const nextId = (kind: string) => {
    const n = (perKind.get(kind) ?? 0) + 1;
    perKind.set(kind, n);
    return `${kind}-${String(n).padStart(3, "0")}`;
  };
  const items: TraceItem[] = [...state.items.values()].map((it) => ({ ...it, id: nextId(it.kind), at: T0 }));
  const usage = codexTokenUsage(state)!;
  usage.turns.forEach((t, i) =>
    items.push({
      id: nextId("usage"),
      kind: "usage",
      lifecycle: "completed",
      title: `turn ${i + 1} token usage (all model requests of the turn)`,
      usage: { input: t.input, cachedInput: t.cachedInput, output: t.output, total: t.input + t.output },
    }),
  );
  return {
    schema: "humanish.actor-trace.v1",
    participantId: "p1",
    actorType: "codex-exec",
    provider: "openai",
    providerVersion: "0.171.0",
    protocol: "json-stream",
    lane: "terminal",
    persona: { id: "a developer who has never used jq", traitsApplied: [], promptDigest: digestText("brief") },
    redaction: { status: "passed", screenshots: "n/a", notes: "scrubbed" },
    startedAt: T0,
    completedAt: T1,
    durationMs: 120_000,
    status: "passed",
    completionReason: "turn_completed",
    reason: "turn completed; hidden checks decide",
    ids: { threadId: state.threadId ?? "th" },
    counts: { commands: state.commands, messages: state.agentMessages.length },
    items,
    tokenUsage: {
      input: usage.input,
      output: usage.output,
      cachedInput: usage.cachedInput,
      reasoningOutput: 64,
      total: usage.total,
      turns: usage.turns.length,
    },
    estimatedCost: {
      schema: "humanish.actor-estimated-cost.v1",
      estimatedCostUsd: 0.00123,
      reason: null,
      ratesAsOf: "2026-11-01",
      source: "rate table",
      modelId: "gpt-5.1-codex-mini",
    },
    runtime: {
      schema: "humanish.actor-runtime.v1",
      package: "@openai/codex",
      requestedVersion: "0.171.0",
      observedVersion: "0.171.0",
      versionStatus: "verified",
      requestedModel: "gpt-5.1-codex-mini",
      modelStatus: "declared",
      usageGranularity: "runtime_turn",
    },
  };
}

/** Write a live one-seat Codex terminal bundle; returns its run id. */
export async function writeCodexRun(cwd: string, runId = "codex-export-1"): Promise<string> {
  const w = createRunWriter({ cwd, runId, secrets: [SECRET], route: "terminal", mode: "live", lab: "codex-first-contact", heartbeatMs: 0 });
  const containerId = "e".repeat(64);
  await w.appendNdjson(
    "sandbox-receipts.ndjson",
    { at: T0, provider: "docker", id: containerId, participantId: "p1" },
    { kind: "sandbox-receipts", durable: true },
  );
  await w.appendNdjson("terminal-events.ndjson", { at: T0, stream: "stdout", chunk: codexEvents() }, { kind: "terminal-events" });
  await w.writeArtifact("terminal-transcript.txt", codexEvents(), { kind: "terminal-transcript" });
  await w.writeJson("actor.json", codexTrace(), { kind: "actor-trace" });
  const cleanup = [{ id: containerId, provider: "docker" as const, outcome: "released" as const, reason: "inspect-404", at: T1 }];
  await w.writeJson("terminal-ledgers.json", terminalLedgers(cleanup, 1), { kind: "terminal-ledgers" });
  const input: RunBundleInput = {
    route: "terminal",
    mode: "live",
    target: "docker",
    createdAt: T0,
    completedAt: T1,
    lab: labBlock("codex-first-contact", "Codex meets jq", "b".repeat(64)),
    subject: { source: "terminal-product", name: "jq", publicSurfaces: ["https://jqlang.org/manual/"], provenance: "unpinned" },
    participants: [
      {
        id: "p1",
        actorType: "codex-exec",
        status: "passed",
        completionReason: "turn_completed",
        reason: "turn completed",
        trace: "actor.json",
        startedAt: T0,
        completedAt: T1,
        durationMs: 120_000,
      },
    ],
    tasks: [
      { id: "pretty-print", goal: "Pretty-print orders.json into pretty.json.", participantId: "p1", status: "passed", passed: true },
      { id: "open-total", goal: "Write the open total to open-total.txt.", participantId: "p1", status: "failed", passed: false },
    ],
    caps: { maxUsd: 1, maxJobs: 1, maxMinutes: 5 },
    cost: summarizeCost([
      {
        kind: "model-tokens",
        participantId: "p1",
        modelId: "gpt-5.1-codex-mini",
        usd: 0.00123,
        count: 1,
        basis: "provider-token-usage",
        ratesAsOf: "2026-11-01",
        source: "humanish rate table",
        reason: null,
      },
    ]),
    cleanup,
  };
  await w.finalize(input);
  return runId;
}

/** The computer-use trace: two responses, each with usage, reasoning/message and actions, then a screenshot. */
export function computerUseTrace(shots: readonly string[]): ActorTrace {
  const shot = (n: number, i: number): TraceItem => ({
    id: `screenshot-${String(n).padStart(3, "0")}`,
    kind: "screenshot",
    lifecycle: "completed",
    title: `turn-0${i}`,
    at: T0,
    screenshotRef: { path: shots[i]!, redaction: "none" },
  });
  const items: TraceItem[] = [
    shot(1, 0),
    {
      id: "usage-002",
      kind: "usage",
      lifecycle: "completed",
      title: "turn 1 usage",
      usage: { input: 1800, output: 120, cachedInput: 0, reasoningOutput: 40, total: 1920 },
    },
    { id: "reasoning-003", kind: "reasoning", lifecycle: "completed", title: "turn 1 reasoning", at: T0, text: "The input box is at the top." },
    {
      id: "approval-004",
      kind: "approval",
      lifecycle: "completed",
      status: "acknowledged",
      title: "safety check malicious_instructions",
      at: T0,
      text: "check the page",
    },
    {
      id: "ui_action-005",
      kind: "ui_action",
      lifecycle: "completed",
      status: "dispatched",
      title: "click (320, 140)",
      at: T0,
      action: { type: "click", x: 320, y: 140 },
      coord: { x: 320, y: 140 },
    },
    {
      id: "ui_action-006",
      kind: "ui_action",
      lifecycle: "completed",
      status: "dispatched",
      title: "type 9 chars",
      at: T0,
      action: { type: "type", textLength: 9 },
    },
    shot(7, 1),
    {
      id: "usage-008",
      kind: "usage",
      lifecycle: "completed",
      title: "turn 2 usage",
      usage: { input: 3900, output: 60, cachedInput: 1792, reasoningOutput: 0, total: 3960 },
    },
    { id: "message-009", kind: "message", lifecycle: "completed", title: "turn 2 message", at: T0, text: "The todo is added." },
    { id: "notice-010", kind: "notice", lifecycle: "completed", status: "matched", title: "stopWhen rule added matched", at: T1 },
  ];
  return {
    schema: "humanish.actor-trace.v1",
    participantId: "p1",
    actorType: "openai-computer-use",
    provider: "openai",
    providerVersion: "computer-use-preview",
    protocol: "cua-loop",
    lane: "computer-use",
    persona: { id: "first-time visitor", traitsApplied: [], promptDigest: digestText("brief") },
    redaction: { status: "passed", screenshots: "raw", notes: "raw frames" },
    startedAt: T0,
    completedAt: T1,
    durationMs: 120_000,
    status: "passed",
    completionReason: "goal_satisfied",
    reason: "stopWhen matched",
    ids: { sessionId: "cua-session-1", model: "computer-use-preview" },
    counts: { actions: 2, screenshots: 2, requests: 2 },
    items,
    tokenUsage: { input: 5700, output: 180, cachedInput: 1792, total: 5880, turns: 2 },
    estimatedCost: {
      schema: "humanish.actor-estimated-cost.v1",
      estimatedCostUsd: null,
      reason: "no_rate_for_model",
      ratesAsOf: null,
      source: null,
      modelId: "computer-use-preview",
    },
    modelSettings: { reasoningEffort: "medium" },
  };
}

/** A request line of the seat's ledger (the gateway's line shape). */
function ledgerLine(ordinal: number, input: number, output: number, usd: number | null) {
  return {
    schema: "humanish.model-ledger-line.v1",
    ordinal,
    at: T0,
    path: "/v1/responses",
    requestedModel: "computer-use-preview",
    model: "computer-use-preview",
    stream: false,
    input,
    cached: 0,
    cacheWrite: 0,
    output,
    reasoning: 0,
    usd,
    ratesAsOf: usd === null ? null : "2026-11-01",
    costSource: usd === null ? null : "humanish rate table",
    costReason: usd === null ? "no_rate_for_model" : null,
    estimateUsd: null,
    estimateInputTokens: null,
    status: 200,
    outcome: "completed",
    detail: null,
    ms: 900,
  };
}

/** Write a live one-seat computer-use bundle (two real PNG screenshots, the request ledger); returns its run id. */
export async function writeComputerUseRun(cwd: string, runId = "cua-export-1"): Promise<string> {
  const w = createRunWriter({ cwd, runId, secrets: [SECRET], route: "browser", mode: "live", lab: "todomvc-cua", heartbeatMs: 0 });
  const desktop = "f".repeat(64);
  const shots = ["screenshots/p1-turn-00.png", "screenshots/p1-turn-01.png"];
  await writeDesktopShots(w, { desktop, at: T0, shots: shots.map((p, i) => [p, makePng(8, 6, { seed: i + 1 })] as const) });
  await w.writeJson("actor.json", computerUseTrace(shots), { kind: "actor-trace" });
  // The first response is priced; the second's cost is unknown (null): its step gets no cost_usd.
  const lines = [ledgerLine(1, 1800, 120, 0.0042), ledgerLine(2, 3900, 60, null)];
  await w.writeJson(
    "model-ledger-p1.json",
    {
      schema: "humanish.model-ledger.v1",
      participantId: "p1",
      endpointHost: "api.openai.com",
      runtimeAuth: "openai-egress",
      residualCapability: "none",
      caps: { maxUsd: 1, maxTotalUsd: null },
      requests: 2,
      refused: 0,
      usd: null,
      observedModels: ["computer-use-preview"],
      lines,
    },
    { kind: "model-ledger" },
  );
  const input = liveBrowserInput({
    desktop,
    createdAt: T0,
    completedAt: T1,
    lab: labBlock("todomvc-cua", "TodoMVC with computer use", "c".repeat(64)),
    participants: [
      {
        id: "p1",
        actorType: "openai-computer-use",
        status: "passed",
        completionReason: "goal_satisfied",
        reason: "stopWhen matched",
        trace: "actor.json",
        durationMs: 120_000,
        desktopGeometry: { preset: "desktop", screen: { requested: { width: 1440, height: 950 } }, warnings: [] },
      },
    ],
    tasks: [{ id: "add-todo", goal: "Add a todo.", participantId: "p1", status: "passed", passed: true }],
    cost: summarizeCost([
      {
        kind: "model-tokens",
        participantId: "p1",
        modelId: "computer-use-preview",
        usd: null,
        count: 2,
        basis: "unmeasured",
        ratesAsOf: null,
        source: null,
        reason: "no_rate_for_model",
      },
    ]),
  });
  await w.finalize(input);
  return runId;
}
