import {
  type ActorTrace,
  buildNoSpendProof,
  type CostLine,
  createRunWriter,
  digestText,
  type RunBundleInput,
  type Study,
  summarizeCost,
  unmeasuredLine,
} from "../../src/bundle/index.ts";
import {
  browserParticipant,
  labBlock,
  liveBrowserInput,
  noSpendTerminalCost,
  scriptedTrace,
  tempProject as sharedTempProject,
  writeDesktopShots,
} from "../support/bundles.ts";
import { makePng } from "../support/png.ts";

/** What a hostile participant printed: it must render as text, never as markup. */
export const HOSTILE = `<script>document.title="PWNED"</script></pre><h1 id="injected">x</h1>"><img src=x onerror="document.title='PWNED2'">`;

const T0 = "2026-11-30T02:00:00.000Z";
const T1 = "2026-11-30T02:00:05.000Z";
const T2 = "2026-11-30T02:00:09.000Z";

/** A fresh project directory (real path) readable by other users (Chromium runs as nobody). */
export function tempProject(prefix = "humanish-report-"): { cwd: string; cleanup: () => void } {
  return sharedTempProject(prefix, 0o755);
}

function lab(id: string, title: string) {
  return labBlock(id, title, "b".repeat(64));
}

/** A live terminal run: two commands, a hostile transcript, two tasks (one failed), cleanup released. */
export async function writeTerminalRun(cwd: string, runId = "terminal-run-1"): Promise<string> {
  const w = createRunWriter({ cwd, runId, secrets: [], route: "terminal", mode: "live", lab: "jq-first-contact", heartbeatMs: 0 });
  const container = "e".repeat(64);
  await w.appendNdjson(
    "sandbox-receipts.ndjson",
    { at: T0, provider: "docker", id: container, participantId: "p1" },
    { kind: "sandbox-receipts", durable: true },
  );
  const transcript = `$ jq --help\nUsage:\tjq [OPTIONS] FILTER [FILES...]\n$ echo hostile\n${HOSTILE}\n\u001b[31mred text\u001b[0m\n`;
  await w.appendNdjson("terminal-events.ndjson", { at: T1, stream: "stdout", chunk: transcript }, { kind: "terminal-events" });
  await w.writeArtifact("terminal-transcript.txt", transcript, { kind: "terminal-transcript" });
  const trace = scriptedTrace("terminal", {
    startedAt: T0,
    completedAt: T2,
    durationMs: 9000,
    counts: { commands: 2, actions: 2, messages: 0, terminalEvents: 1 },
    items: [
      {
        id: "command-001",
        kind: "command",
        lifecycle: "completed",
        title: "step 1",
        at: T1,
        command: { text: "jq --help", exitCode: 0, outputTail: "Usage:\tjq [OPTIONS] FILTER" },
      },
      {
        id: "command-002",
        kind: "command",
        lifecycle: "completed",
        title: "step 2",
        at: T2,
        command: { text: "echo hostile", exitCode: 3, outputTail: HOSTILE },
      },
    ],
  });
  await w.writeJson("actor.json", trace, { kind: "actor-trace" });
  const cleanup = [{ id: container, provider: "docker" as const, outcome: "released" as const, reason: "container removed; inspect answered 404", at: T2 }];
  const cost = noSpendTerminalCost();
  await w.writeJson(
    "terminal-ledgers.json",
    {
      schema: "humanish.terminal-ledgers.v1",
      lifecycle: [{ at: T0, event: "terminal-lab.run.created", message: "created" }],
      commandLog: [{ at: T1, label: "step-1", commandDigest: digestText("jq --help", 16), envNames: [], exitCode: 0, durationMs: 20 }],
      interventions: [],
      cost,
      noSpendProof: buildNoSpendProof(cost, 0),
      cleanup,
    },
    { kind: "terminal-ledgers" },
  );
  const input: RunBundleInput = {
    route: "terminal",
    mode: "live",
    target: "docker",
    createdAt: T0,
    completedAt: T2,
    lab: lab("jq-first-contact", "First contact with jq"),
    subject: { source: "terminal-product", name: "jq", publicSurfaces: ["https://jqlang.org/manual/"], provenance: "unpinned" },
    lifecycle: [
      { at: T0, event: "terminal-lab.sandbox.created", message: "docker container created" },
      { at: T2, event: "terminal-lab.cleanup.verified", message: "released by exact id" },
    ],
    participants: [
      {
        id: "p1",
        actorType: "scripted-terminal",
        status: "passed",
        completionReason: "goal_satisfied",
        reason: "all steps ran",
        trace: "actor.json",
        startedAt: T0,
        completedAt: T2,
        durationMs: 9000,
      },
    ],
    tasks: [
      { id: "extract-name", goal: "Save the name field to name.txt", participantId: "p1", status: "passed", passed: true },
      { id: "count-tags", goal: `Count the tags ${HOSTILE}`, participantId: "p1", status: "failed", passed: false, detail: "check exited 1, expected 0" },
    ],
    caps: { maxUsd: 0, maxJobs: null, maxMinutes: 5 },
    cost: summarizeCost([
      { kind: "sandbox-minutes", participantId: "p1", usd: 0, basis: "no-spend-signal", ratesAsOf: "2026-11-01", source: "local docker", reason: null },
      unmeasuredLine("model-tokens", "no_token_usage", { participantId: "p1" }),
    ]),
    cleanup,
    warnings: [{ code: "HUMANISH_LAB_FIELD_INERT", message: "execution.timeoutMs is recorded but not consumed", path: "execution.timeoutMs" }],
  };
  await w.finalize(input);
  w.close();
  return w.runDir;
}

