/**
 * A scripted model for a `local-agent` seat: the real Codex CLI relays its `humanish_ui` function
 * calls to humanish as dynamic tool calls, then sends their results back as
 * `function_call_output` items. Reply `n` is chosen by how many such outputs the request replays
 * (the CLI resends the whole thread each time), so one scenario serves several seats at once.
 *
 * Coordinates are pixels of the 1440×950 guest frame (the computer-use scenarios' TodoMVC map).
 */
import { TODO } from "./computer-use.ts";
import { toolOutputs } from "./scenarios.ts";
import type { FakeReply, FakeRequest, FakeScenario } from "./server.ts";

/** One `humanish_ui` call's arguments. */
export interface UiCall {
  narration: string;
  actions: Record<string, unknown>[];
}

const click = (p: { x: number; y: number }) => ({ kind: "click", x: p.x, y: p.y });

/**
 * TodoMVC through `humanish_ui`: first a call with an oversized narration and one with five
 * actions (both must be refused with nothing dispatched), then the three tasks in four calls of
 * at most four actions (each task's state is observed after its own call).
 */
export function todoUiCalls(opts: { withRefusals: boolean }): UiCall[] {
  const refusals: UiCall[] = [
    { narration: "I look around. ".repeat(140), actions: [click(TODO.newTodo)] },
    { narration: "Five at once.", actions: Array.from({ length: 5 }, () => click(TODO.newTodo)) },
  ];
  return [
    ...(opts.withRefusals ? refusals : []),
    {
      narration: "There is a field that says What needs to be done. I add the first todo and start the second.",
      actions: [click(TODO.newTodo), { kind: "type", text: "Buy milk" }, { kind: "keypress", keys: ["ENTER"] }, { kind: "type", text: "Walk the dog" }],
    },
    { narration: "I submit the second one.", actions: [{ kind: "keypress", keys: ["ENTER"] }] },
    { narration: "I tick Buy milk.", actions: [click(TODO.firstToggle), { kind: "wait", ms: 200 }] },
    { narration: "Clear completed removes the ticked one.", actions: [click(TODO.clearCompleted)] },
  ];
}

/** The final answer the scripted model gives after its calls. */
export const TODO_FINAL_ANSWER = {
  outcome: "reached",
  summary: "I added Buy milk and Walk the dog, completed Buy milk and cleared it.",
  frictionReports: ["The completion toggle is a small unlabeled circle."],
};

/** Every `humanish_ui` call the model made in a request's replayed thread, with its output text. */
export function uiExchanges(body: Record<string, unknown> | undefined): string[] {
  return toolOutputs(body);
}

/** Replies with the `n`-th call (n = replayed outputs), then the final answer. */
export function codexUiSession(calls: readonly UiCall[], final: unknown = TODO_FINAL_ANSWER): FakeScenario {
  return (req: FakeRequest): FakeReply => {
    const n = toolOutputs(req.body).length;
    if (n < calls.length)
      return {
        kind: "response",
        output: [
          { type: "reasoning", summary: `step ${n + 1}: look at the screenshot and act` },
          { type: "function_call", name: "humanish_ui", arguments: JSON.stringify(calls[n]), callId: `call_ui_${n + 1}` },
        ],
      };
    return { kind: "response", output: [{ type: "message", text: JSON.stringify(final) }] };
  };
}
