import { describe, expect, test } from "bun:test";
import { createProgressDisplay, formatElapsed, sanitizeProgressText } from "../../src/cli/progress.ts";

function sink(columns?: number) {
  const chunks: string[] = [];
  return { chunks, stream: { write: (s: string) => chunks.push(s), columns }, text: () => chunks.join("") };
}

describe("progress display", () => {
  test("non-TTY appends one plain line per visible change, with elapsed and tasks", () => {
    let t = 1_000_000;
    const s = sink();
    const d = createProgressDisplay({ stream: s.stream, isTTY: false, now: () => t });
    d.update({ participant: "p1", phase: "allocate" });
    t += 2_000;
    d.update({ participant: "p1", phase: "participate", detail: "jq --help" });
    d.update({ participant: "p1", phase: "participate", detail: "jq --help" }); // no change → no line
    t += 63_000;
    d.update({ participant: "p1", phase: "check", tasksPassed: 2, tasksTotal: 3 });
    d.done();
    const lines = s.text().split("\n").filter(Boolean);
    expect(lines).toEqual(["p1  allocate  0:00", "p1  participate  0:02  jq --help", "p1  check  1:05  tasks 2/3"]);
    expect(s.text()).not.toContain("\u001b");
  });

  test("TTY redraws the block in place, one line per participant", () => {
    let t = 0;
    const s = sink(80);
    const d = createProgressDisplay({ stream: s.stream, isTTY: true, now: () => t, tickMs: 0 });
    d.update({ participant: "p1", phase: "participate", detail: "open /" });
    d.update({ participant: "p2", phase: "provision" });
    t += 5000;
    d.update({ participant: "p1", phase: "check", tasksPassed: 1, tasksTotal: 1 });
    d.done();
    // Third draw moves up over the two lines it drew before.
    const third = s.chunks[2]!;
    expect(third.startsWith("\u001b[2A")).toBe(true);
    expect(third).toContain("p1  check  0:05  tasks 1/1");
    expect(third).toContain("p2  provision  0:05");
    d.update({ participant: "p1", phase: "late" });
    expect(s.text()).not.toContain("late");
  });

  test("participant text cannot inject terminal escapes and long lines are clipped", () => {
    const s = sink(40);
    const d = createProgressDisplay({ stream: s.stream, isTTY: false, now: () => 0 });
    d.update({ participant: "p1\u001b[31m", phase: "participate", detail: "echo \u001b]0;owned\u0007hi\r\u001b[2Jx".repeat(5) });
    d.done();
    const out = s.text();
    expect(out.replace(/\n/g, "")).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    const line = out.split("\n")[0]!;
    expect(Array.from(line).length).toBeLessThanOrEqual(39);
    expect(line.endsWith("…")).toBe(true);
  });

  test("lone ESC, BEL, C1 and bidi controls are shown escaped, never passed through", () => {
    const out = sanitizeProgressText("a\u001b b\u0007 c\u009b31m d\u202e e\u007f");
    expect(out).toBe("a\\x1b b\\x07 c\\x9b31m d\\u{202e} e\\x7f");
    expect(out).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202e]/);
  });

  test("helpers", () => {
    expect(formatElapsed(0)).toBe("0:00");
    expect(formatElapsed(59_999)).toBe("0:59");
    expect(formatElapsed(3_600_000 + 61_000)).toBe("1:01:01");
    expect(sanitizeProgressText("a\u001b[1;31mb\tc")).toBe("a b c");
  });

  test("TTY tick keeps the clock moving and done() stops it", async () => {
    const s = sink(80);
    const d = createProgressDisplay({ stream: s.stream, isTTY: true, tickMs: 20 });
    d.update({ participant: "p1", phase: "participate" });
    await Bun.sleep(90);
    const ticks = s.chunks.length;
    expect(ticks).toBeGreaterThan(1);
    d.done();
    const after = s.chunks.length;
    await Bun.sleep(60);
    expect(s.chunks.length).toBe(after);
  });
});
