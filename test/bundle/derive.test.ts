import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  assertRunId,
  buildNoSpendProof,
  buildTerminalCostLedger,
  type CostLine,
  deriveReview,
  deriveVerdict,
  isValidRunId,
  listRuns,
  newRunId,
  type RunParticipant,
  safeRelPath,
  stakeholderLine,
  summarizeCost,
  unmeasuredLine,
} from "../../src/bundle/index.ts";
import { isHumanishError } from "../../src/errors.ts";
import { tempProject } from "./helpers.ts";

const part = (id: string, status: RunParticipant["status"], friction = false): RunParticipant => ({
  id,
  actorType: "scripted-terminal",
  status,
  completionReason: null,
  reason: "",
  trace: null,
  ...(friction ? { reportedFriction: true } : {}),
});
const priced = (usd: number, date: string): CostLine => ({
  kind: "model-tokens",
  usd,
  basis: "rate-table",
  ratesAsOf: date,
  source: "https://openai.com/api/pricing",
  reason: null,
});

describe("review derivation", () => {
  test("verdicts", () => {
    const done = { state: "completed" as const };
    expect(deriveVerdict("dry-run", done, [part("a", "contract_proof_only")])).toBe("contract_proof_only");
    expect(deriveVerdict("live", done, [part("a", "passed"), part("b", "passed")])).toBe("pass");
    expect(deriveVerdict("live", done, [part("a", "passed"), part("b", "abandoned")])).toBe("fail");
    expect(deriveVerdict("live", done, [part("a", "passed"), part("b", "timed_out")])).toBe("timed_out");
    expect(deriveVerdict("live", done, [part("a", "blocked")])).toBe("blocked");
    expect(deriveVerdict("live", done, [part("a", "timed_out"), part("b", "failed")])).toBe("fail");
    expect(deriveVerdict("live", done, [])).toBe("fail");
    expect(deriveVerdict("live", { state: "interrupted", interrupted: "SIGINT" }, [part("a", "passed")])).toBe("fail");
  });

  test("tallies, funnel and the stakeholder line", () => {
    const r = deriveReview({
      mode: "live",
      outcome: { state: "completed" },
      participants: [part("p1", "passed", true), part("p2", "passed"), part("p3", "abandoned", true)],
      tasks: [
        { id: "add-todo", goal: "", participantId: "p1", status: "passed", passed: true },
        { id: "clear-completed", goal: "", participantId: "p1", status: "passed", passed: true },
        { id: "add-todo", goal: "", participantId: "p2", status: "passed", passed: true },
        { id: "clear-completed", goal: "", participantId: "p2", status: "passed", passed: true },
        { id: "add-todo", goal: "", participantId: "p3", status: "passed", passed: true },
        { id: "clear-completed", goal: "", participantId: "p3", status: "failed", passed: false },
      ],
    });
    expect(r.participants).toEqual({ total: 3, reachedGoal: 2, abandoned: 1, ranOut: 0, blocked: 0, harnessFailed: 0, reportedFriction: 2 });
    expect(r.summary).toBe("2/3 reached the goal; tasks: add-todo 3/3 · clear-completed 2/3");
    expect(r.verdict).toBe("fail");
    expect(stakeholderLine({ participants: r.participants, tasks: { sessions: 3, tasks: [] } })).toBe("2/3 reached the goal");
    // A harness failure is named beside the denominator, never counted as a finding silently.
    expect(stakeholderLine({ participants: { ...r.participants, harnessFailed: 1 }, tasks: { sessions: 3, tasks: [] } })).toBe(
      "2/3 reached the goal (1 harness failure: not a finding)",
    );
  });
});

