/**
 * Builders of real bundles for the bundle tests: a dry-run terminal bundle, a live terminal
 * bundle (ledgers, events, transcript, trace, receipts, cleanup) and a live browser bundle
 * (screenshots encoded with pngjs, report). Everything goes through the real writer.
 */
import { afterEach, expect } from "bun:test";
import {
  type ActorTrace,
  buildNoSpendProof,
  createRunWriter,
  digestText,
  type RunBundleInput,
  type RunWriter,
  summarizeCost,
  type TerminalLedgers,
  unmeasuredLine,
} from "../../src/bundle/index.ts";
import { type HumanishError, isHumanishError } from "../../src/errors.ts";
import {
  browserParticipant,
  liveBrowserInput,
  noSpendTerminalCost,
  scriptedTrace,
  labBlock as sharedLabBlock,
  tempProject as sharedTempProject,
  writeDesktopShots,
} from "../support/bundles.ts";
import { makePng } from "../support/png.ts";

/** A canary secret with no recognisable secret shape: only the literal scrub can catch it. */
export const CANARY = "canary-7f3a9c2e-Zq41x";

const T0 = "2026-11-30T02:00:00.000Z";
const T1 = "2026-11-30T02:01:00.000Z";

/** A fresh temp project dir (realpath) and its cleanup. */
export function tempProject(): { cwd: string; cleanup: () => void } {
  return sharedTempProject("humanish-bundle-");
}

/**
 * For a test file's top level: registers an `afterEach` that removes every project made since the
 * last test, and returns the maker of fresh temp projects (each call: a new project's path).
 */
export function projectPerTest(): () => string {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    while (cleanups.length) cleanups.pop()!();
  });
  return () => {
    const p = tempProject();
    cleanups.push(p.cleanup);
    return p.cwd;
  };
}

/**
 * Awaits `p` (or calls and awaits it) and expects it to throw a HumanishError with `code`;
 * returns that error. Fails the test when it resolves or throws anything else.
 */
export async function expectCode(p: Promise<unknown> | (() => unknown), code: string): Promise<HumanishError> {
  try {
    if (typeof p === "function") await p();
    else await p;
  } catch (e) {
    expect(isHumanishError(e, code)).toBe(true);
    return e as HumanishError;
  }
  throw new Error(`expected ${code}`);
}

function labBlock(id: string) {
  return sharedLabBlock(id, `Lab ${id}`, "a".repeat(64));
}

/** Write a dry-run (contract-only) terminal bundle. */
export async function writeDryRunTerminal(cwd: string, runId = "dry-1"): Promise<RunWriter> {
  const w = createRunWriter({ cwd, runId, secrets: [CANARY], route: "terminal", mode: "dry-run", lab: "jq-first-contact", heartbeatMs: 0 });
  const input: RunBundleInput = {
    route: "terminal",
    mode: "dry-run",
    target: "docker",
    createdAt: T0,
    completedAt: T1,
    lab: labBlock("jq-first-contact"),
    subject: { source: "terminal-product", name: "jq", publicSurfaces: ["jq --help"], provenance: "unpinned" },
    lifecycle: [
      { at: T0, event: "terminal-lab.run.created", message: "dry run" },
      { at: T0, event: "terminal-lab.contract.ready", message: "contract only" },
    ],
    participants: [{ id: "p1", actorType: "scripted-terminal", status: "contract_proof_only", completionReason: null, reason: "dry run", trace: null }],
    tasks: [{ id: "pretty-print", goal: "pretty print", status: "not_run", passed: false }],
    caps: { maxUsd: 0, maxJobs: 1, maxMinutes: 5 },
  };
  await w.finalize(input);
  return w;
}

/** The trace of a live terminal participant. */
export function terminalTrace(overrides: Partial<ActorTrace> = {}): ActorTrace {
  return scriptedTrace("terminal", {
    prompt: "prompt",
    startedAt: T0,
    completedAt: T1,
    durationMs: 60_000,
    counts: { commands: 2, actions: 2, messages: 0, terminalEvents: 2 },
    items: [
      {
        id: "command-001",
        kind: "command",
        lifecycle: "completed",
        title: "jq --help",
        command: { text: "jq --help", envNames: ["CODEX_API_KEY"], exitCode: 0, outputTail: `usage: jq ${CANARY}` },
        at: T0,
      },
      { id: "usage-001", kind: "usage", lifecycle: "completed", title: "turn 1", usage: { input: 10, output: 5, total: 15 } },
    ],
    ...overrides,
  });
}

/** Ledgers for a live terminal run with the given cleanup proofs. */
export function terminalLedgers(cleanup: TerminalLedgers["cleanup"], maxUsd: number | null = 0): TerminalLedgers {
  const cost = noSpendTerminalCost();
  return {
    schema: "humanish.terminal-ledgers.v1",
    lifecycle: [
      { at: T0, event: "terminal-lab.run.created", message: `key ${CANARY} never written` },
      { at: T1, event: "terminal-lab.cleanup.verified", message: "inspect 404" },
    ],
    commandLog: [{ at: T0, label: "step-1", commandDigest: digestText("jq --help", 16), envNames: ["CODEX_API_KEY"], exitCode: 0, durationMs: 12 }],
    interventions: [],
    cost,
    noSpendProof: buildNoSpendProof(cost, maxUsd),
    cleanup,
  };
}

