/**
 * A full analysis packet through the restricted Codex account analyst: 40 screenshot-like
 * 1024×768 PNGs (about 16 MB, under the selector's 20 MiB image budget) sent by the codex
 * analysis provider to the REAL pinned `codex app-server` on the fake model. The app-server
 * echoes the input back as frames of the packet's size, so the session's frame limit follows
 * the packet: the analysis completes, and the same packet under the old fixed 2 MiB frame limit
 * is refused (`frame_too_large`).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { startCodexAccountSession } from "../../src/actors/codex-account/index.ts";
import type { AnalysisPrompt } from "../../src/analysis/provider.ts";
import { createCodexAnalysisProvider } from "../../src/analysis/provider-codex.ts";
import { SELECTION_LIMITS } from "../../src/analysis/select.ts";
import { type CodexWorld, codexWorld } from "../actors/codex-account/support.ts";
import { screenshotPng } from "../support/screenshots.ts";

setDefaultTimeout(180_000);
const ANSWER = JSON.stringify({ findings: [{ title: "The list did not update", evidence: ["p1/screenshot/0040"] }] });
const SCHEMA = {
  type: "object",
  properties: {
    findings: {
      type: "array",
      items: {
        type: "object",
        properties: { title: { type: "string" }, evidence: { type: "array", items: { type: "string" } } },
        required: ["title", "evidence"],
        additionalProperties: false,
      },
    },
  },
  required: ["findings"],
  additionalProperties: false,
};
const never = new AbortController().signal;
let world: CodexWorld;
let prompt: AnalysisPrompt;
let imageBytes = 0;

beforeAll(() => {
  world = codexWorld(() => ({ kind: "response", output: [{ type: "message", text: ANSWER }] }));
  const content: AnalysisPrompt["content"] = [{ type: "text", text: "Evidence packet of run todomvc-40: forty frames of seat p1." }];
  for (let i = 1; i <= 40; i++) {
    const png = screenshotPng(i);
    imageBytes += png.byteLength;
    const id = `p1/screenshot/${String(i).padStart(4, "0")}`;
    content.push({ type: "text", text: `### ${id} · screenshot · observed · participant p1` });
    content.push({ type: "image", evidenceId: id, pngBase64: Buffer.from(png).toString("base64"), width: 1024, height: 768 });
  }
  prompt = { instructions: "Analyse the run.", content, output: { name: "findings", jsonSchema: SCHEMA } };
});
afterAll(async () => {
  await world?.cleanup();
});

describe("the codex analyst and a real packet of screenshots", () => {
  test("40 screenshots of 1024×768: the analysis completes; every image reached the model", async () => {
    // A packet the selector could send: 40 images, within its image byte budget, far above 2 MiB.
    expect(imageBytes).toBeGreaterThan(8 * 1024 * 1024);
    expect(imageBytes).toBeLessThanOrEqual(SELECTION_LIMITS.maxImageBytes);
    const provider = createCodexAnalysisProvider({ env: world.env, authPath: world.authPath });
    const r = await provider.run(prompt, { model: null, maxCostUsd: null, maxOutputTokens: null, timeoutMs: 120_000, signal: never });
    expect(r.outcome).toEqual({ status: "completed", outputText: ANSWER });
    const sent = world.fake.requests.filter((q) => q.path === "/v1/responses").at(-1);
    expect(sent?.bodyBytes).toBeGreaterThan(imageBytes);
    expect((JSON.stringify(sent?.body?.input).match(/data:image\/png;base64,/g) ?? []).length).toBe(40);
  });

  test("the same packet under the old fixed 2 MiB frame limit is refused: frame_too_large", async () => {
    const MiB = 1024 * 1024;
    const session = await startCodexAccountSession({
      purpose: "analyst",
      signal: never,
      env: world.env,
      authPath: world.authPath,
      bounds: { frameBytes: 2 * MiB, stdoutBytes: 8 * MiB },
    });
    try {
      const r = await session.runTurn({
        instructions: prompt.instructions,
        input: prompt.content.map((c) => (c.type === "text" ? { type: "text", text: c.text } : { type: "image", url: `data:image/png;base64,${c.pngBase64}` })),
        tools: [],
        outputSchema: SCHEMA,
        deadlineMs: 120_000,
        signal: never,
      });
      expect(r).toMatchObject({ status: "refused", reason: "frame_too_large" });
    } finally {
      await session.close();
    }
  });
});
