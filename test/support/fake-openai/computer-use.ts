/**
 * Computer-use scenarios for the fake Responses server: a model that uses the real TodoMVC in
 * the guest by pointer or keyboard, batched (GA `computer` tool, `actions[]`) or unbatched (one
 * `action` per call, the preview tool's shape), plus the odd replies the loop must survive.
 *
 * Coordinates are pixels of the 1440×950 guest frame (browser chrome included), read off a real
 * screenshot of TodoMVC in the guest.
 */
import type { FakeOutputItem, FakeReply, FakeRequest, FakeScenario } from "./server.ts";

type Json = Record<string, unknown>;

/** TodoMVC at 1440×950 in the guest. */
export const TODO = {
  newTodo: { x: 720, y: 265 },
  firstToggle: { x: 464, y: 329 },
  clearCompleted: { x: 919, y: 438 },
} as const;

/** The three TodoMVC tasks of the computer-use lab, with their hidden checks. */
export const TODO_TASKS = [
  { id: "add-two-todos", goal: 'Add two todos, "Buy milk" and "Walk the dog".', check: { textIncludes: ["Buy milk", "Walk the dog", "2 items left"] } },
  { id: "complete-one", goal: 'Mark "Buy milk" as completed.', check: { textIncludes: ["Walk the dog", "1 item left", "Clear completed (1)"] } },
  {
    id: "clear-completed",
    goal: 'Clear the completed todo so that only "Walk the dog" is left.',
    check: { textIncludes: ["Walk the dog", "1 item left"], textExcludes: ["Buy milk", "Clear completed (1)"] },
  },
];

/** {@link TODO_TASKS} as the `tasks:` block of a browser actor in lab YAML (indented under `actors: - …`). */
export const TODO_TASKS_YAML = `    tasks:
${TODO_TASKS.map((t) => `      - id: ${t.id}\n        goal: ${JSON.stringify(t.goal)}\n        check: ${JSON.stringify(t.check)}`).join("\n")}`;

const click = (p: { x: number; y: number }) => ({ type: "click", button: "left", x: p.x, y: p.y });

/**
 * The TodoMVC session as turns of raw CUA actions.
 * - `pointer`: clicks the field, the first checkbox and "Clear completed"; Enter submits.
 * - `keyboard`: one click to focus the field, then only keys (Tab walks the controls, Space
 *   toggles, Enter presses the button) — the key names are CUA's (`ENTER`, `TAB`, `SPACE`).
 */
export function todoTurns(mode: "pointer" | "keyboard"): unknown[][] {
  const add = [
    click(TODO.newTodo),
    { type: "type", text: "Buy milk" },
    { type: "keypress", keys: ["ENTER"] },
    { type: "type", text: "Walk the dog" },
    { type: "keypress", keys: ["Enter"] },
  ];
  if (mode === "pointer") return [add, [click(TODO.firstToggle), { type: "wait" }], [click(TODO.clearCompleted)]];
  const tab = { type: "keypress", keys: ["TAB"] };
  return [add, [tab, tab, { type: "keypress", keys: ["SPACE"] }], [tab, tab, tab, tab, tab, { type: "keypress", keys: ["ENTER"] }]];
}

/** Every `computer_call_output` of a request's input. */
export function callOutputs(body: Json | undefined): Json[] {
  const input = Array.isArray(body?.input) ? (body?.input as Json[]) : [];
  return input.filter((i) => i?.type === "computer_call_output");
}

/** Options of {@link cuaSession}. */
export interface CuaSessionOptions {
  turns: unknown[][];
  /** `true`: one call per turn with `actions[]`; `false`: one call per action with `action`. */
  batched: boolean;
  /** The final message (no call). */
  final?: string;
  model?: string;
  /**
   * `true`: the turn is the number of call outputs the request replays (one scenario can serve
   * several seats at once under `store: false`); default: the request's ordinal.
   */
  byReplay?: boolean;
  /** Extra output items before the call of turn `n` (0-based), e.g. a safety check. */
  decorate?: (n: number, call: Extract<FakeOutputItem, { type: "computer_call" }>) => FakeOutputItem[] | undefined;
}

/**
 * A scripted model: reply `n` (by how many requests came before) is the `n`-th call, then the
 * final message. Reasoning summaries ride every reply.
 */
export function cuaSession(o: CuaSessionOptions): FakeScenario {
  const calls = o.batched ? o.turns.map((actions) => ({ actions })) : o.turns.flat().map((action) => ({ action }));
  return (req: FakeRequest): FakeReply => {
    const n = o.byReplay ? callOutputs(req.body).length : req.ordinal - 1;
    const model = o.model ?? (typeof req.body?.model === "string" ? req.body.model : undefined);
    if (n < calls.length) {
      const call: Extract<FakeOutputItem, { type: "computer_call" }> = { type: "computer_call", callId: `call_${n + 1}`, ...calls[n] };
      const output = o.decorate?.(n, call) ?? [{ type: "reasoning", summary: `step ${n + 1}: act on the screenshot` } as FakeOutputItem, call];
      return { kind: "response", ...(model ? { model } : {}), output };
    }
    return {
      kind: "response",
      ...(model ? { model } : {}),
      output: [{ type: "message", text: o.final ?? "I reached the goal: the list shows only Walk the dog." }],
    };
  };
}

/** A scenario answering every request with one fixed reply after `before` normal turns. */
export function thenReply(before: FakeScenario, after: number, reply: FakeReply): FakeScenario {
  return (req, history) => (req.ordinal > after ? reply : before(req, history));
}