/** A dry run: contract only, nothing started. */
export async function writeDryRun(cwd: string, runId = "dry-run-1"): Promise<string> {
  const w = createRunWriter({ cwd, runId, secrets: [], route: "terminal", mode: "dry-run", lab: "jq-first-contact", heartbeatMs: 0 });
  await w.finalize({
    route: "terminal",
    mode: "dry-run",
    target: "docker",
    createdAt: "2026-11-30T01:00:00.000Z",
    completedAt: "2026-11-30T01:00:01.000Z",
    lab: lab("jq-first-contact", "First contact with jq"),
    subject: { source: "terminal-product", name: "jq", publicSurfaces: ["https://jqlang.org/manual/"], provenance: "declared-not-run" },
    lifecycle: [
      { at: "2026-11-30T01:00:00.000Z", event: "terminal-lab.run.created", message: "dry run" },
      { at: "2026-11-30T01:00:01.000Z", event: "terminal-lab.contract.ready", message: "contract only" },
    ],
    participants: [{ id: "p1", actorType: "scripted-terminal", status: "contract_proof_only", completionReason: null, reason: "dry run", trace: null }],
    tasks: [
      { id: "extract-name", goal: "Save the name field to name.txt", status: "not_run", passed: false },
      { id: "count-tags", goal: "Count the tags", status: "not_run", passed: false },
    ],
    caps: { maxUsd: 0, maxJobs: null, maxMinutes: 5 },
  });
  w.close();
  return w.runDir;
}

/**
 * A live browser run with two screenshots (raw frames) — or, with `extraNoiseShots`, that many
 * more 160×120 noise frames (~58 KB each) after them, attributed to p1 by their folder.
 */
export async function writeBrowserRun(cwd: string, runId = "browser-run-1", opts: { extraNoiseShots?: number } = {}): Promise<string> {
  const w = createRunWriter({ cwd, runId, secrets: [], route: "browser", mode: "live", lab: "todomvc-first-run", heartbeatMs: 0 });
  const desktop = "f".repeat(64);
  const shots = ["screenshots/p1/turn-01.png", "screenshots/p1/turn-02.png"];
  const noise = Array.from(
    { length: opts.extraNoiseShots ?? 0 },
    (_, k) => [`screenshots/p1/noise-${String(k + 1).padStart(2, "0")}.png`, makePng(160, 120, { seed: k + 1, fill: "noise" })] as const,
  );
  await writeDesktopShots(w, {
    desktop,
    at: T0,
    shots: [...shots.map((p, i) => [p, makePng(320, 200, { seed: i + 1, fill: "bands" })] as const), ...noise],
  });
  const trace = scriptedTrace("browser", {
    startedAt: T0,
    completedAt: T2,
    durationMs: 9000,
    counts: { actions: 2, screenshots: 2 },
    items: [
      { id: "ui_action-001", kind: "ui_action", lifecycle: "completed", title: "open /", at: T0, action: { type: "open", path: "/" } },
      { id: "screenshot-001", kind: "screenshot", lifecycle: "completed", title: "after open", at: T1, screenshotRef: { path: shots[0]!, redaction: "none" } },
      { id: "ui_action-002", kind: "ui_action", lifecycle: "completed", title: "type", at: T1, action: { type: "type", text: "buy milk" } },
      {
        id: "screenshot-002",
        kind: "screenshot",
        lifecycle: "completed",
        title: "after typing",
        at: T2,
        screenshotRef: { path: shots[1]!, redaction: "none" },
      },
    ],
  });
  await w.writeJson("actor.json", trace, { kind: "actor-trace" });
  await w.finalize(
    liveBrowserInput({
      desktop,
      createdAt: T0,
      completedAt: T2,
      lab: lab("todomvc-first-run", "TodoMVC first run"),
      participants: [browserParticipant(9000)],
      tasks: [{ id: "add-todo", goal: "Add a todo", participantId: "p1", status: "passed", passed: true }],
    }),
  );
  w.close();
  return w.runDir;
}

