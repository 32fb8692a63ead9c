/**
 * The scoring context of a many-seat run: each participant gets its own seat folder's trace,
 * ledgers, transcript, screenshots and tasks; an evidence file that does not parse is given as
 * null and named; the whole context is frozen.
 */
import { expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildScoringContext } from "../../src/adapters/context.ts";
import type { RunBundle } from "../../src/bundle/schemas.ts";
import { projectPerTest, terminalLedgers, terminalTrace, writeLiveBrowser, writeLiveTerminal } from "../bundle/helpers.ts";

const project = projectPerTest();

test("two seats: per-seat evidence, a broken trace named, everything frozen", async () => {
  const { w } = await writeLiveTerminal(project());
  const base = (await w.preview({
    route: "terminal",
    mode: "live",
    target: "docker",
    createdAt: "2026-11-30T02:00:00.000Z",
    lab: { id: "two-seats", source: { ref: "labs/two.yaml", sha256: "a".repeat(64) } },
    subject: { source: "terminal-product", name: "jq", provenance: "unpinned" },
  })) as RunBundle;
  const dir = w.runDir;
  for (const s of ["p1", "p2"]) mkdirSync(join(dir, "seats", s), { recursive: true });
  writeFileSync(join(dir, "seats/p1/actor.json"), JSON.stringify(terminalTrace({ participantId: "p1" })));
  writeFileSync(join(dir, "seats/p2/actor.json"), "{ not json");
  writeFileSync(join(dir, "seats/p2/terminal-ledgers.json"), JSON.stringify(terminalLedgers([])));
  writeFileSync(join(dir, "seats/p2/terminal-transcript.txt"), "$ jq .\nseat two\n");
  const artifact = (path: string, kind: RunBundle["artifacts"][number]["kind"]) => ({ path, kind, bytes: 1, sha256: "b".repeat(64) });
  const participant = (id: string) => ({
    id,
    actorType: "scripted-terminal",
    status: "passed" as const,
    completionReason: null,
    reason: "",
    trace: `seats/${id}/actor.json`,
  });
  const seat = (id: string, index: number) => ({
    id,
    index,
    state: "completed" as const,
    phase: "done",
    folder: `seats/${id}/`,
    release: "none" as const,
    reason: "",
    durationMs: 1,
    usd: 0,
    jobs: 0,
  });
  const view: RunBundle = {
    ...base,
    participants: [participant("p1"), participant("p2")],
    tasks: [
      { id: "t", goal: "g", participantId: "p1", status: "passed", passed: true },
      { id: "t", goal: "g", participantId: "p2", status: "failed", passed: false },
    ],
    artifacts: [
      artifact("seats/p1/actor.json", "actor-trace"),
      artifact("seats/p1/screenshots/001.png", "screenshot"),
      artifact("seats/p2/actor.json", "actor-trace"),
      artifact("seats/p2/terminal-ledgers.json", "terminal-ledgers"),
      artifact("seats/p2/terminal-transcript.txt", "terminal-transcript"),
    ],
    study: {
      schema: "humanish.study.v1",
      lane: "docker-terminal",
      declaredSeats: 2,
      concurrency: 2,
      waves: 1,
      maxTotalUsd: null,
      seats: [seat("p1", 0), seat("p2", 1)],
      totals: { seats: 2, completed: 2, failed: 0, interrupted: 0, budgetReached: 0, knownUsd: 0, knownJobs: 0, heldSlots: 0 },
    },
  };
  const notes = { warnings: [] as string[] };
  const ctx = buildScoringContext(view, dir, notes);
  expect(
    ctx.participants.map((p) => [
      p.id,
      p.folder,
      p.trace?.participantId ?? null,
      p.ledgers?.schema ?? null,
      p.transcript,
      p.screenshots,
      p.tasks.map((t) => t.status),
    ]),
  ).toEqual([
    ["p1", "seats/p1/", "p1", null, null, ["seats/p1/screenshots/001.png"], ["passed"]],
    ["p2", "seats/p2/", null, "humanish.terminal-ledgers.v1", "$ jq .\nseat two\n", [], ["failed"]],
  ]);
  expect(notes.warnings).toEqual(["seats/p2/actor.json was not given to the scorer (it does not match its schema)"]);
  expect(ctx.trace?.participantId).toBe("p1");
  expect(ctx.product).toEqual({ source: "terminal-product", name: "jq" });
  expect(() => {
    (ctx.participants[1] as { status: string }).status = "passed";
  }).toThrow(TypeError);
  // The context is a copy: the view handed in stays writable.
  view.participants[0]!.reason = "changed";
  expect(ctx.bundle.participants[0]?.reason).toBe("");
});

test("a browser seat gets its model ledger and its share of the desktop ledgers", async () => {
  const w = await writeLiveBrowser(project());
  const dir = w.runDir;
  const bundle = JSON.parse(readFileSync(join(dir, "run.json"), "utf8")) as RunBundle;
  const at = "2026-11-30T02:00:01.000Z";
  const line = {
    schema: "humanish.model-ledger-line.v1",
    ordinal: 1,
    at,
    model: "computer-use-preview",
    input: 10,
    output: 2,
    usd: 0.01,
    status: 200,
    outcome: "completed",
  };
  const ledger = {
    schema: "humanish.model-ledger.v1",
    participantId: "p1",
    endpointHost: "api.openai.com",
    runtimeAuth: "openai-egress",
    residualCapability: "none",
    caps: { maxUsd: 1, maxTotalUsd: null },
    requests: 1,
    refused: 0,
    usd: 0.01,
    observedModels: ["computer-use-preview"],
    lines: [line],
  };
  writeFileSync(join(dir, "model-ledger.json"), JSON.stringify(ledger));
  const proof = {
    id: "d".repeat(64),
    provider: "docker" as const,
    kind: "desktop" as const,
    participantId: "p1",
    outcome: "released" as const,
    reason: "inspect-404",
    at,
  };
  const other = { ...proof, id: "e".repeat(64), participantId: "p9" };
  writeFileSync(
    join(dir, "desktop-ledgers.json"),
    JSON.stringify({
      schema: "humanish.desktop-cleanup.v1",
      desktops: [proof, other],
      geometry: [{ participantId: "p1", preset: "desktop", width: 1280, height: 800, startMs: 900 }],
    }),
  );
  const view: RunBundle = {
    ...bundle,
    artifacts: [
      ...bundle.artifacts,
      { path: "model-ledger.json", kind: "model-ledger", bytes: 1, sha256: "b".repeat(64) },
      { path: "desktop-ledgers.json", kind: "data", bytes: 1, sha256: "b".repeat(64) },
    ],
  };
  const notes = { warnings: [] as string[] };
  const p = buildScoringContext(view, dir, notes).participants[0]!;
  expect(notes.warnings).toEqual([]);
  expect(p.ledgers).toBeNull();
  expect(p.modelLedger).toMatchObject({ participantId: "p1", usd: 0.01, lines: [{ model: "computer-use-preview", usd: 0.01 }] });
  expect(p.desktop).toEqual({ cleanup: [proof], geometry: { preset: "desktop", width: 1280, height: 800, startMs: 900 } });
  // A terminal seat has neither.
  const t = buildScoringContext({ ...view, route: "terminal", artifacts: bundle.artifacts }, dir).participants[0]!;
  expect([t.modelLedger, t.desktop]).toEqual([null, null]);
});
