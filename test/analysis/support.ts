/**
 * Shared pieces of the analysis tests: the fake model's scenarios (answers built from the
 * evidence ids the request really carries, so a test cannot pass on ids it made up), and the
 * env that points the real `openai` SDK at the fake.
 */
import { createOpenAIAnalysisProvider } from "../../src/analysis/provider-openai.ts";
import type { AnalyzeOptions } from "../../src/analysis/run.ts";
import type { FakeReply, FakeRequest } from "../support/fake-openai/server.ts";

/** The key the fake accepts (not shaped like a real key). */
export const FAKE_KEY = "analysis-test-key-0001";

/** The env of a provider talking to the fake at `baseURL`. */
export function fakeEnv(baseURL: string): Record<string, string> {
  return { OPENAI_BASE_URL: baseURL, OPENAI_API_KEY: FAKE_KEY };
}

/**
 * Options of `analyzeRun` for `runDir` against the fake Responses server at `baseURL`: the openai
 * provider, the default model and question, a 5 USD cap, a 60 s timeout, a live first run; `over`
 * replaces any of them.
 */
export function analyzeOptions(runDir: string, baseURL: string, over: Partial<AnalyzeOptions> = {}): AnalyzeOptions {
  return {
    runDir,
    provider: createOpenAIAnalysisProvider(fakeEnv(baseURL)),
    model: null,
    question: null,
    maxCostUsd: 5,
    maxOutputTokens: null,
    timeoutMs: 60_000,
    dryRun: false,
    rerun: false,
    signal: new AbortController().signal,
    ...over,
  };
}

/** Every evidence header of a request: id, kind, basis and participant. */
export function headersOf(req: FakeRequest): { id: string; kind: string; basis: string; participant: string | null }[] {
  const input = (req.body?.input as { content?: { type: string; text?: string }[] }[] | undefined) ?? [];
  const text = input
    .flatMap((m) => m.content ?? [])
    .map((c) => (c.type === "input_text" ? (c.text ?? "") : ""))
    .join("");
  return [...text.matchAll(/^### (\S+) · (\w+) · (\w+)(?: · participant (\S+))?$/gm)].map((m) => ({
    id: m[1]!,
    kind: m[2]!,
    basis: m[3]!,
    participant: m[4] ?? null,
  }));
}

/** A good answer: one observed finding per failed task seen, one participant-reported finding per participant reason. */
export function goodAnswer(req: FakeRequest, extra: Record<string, unknown>[] = []): string {
  const h = headersOf(req);
  const findings: Record<string, unknown>[] = [];
  const failedTask = h.find((x) => x.kind === "task" && x.basis === "observed" && x.participant !== null);
  const reason = h.find((x) => x.kind === "reason" && x.basis === "participant") ?? h.find((x) => x.kind === "reason");
  const shot = h.find((x) => x.kind === "screenshot");
  if (failedTask)
    findings.push({
      id: "f1",
      title: "Participants did not reach a task's goal",
      severity: "blocker",
      kind: "observed",
      participants: [failedTask.participant],
      tasks: [],
      evidence: [failedTask.id, ...(shot ? [shot.id] : [])],
      recommendation: "Make the control for this task visible where participants look for it.",
    });
  if (reason)
    findings.push({
      id: "f2",
      title: "A participant said the product was confusing",
      severity: "minor",
      kind: reason.basis === "participant" ? "participant_reported" : "observed",
      participants: [reason.participant],
      tasks: [],
      evidence: [reason.id],
      recommendation: "Confirm with observed evidence before acting.",
    });
  return JSON.stringify({ summary: "What the participants ran into.", findings: [...findings, ...extra], limitations: ["Some frames were not sent."] });
}

/** A reply whose one message is `text`. */
export function message(text: string): FakeReply {
  return { kind: "response", output: [{ type: "message", text }] };
}