/** Options of {@link writeStudyRun}. */
export interface StudyRunOptions {
  runId?: string;
  /** Put hostile markup in every free-text slot a seat has (reason, persona, device, captions, goal, an extra seat's id). */
  hostile?: boolean;
}

/**
 * A live 5-seat browser study (TodoMVC) written through the bundle writer, laid out as the study
 * runner lays seats out (`seats/<id>/actor.json`, `screenshots/<id>/turn-NN.png`, a
 * `humanish.study.v1` section): p1, p2 and p5 reached the goal, p3 gave up (a finding), p4's
 * harness failed (not a finding). Seats alternate desktop and mobile; p5's last screenshot is
 * listed but referenced by no trace (attributed by its folder). Cost: p1–p3 a measured zero, p4
 * unmeasured, p5 no line at all. With `hostile`, a sixth seat whose id is markup is added (it
 * never started: the study budget was spent; no folder, no trace).
 */
export async function writeStudyRun(cwd: string, opts: StudyRunOptions = {}): Promise<string> {
  const runId = opts.runId ?? (opts.hostile ? "study-hostile" : "study-5");
  const bad = opts.hostile ? HOSTILE : "";
  const w = createRunWriter({ cwd, runId, secrets: [], route: "browser", mode: "live", lab: "todomvc-many", heartbeatMs: 0 });
  const seats = [
    { id: "p1", device: "desktop", status: "passed", reason: "goal_satisfied", shots: 3, tasks: [true, true] },
    { id: "p2", device: "mobile", status: "passed", reason: "goal_satisfied", shots: 2, tasks: [true, true] },
    { id: "p3", device: "desktop", status: "abandoned", reason: "gave_up", shots: 2, tasks: [true, false] },
    { id: "p4", device: "mobile", status: "failed", reason: "harness_error", shots: 1, tasks: [null, null] },
    { id: "p5", device: "desktop", status: "passed", reason: "goal_satisfied", shots: 2, tasks: [true, true] },
  ] as const;
  const taskDefs = [
    { id: "add-todo", goal: `Add a todo${bad}` },
    { id: "clear-completed", goal: "Clear the completed todos" },
  ];
  const participants: NonNullable<RunBundleInput["participants"]> = [];
  const tasks: NonNullable<RunBundleInput["tasks"]> = [];
  const cleanup: NonNullable<RunBundleInput["cleanup"]> = [];
  const lines: CostLine[] = [];
  const studySeats: Study["seats"] = [];
  for (const [i, s] of seats.entries()) {
    const container = String(i + 1).repeat(64);
    await w.appendNdjson(
      "sandbox-receipts.ndjson",
      { at: T0, participantId: s.id, provider: "docker", id: container, kind: "desktop" },
      { kind: "sandbox-receipts", durable: true },
    );
    const size = s.device === "desktop" ? { width: 320, height: 200 } : { width: 120, height: 260 };
    const items: ActorTrace["items"] = [];
    for (let k = 1; k <= s.shots; k++) {
      const path = `screenshots/${s.id}/turn-0${k}.png`;
      await w.writeArtifact(path, makePng(size.width, size.height, { seed: i * 3 + k, fill: "bands" }), { kind: "screenshot" });
      // p5's last frame is referenced by no trace item: the report attributes it by its path.
      if (s.id === "p5" && k === s.shots) continue;
      items.push({ id: `ui_action-00${k}`, kind: "ui_action", lifecycle: "completed", title: `step ${k}`, at: T1, action: { type: "click", x: k } });
      items.push({
        id: `screenshot-00${k}`,
        kind: "screenshot",
        lifecycle: "completed",
        title: `${s.id} after step ${k}${bad}`,
        at: T1,
        screenshotRef: { path, redaction: "none" },
      });
    }
    const trace = scriptedTrace("browser", {
      participantId: s.id,
      startedAt: T0,
      completedAt: T2,
      durationMs: 4000 + i * 1000,
      counts: { actions: s.shots, screenshots: s.shots },
      items,
      status: s.status,
      completionReason: s.reason,
      reason: `${s.reason}${bad}`,
      persona: { id: `newcomer-${s.device}${bad}`, traitsApplied: [], promptDigest: digestText("steps") },
    });
    await w.writeJson(`seats/${s.id}/actor.json`, trace, { kind: "actor-trace" });
    participants.push({
      id: s.id,
      actorType: "scripted-browser",
      status: s.status,
      completionReason: s.reason,
      reason: `${s.status === "abandoned" ? "could not find how to clear completed todos" : s.status === "failed" ? "the guest desktop stopped answering" : "ok"}${bad}`,
      trace: `seats/${s.id}/actor.json`,
      startedAt: T0,
      completedAt: T2,
      durationMs: 4000 + i * 1000,
      device: `${s.device}${bad}`,
      desktopGeometry: { preset: `${s.device}${bad}`, screen: { requested: size }, warnings: [] },
    });
    studySeats.push({
      id: s.id,
      index: i,
      state: s.status === "failed" ? "failed" : "completed",
      phase: s.status === "failed" ? "participate" : "done",
      folder: `seats/${s.id}/`,
      release: "released",
      containerId: container,
      reason: "released by exact id",
      ...(s.status === "failed" ? { error: { code: "HUMANISH_SEAT_FAILED", message: `the seat failed in participate${bad}` } } : {}),
      startedAt: T0,
      durationMs: 4000 + i * 1000,
      usd: 0,
      jobs: 0,
    });
    for (const [t, def] of taskDefs.entries()) {
      const passed = s.tasks[t];
      tasks.push({
        id: def.id,
        goal: def.goal,
        participantId: s.id,
        status: passed === null ? "not_run" : passed ? "passed" : "failed",
        passed: passed === true,
      });
    }
    cleanup.push({ id: container, provider: "docker", kind: "desktop", participantId: s.id, outcome: "released", reason: "inspect-404", at: T2 });
    if (i < 3)
      lines.push({
        kind: "desktop-minutes",
        participantId: s.id,
        usd: 0,
        basis: "no-spend-signal",
        ratesAsOf: "2026-11-01",
        source: "local docker",
        reason: null,
      });
    if (i === 3) lines.push(unmeasuredLine("desktop-minutes", "no_meter", { participantId: s.id }));
  }
  if (opts.hostile) {
    participants.push({ id: HOSTILE, actorType: "scripted-browser", status: "incomplete", completionReason: "budget_reached", reason: HOSTILE, trace: null });
    for (const def of taskDefs) tasks.push({ id: def.id, goal: def.goal, participantId: HOSTILE, status: "not_run", passed: false });
    studySeats.push({
      id: HOSTILE,
      index: 5,
      state: "budget_reached",
      phase: "not_started",
      folder: null,
      release: "none",
      reason: HOSTILE,
      durationMs: 0,
      usd: 0,
      jobs: 0,
    });
  }
  const count = (state: string) => studySeats.filter((x) => x.state === state).length;
  const study: Study = {
    schema: "humanish.study.v1",
    lane: "local-guest",
    declaredSeats: studySeats.length,
    concurrency: 2,
    waves: Math.ceil(studySeats.length / 2),
    maxTotalUsd: 0,
    seats: studySeats,
    totals: {
      seats: studySeats.length,
      completed: count("completed"),
      failed: count("failed"),
      interrupted: count("interrupted"),
      budgetReached: count("budget_reached"),
      knownUsd: 0,
      knownJobs: 0,
      heldSlots: 0,
    },
  };
  await w.finalize({
    route: "browser",
    mode: "live",
    target: "local",
    createdAt: T0,
    completedAt: T2,
    lab: lab("todomvc-many", `TodoMVC, five seats${bad}`),
    subject: { source: "app-url", appUrl: "http://127.0.0.1:8080/", provenance: "undeclared" },
    participants,
    tasks,
    cost: summarizeCost(lines),
    cleanup,
    study,
  });
  w.close();
  return w.runDir;
}
