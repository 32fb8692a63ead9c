/**
 * The E2B desktop lane's pure parts: the closed key table (every name the computer-use actor can
 * produce has a real X keysym; anything else is refused before input), action → argv planning
 * (a move before every click, our own multi-point drag, bounded scrolls, text as one argv element
 * after `--`), the shell quoting that carries that argv through `bash -c` unchanged (checked
 * against a real bash), the release proof rule, the app placement and the cost estimate.
 */
import { describe, expect, test } from "bun:test";
import { isBrowserControlError } from "../../../src/browser-control/index.ts";
import { keysymFor } from "../../../src/guest/host-guest.ts";
import { BROWSER_KEY_NAMES } from "../../../src/lab/schema-browser.ts";
import { parseFacts } from "../../../src/lanes/e2b-desktop/chromium.ts";
import { desktopTimeLine, e2bChord, e2bKeysym, placeApp, planDesktopAction, releaseVerdict, shellCommand } from "../../../src/lanes/e2b-desktop/index.ts";

const SCREEN = { width: 1440, height: 950 };

function refused(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    if (isBrowserControlError(e)) return `${e.errorCode}/${e.disposition}`;
    throw e;
  }
  throw new Error("expected a refusal");
}

/** What bash hands a program for `cmd`: its argv, NUL-separated by printf. */
function bashArgv(cmd: string): string[] {
  const r = Bun.spawnSync(["bash", "-c", `printf '%s\\0' ${cmd}`]);
  expect(r.exitCode).toBe(0);
  const out = new TextDecoder().decode(r.stdout);
  return out.split("\0").slice(0, -1);
}

describe("closed key table", () => {
  test("every key name a lab may use maps to a keysym in the guest's table and here", () => {
    const names = [..."abcdefghijklmnopqrstuvwxyz0123456789", ...BROWSER_KEY_NAMES];
    for (const n of names) {
      expect(keysymFor(n)).toBeDefined();
      expect(e2bKeysym(n)).toBeDefined();
      expect(e2bKeysym(n.toLowerCase())).toBe(e2bKeysym(n)!);
    }
    expect(e2bKeysym("ctrl")).toBe("Control_L");
    expect(e2bKeysym("Enter")).toBe("Return");
    expect(e2bKeysym("PageDown")).toBe("Next");
    expect(e2bChord(["CTRL", "L"])).toBe("Control_L+l");
    expect(e2bChord(["shift", "Tab"])).toBe("Shift_L+Tab");
  });

  test("unknown, empty and repeated keys are refused before any input", () => {
    // The SDK's press() would pass these to xdotool, which silently ignores them.
    for (const k of [["CAPSLOCK"], ["Caps_Lock"], ["F13"], ["ctrl+l"], ["Return;rm"], ["Ä"]])
      expect(refused(() => e2bChord(k))).toBe("action_rejected/not_dispatched");
    expect(refused(() => e2bChord([]))).toBe("action_rejected/not_dispatched");
    expect(refused(() => e2bChord(["ctrl", "CONTROL"]))).toBe("action_rejected/not_dispatched");
    expect(refused(() => planDesktopAction({ kind: "keypress", keys: ["HYPER"] }, SCREEN))).toBe("action_rejected/not_dispatched");
  });
});

