import { describe, expect, test } from "bun:test";
import { createProgressDisplay, formatElapsed, sanitizeProgressText, seatStateOf, summaryLine } from "../../src/cli/progress.ts";
import { waitUntil } from "../support/wait.ts";

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
    // Third draw moves up over the three lines it drew before (two seats and the summary).
    const third = s.chunks[2]!;
    expect(third.startsWith("\u001b[3A")).toBe(true);
    expect(third).toContain("0/2 seats done · 2 running");
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
    const rendered = s.chunks.length;
    // Nothing but the clock updates the display now: more chunks are ticks.
    await waitUntil(() => s.chunks.length > rendered + 1, "two ticks of the clock");
    d.done();
    const after = s.chunks.length;
    await Bun.sleep(60);
    expect(s.chunks.length).toBe(after);
  });

  test("many seats: a summary line under the seat lines counts done, running, waiting and reached so far", () => {
    let t = 0;
    const s = sink(120);
    const d = createProgressDisplay({ stream: s.stream, isTTY: true, now: () => t, tickMs: 0 });
    for (const id of ["p1", "p2", "p3", "p4"]) d.update({ participant: id, phase: "waiting" });
    d.update({ participant: "p1", phase: "participate", detail: "step 1/3" });
    d.update({ participant: "p2", phase: "allocate" });
    t += 4000;
    // A runner may say how a seat ended on its done event; tasks alone are not the goal.
    d.update({ participant: "p1", phase: "done", tasksPassed: 2, tasksTotal: 2, completionReason: "goal_satisfied" } as never);
    d.update({ participant: "p2", phase: "done", tasksPassed: 1, tasksTotal: 2, status: "abandoned" } as never);
    d.update({ participant: "p3", phase: "a-phase-nobody-knows\u001b[2J" });
    d.done();
    const last = s.chunks.at(-1)!;
    const lines = last.split("\n").filter(Boolean);
    // Four seat lines and the summary last.
    expect(lines.length).toBe(5);
    expect(lines[4]).toContain("2/4 seats done · 1 running · 1 waiting · 1/2 reached the goal so far");
    // An unknown phase is shown as plain text on its seat's line and counts as running.
    expect(lines[2]).toContain("p3  a-phase-nobody-knows");
    expect(last).not.toContain("\u001b[2J");
  });

  test("non-TTY: the summary is appended as a `study` line only when its counts change", () => {
    const s = sink();
    const d = createProgressDisplay({ stream: s.stream, isTTY: false, now: () => 0 });
    d.update({ participant: "p1", phase: "participate" });
    d.update({ participant: "p2", phase: "waiting" });
    d.update({ participant: "p2", phase: "waiting", detail: "slot 2 of 1" });
    d.update({ participant: "p1", phase: "done", status: "passed" } as never);
    d.done();
    const lines = s.text().split("\n").filter(Boolean);
    expect(lines).toEqual([
      "p1  participate  0:00",
      "p2  waiting  0:00",
      "study  0/2 seats done · 1 running · 1 waiting",
      "p2  waiting  0:00  slot 2 of 1",
      "p1  done  0:00",
      "study  1/2 seats done · 1 waiting · 1/1 reached the goal so far",
    ]);
  });

  test("summary rules: one seat has none; tasks stand in only while no ending is known", () => {
    expect(summaryLine([{ phase: "participate", reachedGoal: undefined }])).toBeNull();
    expect(
      summaryLine([
        { phase: "done", reachedGoal: undefined, tasksPassed: 1, tasksTotal: 2 },
        { phase: "check", reachedGoal: undefined, tasksPassed: 2, tasksTotal: 2 },
      ]),
    ).toBe("1/2 seats done · 1 running · tasks 3/4 passed so far");
    expect(seatStateOf("queued")).toBe("waiting");
    // The study runner says a seat waits for its capacity slot in the allocate phase's detail.
    expect(seatStateOf("allocate", "waiting for a capacity slot")).toBe("waiting");
    expect(seatStateOf("allocate", "creating sandbox")).toBe("running");
    expect(seatStateOf("done", "waiting")).toBe("done");
    expect(seatStateOf("teardown")).toBe("running");
    expect(seatStateOf("done")).toBe("done");
  });
});
