/**
 * Real run bundles for the report and library tests, written through the bundle layer's own
 * writer (so `verifyRun` judges them like any run): a live terminal run whose participant
 * printed hostile markup, a dry run, and a live browser run with two screenshots.
 */
import { PNG } from "pngjs";
import { buildNoSpendProof, createRunWriter, digestText, type RunBundleInput, summarizeCost, unmeasuredLine } from "../../src/bundle/index.ts";
import { browserParticipant, labBlock, noSpendTerminalCost, scriptedTrace, tempProject as sharedTempProject } from "../support/bundles.ts";

/** What a hostile participant printed: it must render as text, never as markup. */
export const HOSTILE = `<script>document.title="PWNED"</script></pre><h1 id="injected">x</h1>"><img src=x onerror="document.title='PWNED2'">`;

const T0 = "2026-11-30T02:00:00.000Z";
const T1 = "2026-11-30T02:00:05.000Z";
const T2 = "2026-11-30T02:00:09.000Z";

/** A fresh project directory (real path) readable by other users (Chromium runs as nobody). */
export function tempProject(prefix = "humanish-report-"): { cwd: string; cleanup: () => void } {
  return sharedTempProject(prefix, 0o755);
}

/** A `width`×`height` RGB PNG with a coloured band per `seed`, encoded by pngjs. */
export function makePng(width: number, height: number, seed: number): Uint8Array {
  const png = new PNG({ width, height });
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const i = (y * width + x) * 4;
      const band = Math.floor((x / width) * 4);
      png.data[i] = (band * 60 + seed * 90) & 0xff;
      png.data[i + 1] = (y * 255) / height;
      png.data[i + 2] = 200 - band * 40;
      png.data[i + 3] = 255;
    }
  }
  return new Uint8Array(PNG.sync.write(png, { colorType: 2 }));
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

/** A live browser run with two screenshots (raw frames). */
export async function writeBrowserRun(cwd: string, runId = "browser-run-1"): Promise<string> {
  const w = createRunWriter({ cwd, runId, secrets: [], route: "browser", mode: "live", lab: "todomvc-first-run", heartbeatMs: 0 });
  const desktop = "f".repeat(64);
  await w.appendNdjson("sandbox-receipts.ndjson", { at: T0, provider: "docker", id: desktop, kind: "desktop" }, { kind: "sandbox-receipts", durable: true });
  const shots = ["screenshots/p1/turn-01.png", "screenshots/p1/turn-02.png"];
  await w.writeArtifact(shots[0]!, makePng(320, 200, 1), { kind: "screenshot" });
  await w.writeArtifact(shots[1]!, makePng(320, 200, 2), { kind: "screenshot" });
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
  await w.finalize({
    route: "browser",
    mode: "live",
    target: "local",
    createdAt: T0,
    completedAt: T2,
    lab: lab("todomvc-first-run", "TodoMVC first run"),
    subject: { source: "app-url", appUrl: "http://127.0.0.1:8080/", provenance: "undeclared" },
    participants: [browserParticipant(9000)],
    tasks: [{ id: "add-todo", goal: "Add a todo", participantId: "p1", status: "passed", passed: true }],
    cleanup: [{ id: desktop, provider: "docker", kind: "desktop", outcome: "released", reason: "inspect-404", at: T2 }],
  });
  w.close();
  return w.runDir;
}