describe("action planning", () => {
  const argvOf = (a: Parameters<typeof planDesktopAction>[0]) => planDesktopAction(a, SCREEN).map((s) => (s.kind === "run" ? s.argv : [`sleep ${s.ms}`]));

  test("every click moves first — also at coordinate 0, which the SDK's helpers skip", () => {
    expect(argvOf({ kind: "click", x: 0, y: 0 })).toEqual([["xdotool", "mousemove", "--sync", "0", "0", "click", "1"]]);
    expect(argvOf({ kind: "click", x: 10.4, y: 949.9, button: "right" })).toEqual([["xdotool", "mousemove", "--sync", "10", "949", "click", "3"]]);
    expect(argvOf({ kind: "click", x: 5, y: 5, button: "middle" })[0]!.at(-1)).toBe("2");
    expect(argvOf({ kind: "double_click", x: 0, y: 7 })).toEqual([
      ["xdotool", "mousemove", "--sync", "0", "7", "click", "--repeat", "2", "--delay", "100", "1"],
    ]);
    expect(argvOf({ kind: "move", x: 3, y: 4 })).toEqual([["xdotool", "mousemove", "--sync", "3", "4"]]);
  });

  test("points off the screen are refused", () => {
    for (const a of [
      { kind: "click" as const, x: 1440, y: 0 },
      { kind: "click" as const, x: -1, y: 0 },
      { kind: "move" as const, x: 0, y: 950 },
      {
        kind: "drag" as const,
        path: [
          { x: 1, y: 1 },
          { x: 2000, y: 1 },
        ],
      },
    ])
      expect(refused(() => planDesktopAction(a, SCREEN))).toBe("action_rejected/not_dispatched");
  });

  test("a multi-point drag walks every point between one mousedown and one mouseup", () => {
    const steps = planDesktopAction(
      {
        kind: "drag",
        path: [
          { x: 1, y: 2 },
          { x: 3, y: 4 },
          { x: 5, y: 6 },
        ],
      },
      SCREEN,
    );
    expect(steps).toEqual([
      {
        kind: "run",
        argv: ["xdotool", "mousemove", "--sync", "1", "2", "mousedown", "1", "mousemove", "--sync", "3", "4", "mousemove", "--sync", "5", "6", "mouseup", "1"],
        holdsMouse: true,
      },
    ]);
    expect(refused(() => planDesktopAction({ kind: "drag", path: [{ x: 1, y: 2 }] }, SCREEN))).toBe("action_rejected/not_dispatched");
  });

  test("scrolls: wheel steps of 120 px, at most 100, none for a zero delta", () => {
    expect(argvOf({ kind: "scroll", x: 10, y: 20, dx: 0, dy: 360 })).toEqual([["xdotool", "mousemove", "--sync", "10", "20", "click", "--repeat", "3", "5"]]);
    expect(argvOf({ kind: "scroll", x: 10, y: 20, dx: -130, dy: -1 })).toEqual([
      ["xdotool", "mousemove", "--sync", "10", "20", "click", "--repeat", "2", "6", "click", "--repeat", "1", "4"],
    ]);
    expect(argvOf({ kind: "scroll", x: 10, y: 20, dx: 0, dy: 0 })).toEqual([]);
    expect(refused(() => planDesktopAction({ kind: "scroll", x: 1, y: 1, dx: 0, dy: 120 * 101 }, SCREEN))).toBe("action_rejected/not_dispatched");
  });

  test("typed text is one argv element after --, and bash hands it to xdotool unchanged", () => {
    const hostile = [
      "Buy milk",
      "it's $(rm -rf ~) `id` $HOME ; echo pwned && true || false",
      "--delay 0 -- \"quoted\" 'single' \\back\\slash",
      "line one\nline two\ttabbed",
      "émoji 🙂 ünïcödé",
      "*?[a-z]{1,2} ~user !!",
    ];
    for (const text of hostile) {
      const steps = planDesktopAction({ kind: "type", text }, SCREEN);
      expect(steps.length).toBe(1);
      const argv = (steps[0] as { argv: string[] }).argv;
      expect(argv.slice(0, -1)).toEqual(["xdotool", "type", "--clearmodifiers", "--delay", "12", "--"]);
      expect(argv.at(-1)).toBe(text);
      expect(bashArgv(shellCommand(argv))).toEqual(argv);
    }
    for (const text of ["", "a\u0000b", "x".repeat(65_537)])
      expect(refused(() => planDesktopAction({ kind: "type", text }, SCREEN))).toBe("action_rejected/not_dispatched");
  });

  test("wait and screenshot send no input", () => {
    expect(planDesktopAction({ kind: "wait" }, SCREEN)).toEqual([{ kind: "sleep", ms: 250 }]);
    expect(planDesktopAction({ kind: "wait", ms: 40 }, SCREEN)).toEqual([{ kind: "sleep", ms: 40 }]);
    expect(planDesktopAction({ kind: "screenshot" }, SCREEN)).toEqual([]);
  });
});

describe("release proof (the rule both E2B lanes share)", () => {
  test("released only on a kill that answered + getInfo not-found; a 404 kill is released with a warning", () => {
    expect(releaseVerdict({ kind: "value", value: true }, { kind: "not-found" })).toEqual({
      outcome: "released",
      reason: "kill answered true; getInfo answered not found",
    });
    const gone = releaseVerdict({ kind: "value", value: false }, { kind: "not-found" });
    expect(gone.outcome).toBe("released");
    expect(gone.warning).toContain("end time is unknown");
  });

  test("anything else is unconfirmed, a 404 kill whose lookup failed included", () => {
    expect(releaseVerdict({ kind: "value", value: false }, { kind: "error", message: "x" }).outcome).toBe("unconfirmed");
    expect(releaseVerdict({ kind: "value", value: true }, { kind: "value", value: { state: "running" } }).reason).toContain(
      "still finds the sandbox (running)",
    );
    expect(releaseVerdict({ kind: "value", value: false }, { kind: "value", value: { state: "running" } }).outcome).toBe("unconfirmed");
    expect(releaseVerdict({ kind: "value", value: true }, { kind: "error", message: "500" }).outcome).toBe("unconfirmed");
    expect(releaseVerdict({ kind: "value", value: true }, { kind: "deadline", ms: 10 }).outcome).toBe("unconfirmed");
    expect(releaseVerdict({ kind: "deadline", ms: 10 }, { kind: "not-found" }).outcome).toBe("unconfirmed");
    expect(releaseVerdict({ kind: "error", message: "401" }, { kind: "not-found" }).reason).toContain("kill failed (401)");
  });
});

