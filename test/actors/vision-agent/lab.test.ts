/** The `vision-agent` lab keys: computer use's, `model` required, token caps only where counted. */
import { describe, expect, test } from "bun:test";
import { parseLab } from "../../../src/lab/index.ts";

const lab = (actor: string, caps = "", target = "") => `schema: humanish.lab.v2
id: vision-lab
subject:
  source: app-url
  appUrl: http://127.0.0.1:41731/
  serve: {static: {root: "embedded:todomvc-vanillajs"}}
actors:
${actor}
${target}scenario:
  mode: dry-run
${caps ? `  caps:\n${caps}` : ""}`;
const vision = (extra = "") => `  - type: vision-agent
    model: qwen2.5-vl-72b-instruct
    mission: Add a todo.
    tasks: [{id: add, goal: Add a todo., check: {textIncludes: "1 item left"}}]
${extra}`;

describe("vision-agent lab", () => {
  test("parses with seats, stopWhen and token caps; runs on local and e2b-desktop", () => {
    const ok = parseLab(lab(vision("    count: 2\n    stopWhen: {any: [{textIncludes: 1 item left}]}"), "    maxTokens: 1000\n    maxTotalTokens: 5000"));
    expect(ok.ok).toBe(true);
    if (ok.ok) expect(ok.config.actors[0]).toMatchObject({ type: "vision-agent", count: 2, model: "qwen2.5-vl-72b-instruct" });
    expect(parseLab(lab(vision(), "", "execution: {target: e2b-desktop}\n")).ok).toBe(true);
  });

  test("refused by name: no model, safety-check acknowledgements, steps, no hidden check", () => {
    const cases: [string, RegExp][] = [
      ["  - type: vision-agent\n    mission: Add a todo.\n    tasks: [{id: add, goal: g, check: {textIncludes: x}}]", /actors\[0\]\.model/],
      [vision("    acknowledgeSafetyChecks: [malicious_instructions]"), /actors\[0\]\.acknowledgeSafetyChecks only acts on an openai-computer-use participant/],
      [vision("    steps: [screenshot]"), /actors\[0\]\.steps only acts on a scripted-browser participant/],
      [
        "  - type: vision-agent\n    model: m\n    mission: Add a todo.",
        /has no hidden check: .*actors\[0\]\.stopWhen.*vision-agent model's own word is a claim/,
      ],
    ];
    for (const [actor, message] of cases) {
      const r = parseLab(lab(actor));
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error.message).toMatch(message);
    }
  });

  test("a token cap on a participant that does not count tokens is refused, naming the field", () => {
    const cua = "  - type: openai-computer-use\n    mission: m\n    tasks: [{id: add, goal: g, check: {textIncludes: x}}]";
    const r = parseLab(lab(cua, "    maxTokens: 1000"));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toMatch(/scenario\.caps\.maxTokens only acts on a participant that counts its model's tokens \(vision-agent\)/);
  });
});
