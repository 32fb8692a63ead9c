/**
 * The E2B desktop executor's dispatch rules over a recording shell (the two calls it makes of
 * the sandbox): refusals send nothing and keep the session; authority withdrawn before the first
 * input sends nothing; a failed input ends the session as outcome-uncertain; a drag that failed
 * with the button down gets one mouseup (never after revocation); a frame that fails the PNG gate
 * or has the wrong size ends the session; the capture command is fixed tokens only.
 */
import { describe, expect, test } from "bun:test";
import { isBrowserControlError } from "../../../src/browser-control/index.ts";
import { createE2BDesktopExecutor, type DesktopShell } from "../../../src/lanes/e2b-desktop/executor.ts";
import { e2bDesktopConcurrency } from "../../../src/routes/browser/e2b-desktop.ts";
import { makePng } from "../../support/png.ts";

const PATHS = { dir: "/tmp/humanish-x", socket: "/tmp/humanish-x/facts.sock", factsPy: "/tmp/humanish-x/facts.py" };

function shell(o: { failOn?: RegExp; frame?: Uint8Array; facts?: string } = {}): DesktopShell & { cmds: string[] } {
  const cmds: string[] = [];
  return {
    cmds,
    async run(cmd) {
      cmds.push(cmd);
      if (o.failOn?.test(cmd)) throw new Error("exit 1");
      return { stdout: cmd.startsWith("scrot") ? (o.facts ?? "") : "" };
    },
    async read() {
      return o.frame ?? makePng(64, 48, { fill: "flat", seed: 200 });
    },
  };
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    if (isBrowserControlError(e)) return `${e.errorCode}/${e.disposition}`;
    throw e;
  }
  return "ok";
}

describe("E2B desktop executor", () => {
  test("a refusal sends nothing and the session goes on", async () => {
    const sh = shell();
    const ex = createE2BDesktopExecutor({ shell: sh, paths: PATHS, width: 64, height: 48 });
    expect(await codeOf(ex.execute({ kind: "keypress", keys: ["HYPER"] }))).toBe("action_rejected/not_dispatched");
    expect(await codeOf(ex.execute({ kind: "click", x: 64, y: 1 }))).toBe("action_rejected/not_dispatched");
    expect(sh.cmds).toEqual([]);
    expect(ex.terminal).toBe(false);
    await ex.execute({ kind: "click", x: 0, y: 0 });
    expect(sh.cmds).toEqual(["xdotool mousemove --sync 0 0 click 1"]);
    expect(ex.dispatchedCount).toBe(1);
  });

  test("typed text reaches the shell single-quoted after --", async () => {
    const sh = shell();
    const ex = createE2BDesktopExecutor({ shell: sh, paths: PATHS, width: 64, height: 48 });
    await ex.execute({ kind: "type", text: "it's $(id)" });
    expect(sh.cmds).toEqual([`xdotool type --clearmodifiers --delay 12 -- 'it'\\''s $(id)'`]);
  });

  test("authority withdrawn before the first input: nothing sent, not dispatched", async () => {
    const sh = shell();
    const ex = createE2BDesktopExecutor({ shell: sh, paths: PATHS, width: 64, height: 48 });
    const ac = new AbortController();
    ac.abort();
    expect(await codeOf(ex.execute({ kind: "click", x: 1, y: 1 }, ac.signal))).toBe("session_revoked/not_dispatched");
    expect(sh.cmds).toEqual([]);
  });

  test("a failed input is outcome-uncertain and ends the session; a held button is let go once", async () => {
    const sh = shell({ failOn: /mousedown/ });
    const ex = createE2BDesktopExecutor({ shell: sh, paths: PATHS, width: 64, height: 48 });
    expect(
      await codeOf(
        ex.execute({
          kind: "drag",
          path: [
            { x: 1, y: 1 },
            { x: 9, y: 9 },
          ],
        }),
      ),
    ).toBe("execution_failed/outcome_uncertain");
    expect(sh.cmds.at(-1)).toBe("xdotool mouseup 1");
    expect(ex.terminal).toBe(true);
    expect(await codeOf(ex.execute({ kind: "click", x: 1, y: 1 }))).toBe("executor_closed/not_dispatched");
  });

  test("observe: fixed capture command, the PNG gate, the geometry, the facts", async () => {
    const facts = '{"ok":true,"facts":{"pages":1,"url":"http://127.0.0.1:4173/","title":"T","text":"2 items left","scrollY":0}}\n';
    const sh = shell({ facts });
    const ex = createE2BDesktopExecutor({ shell: sh, paths: PATHS, width: 64, height: 48 });
    const obs = await ex.observe();
    expect(sh.cmds).toEqual([
      "scrot --overwrite --pointer /tmp/humanish-x/frame.png && { python3 -I /tmp/humanish-x/facts.py /tmp/humanish-x/facts.sock || true; }",
    ]);
    expect(obs).toMatchObject({ url: "http://127.0.0.1:4173/", title: "T", text: "2 items left", scrollY: 0 });
    expect(obs.stateSignature).toHaveLength(1025);
    const wrong = createE2BDesktopExecutor({ shell: shell({ frame: makePng(32, 32, { fill: "flat", seed: 200 }) }), paths: PATHS, width: 64, height: 48 });
    expect(await codeOf(wrong.observe())).toBe("invalid_response/not_dispatched");
    expect(wrong.terminal).toBe(true);
    const junk = createE2BDesktopExecutor({ shell: shell({ frame: new TextEncoder().encode("not a png") }), paths: PATHS, width: 64, height: 48 });
    expect(await codeOf(junk.observe())).toBe("invalid_response/not_dispatched");
  });
});