describe("app placement", () => {
  const code = (fn: () => unknown) => {
    try {
      fn();
    } catch (e) {
      return (e as { code?: string; next?: string }).code;
    }
    return "accepted";
  };
  test("a public https URL, or a served static app on the desktop's own loopback", () => {
    expect(placeApp("https://demo.todomvc.com/examples/vanillajs/", undefined).kind).toBe("public");
    const served = placeApp("http://127.0.0.1:4173/", { static: { root: "embedded:todomvc-vanillajs" } });
    expect(served).toMatchObject({ kind: "served", root: "embedded:todomvc-vanillajs" });
  });
  test("a loopback URL of this machine is refused with the way out", () => {
    try {
      placeApp("http://127.0.0.1:4173/", undefined);
      throw new Error("accepted");
    } catch (e) {
      const h = e as { code: string; message: string; next: string };
      expect(h.code).toBe("HUMANISH_E2B_DESKTOP_APP_UNREACHABLE");
      expect(h.message).toContain("cannot reach it");
      expect(h.next).toContain("public https://");
      expect(h.next).toContain("serve.static");
    }
    for (const [u, s] of [
      ["http://localhost:4173/", { command: "npm start" }],
      ["http://example.com/", undefined],
      ["https://10.0.0.5/", undefined],
      ["https://192.168.1.2/", undefined],
      ["https://printer.local/", undefined],
      ["https://intranet/", undefined],
      ["https://[::1]/", undefined],
      ["https://example.com/", { static: { root: "dist" } }],
    ] as const)
      expect(code(() => placeApp(u, s))).toBe("HUMANISH_E2B_DESKTOP_APP_UNREACHABLE");
  });
});

describe("page facts and cost", () => {
  test("facts: the sole page's, other tabs, or nothing", () => {
    expect(parseFacts('{"ok":true,"facts":{"pages":1,"url":"http://127.0.0.1:4173/","title":"t","text":"2 items left","scrollY":12.4}}\n')).toEqual({
      url: "http://127.0.0.1:4173/",
      title: "t",
      text: "2 items left",
      scrollY: 12,
    });
    expect(parseFacts('{"ok":true,"facts":{"pages":2}}')).toBe("other-tabs");
    for (const bad of [
      "",
      "{",
      '{"ok":false}',
      '{"ok":true,"facts":{"pages":1}}',
      `{"ok":true,"facts":{"pages":1,"url":"u","title":"t","text":"${"x".repeat(70_000)}"}}`,
    ])
      expect(parseFacts(bad)).toBeUndefined();
  });

  test("desktop time: an estimate over create → confirmed release, unmeasured otherwise", () => {
    const line = desktopTimeLine({ participantId: "p1", acquiredAt: 0, releasedAt: 60_000, resources: { cpuCount: 2, memoryMB: 2048 }, released: true });
    expect(line.basis).toBe("rate-table");
    expect(line.usd).toBeCloseTo(60 * (2 * 0.000014 + 2 * 0.0000045), 6);
    expect(line.count).toBe(1);
    const unreleased = desktopTimeLine({ participantId: "p1", acquiredAt: 0, releasedAt: 1, resources: { cpuCount: 2, memoryMB: 2048 }, released: false });
    expect(unreleased).toMatchObject({ kind: "desktop-minutes", usd: null });
    expect(unreleased.reason).toStartWith("desktop_release_unconfirmed");
    expect(desktopTimeLine({ participantId: "p1", acquiredAt: 0, releasedAt: 1, resources: undefined, released: true }).reason).toBe(
      "desktop_resources_unknown",
    );
    expect(desktopTimeLine({ participantId: "p1", acquiredAt: undefined, releasedAt: undefined, resources: undefined, released: true }).usd).toBe(0);
  });
});