/** Write a complete live terminal bundle (passes verify). Returns the writer and input. */
/** `noTrace`: the participant never started (no actor.json, trace null, a harness failure, checks not run). */
export async function writeLiveTerminal(
  cwd: string,
  runId = "live-1",
  opts: { secrets?: string[]; noTrace?: boolean } = {},
): Promise<{ w: RunWriter; input: RunBundleInput }> {
  const w = createRunWriter({
    cwd,
    runId,
    secrets: [CANARY, ...(opts.secrets ?? [])],
    route: "terminal",
    mode: "live",
    lab: "jq-first-contact",
    heartbeatMs: 0,
  });
  const containerId = "c".repeat(64);
  await w.appendNdjson(
    "sandbox-receipts.ndjson",
    { at: T0, provider: "docker", id: containerId, participantId: "p1" },
    { kind: "sandbox-receipts", durable: true },
  );
  await w.writeStatus({ phase: "participate", detail: `p1 running with ${CANARY}` });
  await w.appendNdjson("terminal-events.ndjson", { at: T0, stream: "stdout", chunk: `usage: jq\n${CANARY}\n` }, { kind: "terminal-events" });
  await w.appendNdjson(
    "terminal-events.ndjson",
    { at: T0, stream: "stderr", chunk: `wrote /tmp/scratch/out.json and ${cwd}/out.json` },
    { kind: "terminal-events" },
  );
  await w.writeArtifact("terminal-transcript.txt", `$ jq --help\nusage: jq\nOPENAI_API_KEY=${CANARY}\n`, { kind: "terminal-transcript" });
  if (!opts.noTrace) await w.writeJson("actor.json", terminalTrace(), { kind: "actor-trace" });
  const cleanup = [{ id: containerId, provider: "docker" as const, outcome: "released" as const, reason: "inspect-404", at: T1 }];
  await w.writeJson("terminal-ledgers.json", terminalLedgers(cleanup), { kind: "terminal-ledgers" });
  const input: RunBundleInput = {
    route: "terminal",
    mode: "live",
    target: "docker",
    createdAt: T0,
    completedAt: T1,
    lab: labBlock("jq-first-contact"),
    subject: { source: "terminal-product", name: "jq", publicSurfaces: ["jq --help"], provenance: "unpinned" },
    lifecycle: [{ at: T0, event: "terminal-lab.run.created", message: `run with key ${CANARY}` }],
    participants: [
      opts.noTrace
        ? { id: "p1", actorType: "scripted-terminal", status: "failed", completionReason: "harness_error", reason: "never started", trace: null }
        : {
            id: "p1",
            actorType: "scripted-terminal",
            status: "passed",
            completionReason: "goal_satisfied",
            reason: "ok",
            trace: "actor.json",
            startedAt: T0,
            completedAt: T1,
            durationMs: 60_000,
          },
    ],
    tasks: opts.noTrace
      ? [{ id: "pretty-print", goal: "pretty print", participantId: "p1", status: "not_run", passed: false }]
      : [
          { id: "pretty-print", goal: "pretty print", participantId: "p1", status: "passed", passed: true },
          { id: "filter", goal: "filter", participantId: "p1", status: "failed", passed: false, detail: "exit 1" },
        ],
    caps: { maxUsd: 0, maxJobs: 1, maxMinutes: 5 },
    cost: summarizeCost([unmeasuredLine("model-tokens", "no_token_usage", { participantId: "p1" })]),
    cleanup,
  };
  await w.finalize(input);
  return { w, input };
}

/** Browser participant trace with ui_action and screenshot items. */
export function browserTrace(shots: string[]): ActorTrace {
  return scriptedTrace("browser", {
    startedAt: T0,
    completedAt: T1,
    durationMs: 60_000,
    counts: { actions: 1, screenshots: shots.length },
    items: [
      { id: "ui_action-001", kind: "ui_action", lifecycle: "completed", title: "click", action: { type: "click", x: 10, y: 20 }, coord: { x: 10, y: 20 } },
      ...shots.map((p, i) => ({
        id: `screenshot-${String(i + 1).padStart(3, "0")}`,
        kind: "screenshot" as const,
        lifecycle: "completed" as const,
        title: p,
        screenshotRef: { path: p, redaction: "none" as const },
      })),
    ],
  });
}

/** Write a complete live browser bundle with two screenshots and a report. */
export async function writeLiveBrowser(cwd: string, runId = "browser-1"): Promise<RunWriter> {
  const w = createRunWriter({ cwd, runId, secrets: [CANARY], route: "browser", mode: "live", lab: "todomvc-first-run", heartbeatMs: 0 });
  const desktop = "d".repeat(64);
  const shots = ["screenshots/001.png", "screenshots/002.png"];
  await writeDesktopShots(w, { desktop, at: T0, shots: shots.map((p, i) => [p, makePng(4, 3, { seed: i + 1 })] as const) });
  await w.writeJson("actor.json", browserTrace(shots), { kind: "actor-trace" });
  const input = liveBrowserInput({
    desktop,
    createdAt: T0,
    completedAt: T1,
    lab: labBlock("todomvc-first-run"),
    participants: [browserParticipant(60_000)],
    tasks: [{ id: "add-todo", goal: "add", participantId: "p1", status: "passed", passed: true }],
  });
  await w.finalize(input);
  await w.writeArtifact("report/index.html", `<!doctype html><title>r</title><p>${CANARY}</p>`, { kind: "report" });
  await w.finalize();
  return w;
}
