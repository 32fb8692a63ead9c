/** The actor registry: declared capabilities and lane resolution. */
import { describe, expect, test } from "bun:test";
import { actorServesLane, findActor, listActors, resolveActor } from "../../src/actor-registry/registry.ts";
import { isHumanishError } from "../../src/errors.ts";

describe("actor registry", () => {
  test("terminal lane: scripted-terminal and codex-exec, with their key placement", () => {
    const terminal = listActors()
      .filter((a) => a.capabilities.lanes.includes("terminal"))
      .map((a) => [a.type, a.capabilities.keyPlacement, a.runtimeKeyNames]);
    expect(terminal).toEqual([
      ["scripted-terminal", "none", []],
      ["codex-exec", "in-sandbox-command-scoped", ["CODEX_API_KEY", "OPENAI_API_KEY"]],
    ]);
  });

  test("type ids are unique", () => {
    const types = listActors().map((a) => a.type);
    expect(new Set(types).size).toBe(types.length);
  });

  test("lane checks", () => {
    expect(actorServesLane("codex-exec", "terminal")).toBe(true);
    expect(actorServesLane("scripted-browser", "terminal")).toBe(false);
    expect(actorServesLane("nope", "terminal")).toBe(false);
    expect(findActor("openai-computer-use")?.capabilities.lanes).toEqual(["computer-use"]);
  });

  test("an actor of another lane, or an unknown one, is refused with the supported list", () => {
    for (const t of ["scripted-browser", "claude-code"]) {
      try {
        resolveActor(t, "terminal");
        throw new Error("expected a throw");
      } catch (e) {
        expect(isHumanishError(e, "HUMANISH_TERMINAL_LAB_ACTOR_UNSUPPORTED")).toBe(true);
        expect((e as Error).message).toContain(t);
        expect((e as { next?: string }).next).toContain("scripted-terminal, codex-exec");
      }
    }
    expect(resolveActor("codex-exec", "terminal").type).toBe("codex-exec");
  });
});