describe("cost null discipline", () => {
  test("total sums the lines only when every line is measured (one unmeasured line makes it null, never 0), dates from the oldest line", () => {
    expect(summarizeCost([]).estimatedTotalUsd).toBeNull();
    expect(summarizeCost([unmeasuredLine("model-tokens", "no_rate_for_model")]).estimatedTotalUsd).toBeNull();
    const s = summarizeCost([priced(0.1, "2026-10-01"), unmeasuredLine("desktop-minutes", "no_duration"), priced(0.2, "2026-09-15")]);
    expect(s.estimatedTotalUsd).toBeNull();
    expect(s.ratesAsOf).toBe("2026-09-15");
    expect(s.note).toBe("1 of 3 cost lines unmeasured");
    // A known-zero line beside an unmeasured one (a killed sandbox whose minutes are unknown) is not a free run.
    expect(summarizeCost([priced(0, "2026-10-01"), unmeasuredLine("sandbox-minutes", "no_duration")]).estimatedTotalUsd).toBeNull();
    expect(summarizeCost([priced(0.1, "2026-10-01"), priced(0.2, "2026-09-15")]).estimatedTotalUsd).toBe(0.3);
    expect(summarizeCost([priced(0, "2026-10-01")]).estimatedTotalUsd).toBe(0);
  });

  test("unmeasuredLine keeps usd null and never carries a date, whatever extra says", () => {
    const l = unmeasuredLine("provider", "no_token_usage", { usd: 5, ratesAsOf: "2026-01-01", modelId: "m" } as Partial<CostLine>);
    expect(l).toMatchObject({ usd: null, ratesAsOf: null, reason: "no_token_usage", modelId: "m", basis: "unmeasured" });
  });

  test("no-spend proof never lists a null line as zero", () => {
    const ledger = buildTerminalCostLedger({
      product: { kind: "product", usd: 0, basis: "no-spend-signal", ratesAsOf: "2026-11-01", source: "s", reason: null },
      media: unmeasuredLine("media", "no probe"),
      payment: { kind: "payment", usd: 0, basis: "no-spend-signal", ratesAsOf: "2026-11-01", source: "s", reason: null },
      provider: { kind: "provider", usd: 0.0123456789, basis: "rate-table", ratesAsOf: "2026-11-01", source: "s", reason: null },
    });
    expect(ledger.knownTotalUsd).toBe(0.012346);
    expect(ledger.fullyMeasured).toBe(false);
    const p = buildNoSpendProof(ledger, 1);
    expect(p).toMatchObject({ knownZeroLines: ["product", "payment"], knownNonZeroLines: ["provider"], unmeasuredLines: ["media"], satisfied: false });
    const zero = buildNoSpendProof({ ...ledger, lines: { ...ledger.lines, provider: { ...ledger.lines.provider, usd: 0 } }, knownTotalUsd: 0 }, null);
    expect(zero.satisfied).toBe(true);
    expect(zero.statement).toContain("unmeasured: media");
  });
});

describe("ids and paths", () => {
  test("newRunId produces valid, distinct ids", () => {
    const ids = new Set(Array.from({ length: 50 }, () => newRunId("terminal")));
    expect(ids.size).toBe(50);
    for (const id of ids) expect(isValidRunId(id)).toBe(true);
    expect(newRunId("Weird Prefix!!", new Date("2026-11-30T03:04:05.678Z"))).toMatch(/^weird-prefix-2026-11-30t03-04-05-678z-[0-9a-f]{8}$/);
  });

  test("`latest` is reserved: it names the latest-run pointer, never a run (verify --run latest)", () => {
    expect(isValidRunId("latest")).toBe(false);
    expect(() => assertRunId("latest")).toThrow(/reserved/);
    expect(isValidRunId("latest-1")).toBe(true);
  });

  test("safeRelPath", () => {
    expect(safeRelPath("screenshots/001.png")).toBe("screenshots/001.png");
    for (const bad of ["", "/a", "a/../b", "./a", "a//b", "a\\b", "a/\u0001b", "file://x", "..", `${"a/".repeat(300)}b`]) expect(safeRelPath(bad)).toBeNull();
  });

  test("listRuns: an unreadable runs directory is HUMANISH_RUNS_UNAVAILABLE", async () => {
    const p = tempProject();
    try {
      mkdirSync(join(p.cwd, ".humanish"));
      writeFileSync(join(p.cwd, ".humanish", "runs"), "not a directory");
      await listRuns(p.cwd).then(
        () => {
          throw new Error("expected failure");
        },
        (e) => expect(isHumanishError(e, "HUMANISH_RUNS_UNAVAILABLE")).toBe(true),
      );
    } finally {
      p.cleanup();
    }
  });
});
