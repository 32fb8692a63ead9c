/**
 * Function-calling scenarios for the fake Responses server: a vision model that drives the real
 * TodoMVC in the guest by calling `humanish_ui` with `{narration, actions: [{kind, …}]}`, one call
 * per reply (the arguments as raw text, so a test can send text that is not JSON), then a final
 * message. Coordinates are pixels of the 1440×950 guest frame (see computer-use.ts).
 */
import { TODO } from "./computer-use.ts";
import type { FakeReply, FakeRequest, FakeScenario } from "./server.ts";

type Json = Record<string, unknown>;

/** One `humanish_ui` call's arguments: a value (sent as JSON) or raw text (sent as is). */
export type VisionCall = { name?: string; args: Json } | { name?: string; raw: string };

/** A well-formed call of `humanish_ui`. */
export const ui = (narration: string, actions: Json[]): VisionCall => ({ args: { narration, actions } });

const click = (p: { x: number; y: number }) => ({ kind: "click", x: p.x, y: p.y });

/** The TodoMVC session as `humanish_ui` calls: add both todos, complete the first, clear it. */
export function todoCalls(): VisionCall[] {
  return [
    ui("I see an empty todo field; I add the first todo.", [click(TODO.newTodo), { kind: "type", text: "Buy milk" }, { kind: "keypress", keys: ["ENTER"] }]),
    ui("Now the second one.", [
      { kind: "type", text: "Walk the dog" },
      { kind: "keypress", keys: ["ENTER"] },
    ]),
    ui("I tick Buy milk.", [click(TODO.firstToggle)]),
    ui("And clear the completed one.", [click(TODO.clearCompleted)]),
  ];
}

/** Every `function_call_output` of a request's input. */
export function functionOutputs(body: Json | undefined): Json[] {
  const input = Array.isArray(body?.input) ? (body?.input as Json[]) : [];
  return input.filter((i) => i?.type === "function_call_output");
}

/**
 * A scripted model: reply `n` (the number of call outputs the request replays, so one scenario
 * serves several seats) is the `n`-th call, then `final`. The model named is `model`.
 */
export function visionSession(o: { calls: VisionCall[]; final?: string; model: string }): FakeScenario {
  return (req: FakeRequest): FakeReply => {
    const n = functionOutputs(req.body).length;
    const call = o.calls[n];
    if (call)
      return {
        kind: "response",
        model: o.model,
        output: [
          { type: "reasoning", summary: `step ${n + 1}: look at the screenshot` },
          { type: "function_call", name: call.name ?? "humanish_ui", callId: `fc_${n + 1}`, arguments: "raw" in call ? call.raw : JSON.stringify(call.args) },
        ],
      };
    return { kind: "response", model: o.model, output: [{ type: "message", text: o.final ?? "I reached the goal: only Walk the dog is left." }] };
  };
}
