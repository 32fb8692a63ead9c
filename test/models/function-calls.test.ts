/** The function-calling Responses wire (pure): reading calls, the replayed body, the pairing rule. */
import { describe, expect, test } from "bun:test";
import { isHumanishError } from "../../src/errors.ts";
import { checkFunctionPairs, FunctionConversation, parseFunctionResponse } from "../../src/models/function-calls.ts";

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47]);

describe("function-calling wire", () => {
  test("a response's calls, messages, reasoning and usage are read; a call without call_id or name is a problem", () => {
    const p = parseFunctionResponse({
      id: "resp_1",
      status: "completed",
      model: "m",
      output: [
        { type: "reasoning", summary: [{ type: "summary_text", text: "look" }] },
        { type: "function_call", call_id: "fc_1", name: "humanish_ui", arguments: '{"narration":""}' },
        { type: "function_call", name: "humanish_ui", arguments: "{}" },
        { type: "function_call", call_id: "fc_3", arguments: "{}" },
        { type: "message", content: [{ type: "output_text", text: "done" }] },
      ],
      usage: { input_tokens: 10, output_tokens: 2, input_tokens_details: { cached_tokens: 0 }, output_tokens_details: { reasoning_tokens: 1 } },
    });
    expect(p.calls).toEqual([{ callId: "fc_1", name: "humanish_ui", arguments: '{"narration":""}' }]);
    expect(p.problems).toEqual(["a function_call has no call_id", "function_call fc_3 has no name"]);
    expect([p.reasoning, p.messages, p.usage?.input, p.usage?.output]).toEqual([["look"], ["done"], 10, 2]);
    expect(parseFunctionResponse("nonsense")).toMatchObject({ status: "unknown", calls: [], output: [] });
  });

  test("the body replays everything with the function tool, an input_image and the output ceiling; a call without its output is never sent", () => {
    const c = new FunctionConversation({
      model: "m",
      instructions: "brief",
      tools: [{ name: "humanish_ui", description: "d", parameters: { type: "object" } }],
      maxOutputTokens: 512,
    });
    c.addUser("the screen", PNG);
    c.addResponse(parseFunctionResponse({ status: "completed", output: [{ type: "function_call", call_id: "fc_1", name: "humanish_ui", arguments: "{}" }] }));
    const refused = (() => {
      try {
        c.body();
      } catch (e) {
        return isHumanishError(e) ? e.code : "other";
      }
      return "sent";
    })();
    expect(refused).toBe("HUMANISH_VISION_CALL_OUTPUT_MISMATCH");
    c.addCallOutput("fc_1", '{"refused":"why"}');
    const body = c.body();
    expect(body).toMatchObject({
      model: "m",
      instructions: "brief",
      store: false,
      max_output_tokens: 512,
      tools: [{ type: "function", name: "humanish_ui", strict: false }],
    });
    expect((body.input as unknown[]).length).toBe(3);
    expect(JSON.stringify(body.input)).toContain('"image_url":"data:image/png;base64,iVBORw=="');
    expect(() => checkFunctionPairs([{ type: "function_call_output", call_id: "x" }])).toThrow("names no earlier function_call");
  });
});