/** A shell whose page probe answers from `probes` in turn (the last one repeats). */
function probingShell(probes: { timeOrigin: number; readyState?: string; focused: boolean }[]): DesktopShell & { cmds: string[] } {
  const cmds: string[] = [];
  let i = 0;
  return {
    cmds,
    async run(cmd) {
      cmds.push(cmd);
      if (!cmd.includes(" probe")) return { stdout: "" };
      const p = probes[Math.min(i++, probes.length - 1)]!;
      return { stdout: `${JSON.stringify({ ok: true, facts: { pages: 1, readyState: "complete", ...p } })}\n` };
    },
    async read() {
      return makePng(64, 48, { fill: "flat", seed: 200 });
    },
  };
}

const PROBE = "python3 -I /tmp/humanish-x/facts.py /tmp/humanish-x/facts.sock probe || true";

describe("E2B desktop executor and the address bar", () => {
  test("Ctrl+L is acknowledged once the page gave up the keyboard; the Enter after the URL once the new page loaded and holds it", async () => {
    const sh = probingShell([
      { timeOrigin: 1, focused: true }, // Ctrl+L not yet handled: the page still has the keyboard
      { timeOrigin: 1, focused: false }, // the address bar has it
      { timeOrigin: 1, focused: false }, // before the Enter: the document it replaces
      { timeOrigin: 1, focused: false }, // the navigation is in flight
      { timeOrigin: 2, readyState: "loading", focused: false },
      { timeOrigin: 2, focused: true },
    ]);
    const ex = createE2BDesktopExecutor({ shell: sh, paths: PATHS, width: 64, height: 48 });
    await ex.execute({ kind: "keypress", keys: ["ctrl", "l"] });
    expect(sh.cmds).toEqual(["xdotool key --clearmodifiers Control_L+l", PROBE, PROBE]);
    await ex.execute({ kind: "type", text: "http://127.0.0.1:4173/b" });
    expect(sh.cmds).toHaveLength(4);
    await ex.execute({ kind: "keypress", keys: ["Enter"] });
    expect(sh.cmds.slice(4)).toEqual([PROBE, "xdotool key --clearmodifiers Return", PROBE, PROBE, PROBE]);
    // An Enter that submits nothing typed in the address bar is not waited on.
    await ex.execute({ kind: "keypress", keys: ["Enter"] });
    expect(sh.cmds.slice(9)).toEqual(["xdotool key --clearmodifiers Return"]);
    expect(ex.terminal).toBe(false);
  });

  test("a Ctrl+L the page never gives the keyboard up for ends the session as outcome-uncertain: the URL is never typed into the page", async () => {
    const sh = probingShell([{ timeOrigin: 1, focused: true }]);
    const ex = createE2BDesktopExecutor({ shell: sh, paths: PATHS, width: 64, height: 48 });
    expect(await codeOf(ex.execute({ kind: "keypress", keys: ["ctrl", "l"] }))).toBe("action_rejected/outcome_uncertain");
    expect(ex.terminal).toBe(true);
    expect(sh.cmds.filter((c) => c.startsWith("xdotool"))).toEqual(["xdotool key --clearmodifiers Control_L+l"]);
    expect(await codeOf(ex.execute({ kind: "type", text: "http://127.0.0.1:4173/b" }))).toBe("executor_closed/not_dispatched");
  }, 30_000);
});

describe("E2B desktop concurrency", () => {
  test("up to 16 seats at once; the lab and HUMANISH_MAX_CONCURRENCY can only lower it", () => {
    expect(e2bDesktopConcurrency(16, undefined, {}).concurrency).toBe(16);
    const many = e2bDesktopConcurrency(20, undefined, {});
    expect(many.concurrency).toBe(16);
    expect(many.warnings[0]?.code).toBe("HUMANISH_STUDY_WAVES");
    expect(e2bDesktopConcurrency(16, 3, {}).concurrency).toBe(3);
    expect(e2bDesktopConcurrency(16, undefined, { HUMANISH_MAX_CONCURRENCY: "2" }).concurrency).toBe(2);
    expect(e2bDesktopConcurrency(1, 16, {}).concurrency).toBe(1);
  });
});
