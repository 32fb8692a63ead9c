/**
 * `humanish init --yes --template computer-use`: the starter is a valid, warning-free
 * openai-computer-use lab on the embedded TodoMVC with hidden checks and an enforceable cap.
 */
import { describe, expect, test } from "bun:test";
import { checkDraft, templateAnswers } from "../../src/init/index.ts";
import { parseLab } from "../../src/lab/index.ts";
import { isPriced } from "../../src/models/index.ts";

describe("computer-use template", () => {
  test("passes the loader with no warnings and names a priced model under a positive cap", () => {
    const a = templateAnswers("computer-use", "cua-starter");
    const r = checkDraft(a);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.warnings).toEqual([]);
    const parsed = parseLab(r.yaml);
    expect(parsed.ok).toBe(true);
    if (!parsed.ok || parsed.config.subject.source !== "app-url") throw new Error("not an app-url lab");
    const actor = parsed.config.actors[0]!;
    expect(actor.type).toBe("openai-computer-use");
    expect(parsed.config.subject.serve?.static?.root).toBe("embedded:todomvc-vanillajs");
    expect(actor.tasks?.map((t) => t.id)).toEqual(["add-two-todos", "complete-one", "clear-completed"]);
    expect(parsed.config.scenario.mode).toBe("dry-run");
    const model = "model" in actor ? actor.model : undefined;
    expect(model && isPriced(model)).toBe(true);
    expect(parsed.config.scenario.caps?.maxUsd).toBeGreaterThan(0);
  });
});
