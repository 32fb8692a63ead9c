import { describe, expect, test } from "bun:test";
import { type BrowserAction, isBrowserControlError } from "../../src/browser-control/index.ts";
import { MAX_WHEEL_STEPS, planAction } from "../../src/guest/executor.ts";

const G = { width: 1440, height: 950 };

function refusal(action: BrowserAction, armed = false): string {
  try {
    planAction(action, G, armed);
  } catch (e) {
    if (isBrowserControlError(e)) return `${e.errorCode}/${e.disposition}`;
    throw e;
  }
  return "planned";
}

describe("action planning: everything validated before the first input", () => {
  test("click, double click, move map to fixed xdotool commands", () => {
    expect(planAction({ kind: "click", x: 10.4, y: 20.6 }, G, false)).toEqual([
      { kind: "xdotool", args: ["mousemove", "10", "21"] },
      { kind: "xdotool", args: ["click", "1"] },
    ]);
    expect(planAction({ kind: "click", x: 1439.7, y: 1, button: "right" }, G, false)[0]).toEqual({ kind: "xdotool", args: ["mousemove", "1439", "1"] });
    expect(planAction({ kind: "double_click", x: 5, y: 5 }, G, false)[1]).toEqual({ kind: "xdotool", args: ["click", "--repeat", "2", "--delay", "100", "1"] });
    expect(planAction({ kind: "move", x: 0, y: 0 }, G, false)).toEqual([{ kind: "xdotool", args: ["mousemove", "0", "0"] }]);
  });

  test("points off the screen are refused", () => {
    for (const a of [
      { kind: "click", x: -1, y: 0 },
      { kind: "click", x: 1440, y: 0 },
      { kind: "move", x: 0, y: 950 },
    ] as BrowserAction[]) {
      expect(refusal(a)).toBe("action_rejected/not_dispatched");
    }
  });

  test("scroll: ceil(|d|/120) wheel steps, at most 100 in total", () => {
    const steps = planAction({ kind: "scroll", x: 100, y: 100, dx: -130, dy: 360 }, G, false);
    expect(steps.map((s) => (s.kind === "xdotool" ? s.args.join(" ") : s.kind))).toEqual([
      "mousemove 100 100",
      "click 6",
      "click 6",
      "click 5",
      "click 5",
      "click 5",
    ]);
    expect(planAction({ kind: "scroll", x: 1, y: 1, dx: 0, dy: 0 }, G, false)).toEqual([]);
    expect(refusal({ kind: "scroll", x: 1, y: 1, dx: 0, dy: 120 * MAX_WHEEL_STEPS })).toBe("planned");
    expect(refusal({ kind: "scroll", x: 1, y: 1, dx: 1, dy: 120 * MAX_WHEEL_STEPS })).toBe("action_rejected/not_dispatched");
  });

  test("drag: the whole path is checked first; one bad point refuses the drag", () => {
    const path = Array.from({ length: 50 }, (_, i) => ({ x: i * 10, y: 100 }));
    expect(planAction({ kind: "drag", path }, G, false)).toHaveLength(52);
    expect(refusal({ kind: "drag", path: [...path, { x: 2000, y: 100 }] })).toBe("action_rejected/not_dispatched");
    expect(refusal({ kind: "drag", path: [{ x: 1, y: 1 }] })).toBe("action_rejected/not_dispatched");
  });

  test("type: content text unless armed by Ctrl+L; armed text must be printable ASCII", () => {
    expect(planAction({ kind: "type", text: "héllo ✓" }, G, false)).toEqual([{ kind: "content_text", text: "héllo ✓" }]);
    expect(planAction({ kind: "type", text: "http://127.0.0.1:1/x" }, G, true)).toEqual([{ kind: "chrome_text", text: "http://127.0.0.1:1/x" }]);
    expect(refusal({ kind: "type", text: "héllo" }, true)).toBe("action_rejected/not_dispatched");
    expect(refusal({ kind: "type", text: "a\nb" }, true)).toBe("action_rejected/not_dispatched");
    expect(refusal({ kind: "type", text: "" })).toBe("action_rejected/not_dispatched");
    expect(refusal({ kind: "type", text: "a\u0000b" })).toBe("action_rejected/not_dispatched");
  });

  test("keypress goes through the closed table; wait and screenshot dispatch nothing native", () => {
    expect(planAction({ kind: "keypress", keys: ["ctrl", "l"] }, G, false)).toEqual([{ kind: "xdotool", args: ["key", "--clearmodifiers", "ctrl+l"] }]);
    expect(refusal({ kind: "keypress", keys: ["Hyper_L"] })).toBe("action_rejected/not_dispatched");
    expect(planAction({ kind: "wait" }, G, false)).toEqual([{ kind: "sleep", ms: 250 }]);
    expect(planAction({ kind: "screenshot" }, G, false)).toEqual([]);
  });
});
