import { describe, expect, test } from "bun:test";
import { isBrowserControlError } from "../../src/browser-control/index.ts";
import { keysymFor, xdotoolChord } from "../../src/guest/keys.ts";

function refusal(f: () => unknown): { code: string; disposition: string } {
  try {
    f();
  } catch (e) {
    if (isBrowserControlError(e)) return { code: e.errorCode, disposition: e.disposition };
    throw e;
  }
  throw new Error("expected a refusal");
}

describe("closed key table", () => {
  test("maps every documented name, case-insensitively", () => {
    const table: [string, string][] = [
      ["a", "a"],
      ["Z", "z"],
      ["7", "7"],
      ["f1", "F1"],
      ["F12", "F12"],
      ["Ctrl", "ctrl"],
      ["CONTROL", "ctrl"],
      ["alt", "alt"],
      ["Shift", "shift"],
      ["meta", "super"],
      ["SUPER", "super"],
      ["cmd", "super"],
      ["Enter", "Return"],
      ["return", "Return"],
      ["Tab", "Tab"],
      ["esc", "Escape"],
      ["Escape", "Escape"],
      ["space", "space"],
      [" ", "space"],
      ["Backspace", "BackSpace"],
      ["Delete", "Delete"],
      ["Insert", "Insert"],
      ["Home", "Home"],
      ["End", "End"],
      ["PageUp", "Prior"],
      ["PAGEDOWN", "Next"],
      ["ArrowUp", "Up"],
      ["up", "Up"],
      ["ArrowDown", "Down"],
      ["left", "Left"],
      ["ArrowRight", "Right"],
      ["+", "plus"],
      ["-", "minus"],
      ["=", "equal"],
      [",", "comma"],
      [".", "period"],
      ["/", "slash"],
      ["\\", "backslash"],
      [";", "semicolon"],
      ["'", "apostrophe"],
      ["[", "bracketleft"],
      ["]", "bracketright"],
      ["`", "grave"],
    ];
    for (const [name, sym] of table) expect(keysymFor(name)).toBe(sym);
  });

  test("chords join with + and keep order", () => {
    expect(xdotoolChord(["ctrl", "l"])).toBe("ctrl+l");
    expect(xdotoolChord(["Ctrl", "Shift", "Tab"])).toBe("ctrl+shift+Tab");
  });

  test("anything outside the table is refused before dispatch", () => {
    for (const bad of ["F13", "ctrl+l", "Return;id", "é", "", "aa", "Hyper", "KP_Enter", "--window", "0x41", "toString", "__proto__"]) {
      expect(refusal(() => xdotoolChord([bad]))).toEqual({ code: "action_rejected", disposition: "not_dispatched" });
    }
  });

  test("a repeated key (after mapping) is refused", () => {
    expect(refusal(() => xdotoolChord(["ctrl", "control"]))).toEqual({ code: "action_rejected", disposition: "not_dispatched" });
    expect(refusal(() => xdotoolChord([]))).toEqual({ code: "action_rejected", disposition: "not_dispatched" });
  });
});
