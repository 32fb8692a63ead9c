/**
 * The report of a many-seat study: the denominator first (with the harness failure named beside
 * it), the per-task funnel across seats, one row per seat, and a strip of each seat's
 * screenshots that enlarges without script. Written through the real bundle writer, verified,
 * and rendered in real headless Chromium; a hostile twin puts markup in every seat slot.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PNG } from "pngjs";
import { loadReportModel, renderReportHtml, writeReport } from "../../src/report/index.ts";
import { seatCost, seatOfPath } from "../../src/report/seats.ts";
import { renderInChromium, textOf } from "./chromium.ts";
import { HOSTILE, tempProject, writeStudyRun } from "./fixtures.ts";

const project = tempProject("humanish-report-seats-");
afterAll(() => project.cleanup());

/** The rows of the table with this id, each as its cells' visible text. */
function tableRows(dom: string, id: string): string[][] {
  const table = new RegExp(`<table[^>]*id="${id}"[\\s\\S]*?</table>`).exec(dom)?.[0] ?? "";
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(table)?.[1] ?? "";
  return [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((r) => [...r[1]!.matchAll(/<td[^>]*>([\s\S]*?)<\/td>/g)].map((c) => textOf(c[1]!).trim()));
}

/**
 * Every `<img>` tag is one of ours: only `src` (a data: PNG), `alt`, `width` and `height`
 * attributes. (Hostile text inside an escaped `alt` value is text, not an attribute.)
 */
function expectOnlyOwnImages(html: string): void {
  for (const tag of html.match(/<img\b[^>]*>/gi) ?? []) {
    const names = [...tag.slice(4).matchAll(/\s([a-z-]+)=("[^"]*"|'[^']*'|[^\s>]+)/gi)].map((m) => m[1]!.toLowerCase());
    expect(names.every((n) => ["src", "alt", "width", "height"].includes(n))).toBe(true);
    expect(tag.startsWith('<img src="data:image/png;base64,')).toBe(true);
  }
}

describe("seat helpers", () => {
  test("a screenshot path belongs to the seat it names; the longest id wins", () => {
    const ids = ["p1", "p10", "desktop-01"];
    expect(seatOfPath("screenshots/p1-turn-01.png", ids)).toBe("p1");
    expect(seatOfPath("screenshots/p10-turn-01.png", ids)).toBe("p10");
    expect(seatOfPath("seats/p10/screenshots/turn-01.png", ids)).toBe("p10");
    expect(seatOfPath("screenshots/desktop-01-turn-02.png", ids)).toBe("desktop-01");
    expect(seatOfPath("screenshots/turn-01.png", ids)).toBeUndefined();
    // A directory named like a seat prefix is not the seat.
    expect(seatOfPath("screenshots/p1-extra/turn.png", ids)).toBeUndefined();
  });

  test("a seat's cost: measured sum, unmeasured when nothing is measured, absent when no line names it", () => {
    const line = (participantId: string, usd: number | null) => ({
      kind: "model-tokens" as const,
      participantId,
      usd,
      basis: usd === null ? ("unmeasured" as const) : ("rate-table" as const),
      ratesAsOf: usd === null ? null : "2026-11-01",
      source: usd === null ? null : "table",
      reason: usd === null ? "no_token_usage" : null,
    });
    const lines = [line("a", 0.25), line("a", 0.5), line("b", null), line("c", 0.1), line("c", null)];
    expect(seatCost(lines, "a")).toEqual({ usd: 0.75, fullyMeasured: true });
    expect(seatCost(lines, "b")).toEqual({ usd: null, fullyMeasured: false });
    expect(seatCost(lines, "c")).toEqual({ usd: 0.1, fullyMeasured: false });
    expect(seatCost(lines, "d")).toBeUndefined();
  });
});

describe("many-seat report", () => {
  test("5 seats: denominator first, funnel in task order, one row per seat, a screenshot strip per seat", async () => {
    const runDir = await writeStudyRun(project.cwd);
    const model = await loadReportModel(runDir, { verify: null });
    expect(model.verdictLine).toBe("3/5 reached the goal (1 harness failure: not a finding); tasks: add-todo 4/5 · clear-completed 3/5");
    expect(model.participants.map((p) => p.screenshotCount)).toEqual([3, 2, 2, 1, 2]);
    // p5's unreferenced frame is attributed by its seat folder and comes last in its strip.
    expect(model.screenshots.filter((s) => s.participantId === "p5").map((s) => s.path)).toEqual(["screenshots/p5/turn-01.png", "screenshots/p5/turn-02.png"]);
    expect(model.study).toEqual({ lane: "local-guest", declaredSeats: 5, concurrency: 2, waves: 3, maxTotalUsd: 0, knownUsd: 0, heldSlots: 0 });

    const { path, verify } = await writeReport(runDir);
    expect(verify.ok).toBe(true);
    const r = await renderInChromium(path, { keepScreenshotAs: "humanish-report-5-seats.png" });
    const text = textOf(r.dom);

    // The denominator comes before every other section.
    const line = "3/5 reached the goal (1 harness failure: not a finding); tasks: add-todo 4/5 · clear-completed 3/5";
    expect(text).toContain(line);
    expect(text.indexOf(line)).toBeLessThan(text.indexOf("Seats ("));
    expect(text).toContain("Seats (3/5 reached the goal · 1 harness failure: not a finding)");
    expect(text).toContain("5 seats · concurrency 2 (3 waves) · lane local-guest · study cap $0.00");

    // Funnel: task order, seats passed, a bar per task.
    const funnel = [...r.dom.matchAll(/<table class="funnel">[\s\S]*?<\/table>/g)][0]![0];
    const frows = [...funnel.matchAll(/<tr><td>([^<]*)<\/td><td>[^<]*<\/td><td class="num">([^<]*)<\/td>/g)].map((m) => [m[1], m[2]]);
    expect(frows).toEqual([
      ["add-todo", "4/5"],
      ["clear-completed", "3/5"],
    ]);
    expect(funnel).toContain('<progress max="5" value="4">');
    expect(funnel).toContain('<progress max="5" value="3">');
    expect(text).toContain("how many of the 5 seats passed each task's hidden check");

    // One row per seat: id, persona · device, status, ending, tasks, time, cost, screenshots.
    const rows = tableRows(r.dom, "seats");
    expect(rows.length).toBe(5);
    expect(rows.map((c) => c[0])).toEqual(["p1", "p2", "p3", "p4", "p5"]);
    expect(rows[0]).toEqual(["p1", "newcomer-desktop desktop 320×200", "scripted-browser", "passed", "goal_satisfied", "2/2", "4.0 s", "$0.00", "3", "ok"]);
    expect(rows[1]![1]).toBe("newcomer-mobile mobile 120×260");
    expect(rows[2]!.slice(3, 6)).toEqual(["abandoned", "gave_up (finding)", "1/2"]);
    expect(rows[3]!.slice(3, 6)).toEqual(["failed seat failed in participate", "harness_error (harness failure: not a finding)", "0/2"]);
    expect(rows[3]![9]).toBe("the guest desktop stopped answering HUMANISH_SEAT_FAILED: the seat failed in participate");
    expect(rows[3]![7]).toBe("unmeasured");
    // No cost line names p5: unmeasured, never $0.
    expect(rows[4]![7]).toBe("unmeasured");
    expect(rows[4]![8]).toBe("2");

    // A strip per seat with its thumbnails in order; each thumbnail links to itself (CSS :target enlarges it).
    const strips = [...r.dom.matchAll(/<div class="strip" id="strip-(\d+)"><h3>([\s\S]*?)<\/h3>([\s\S]*?)<\/div><\/div>/g)];
    expect(strips.map((s) => textOf(s[2]!).trim())).toEqual([
      "p1 · desktop 320×200 3 screenshots",
      "p2 · mobile 120×260 2 screenshots",
      "p3 · desktop 320×200 2 screenshots",
      "p4 · mobile 120×260 1 screenshot",
      "p5 · desktop 320×200 2 screenshots",
    ]);
    const figures = [...r.dom.matchAll(/<figure class="thumb" id="(shot-\d+)"><a href="#(shot-\d+)">/g)];
    expect(figures.length).toBe(10);
    for (const f of figures) expect(f[1]).toBe(f[2]);
    expect(text).toContain("1. p1 after step 1");
    expect(text).toContain("3. p1 after step 3");
    // Each image is inlined once, as a data: URI.
    const srcs = [...readFileSync(path, "utf8").matchAll(/<img src="([^"]+)"/g)].map((m) => m[1]!);
    expect(srcs.length).toBe(10);
    for (const s of srcs) expect(s.startsWith("data:image/png;base64,")).toBe(true);
    const first = Buffer.from(srcs[0]!.slice("data:image/png;base64,".length).replace(/\s/g, ""), "base64");
    expect(first.equals(readFileSync(join(runDir, "screenshots/p1/turn-01.png")))).toBe(true);

    // Thumbnails are CSS-scaled to a strip height: the page is no taller for a 5-seat study than a few strips.
    const page = PNG.sync.read(Buffer.from(r.screenshot));
    expect(page.width).toBe(1280);
  }, 180_000);

  test("following a thumbnail's link shows it full size over the page, with no script", async () => {
    const runDir = await writeStudyRun(project.cwd, { runId: "study-5-enlarge" });
    const { path } = await writeReport(runDir);
    const dark = (png: PNG, x: number, y: number) => {
      const i = (y * png.width + x) * 4;
      return png.data[i]! < 60 && png.data[i + 1]! < 60 && png.data[i + 2]! < 60;
    };
    const plain = PNG.sync.read(
      Buffer.from((await renderInChromium(path, { width: 1280, height: 800, keepScreenshotAs: "humanish-report-strip.png" })).screenshot),
    );
    const opened = PNG.sync.read(
      Buffer.from(
        (await renderInChromium(path, { width: 1280, height: 800, fragment: "shot-1", keepScreenshotAs: "humanish-report-strip-enlarged.png" })).screenshot,
      ),
    );
    // The page's corner is white; with #shot-1 targeted the dark overlay covers the viewport.
    expect(dark(plain, 4, 4)).toBe(false);
    expect(dark(opened, 4, 4)).toBe(true);
    expect(dark(opened, 1275, 795)).toBe(true);
    // The enlarged frame (320×200 at natural size) shows its own colours in the middle of the viewport.
    const shot = PNG.sync.read(readFileSync(join(runDir, "screenshots/p1/turn-01.png")));
    const want = [shot.data[0]!, shot.data[1]!, shot.data[2]!];
    let found = false;
    for (let i = 0; i < opened.data.length && !found; i += 4) {
      if (Math.abs(opened.data[i]! - want[0]!) <= 3 && Math.abs(opened.data[i + 1]! - want[1]!) <= 3 && Math.abs(opened.data[i + 2]! - want[2]!) <= 3)
        found = true;
    }
    expect(found).toBe(true);
  }, 180_000);

  test("hostile seat text renders as text: ids, reasons, personas, devices, captions and goals", async () => {
    const runDir = await writeStudyRun(project.cwd, { hostile: true });
    const { path, verify } = await writeReport(runDir);
    expect(verify.ok).toBe(true);
    const html = readFileSync(path, "utf8");
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/<h1 id="injected"/);
    expectOnlyOwnImages(html);
    expect(html).not.toMatch(/\sstyle=/i);
    const r = await renderInChromium(path, { keepScreenshotAs: "humanish-report-5-seats-hostile.png" });
    expect(r.dom).not.toMatch(/<script/i);
    expect(r.dom).not.toMatch(/<h1 id="injected"/);
    expectOnlyOwnImages(r.dom);
    const text = textOf(r.dom);
    // The sixth seat (id = markup) is a row like any other, its id shown as text.
    const rows = tableRows(r.dom, "seats");
    expect(rows.length).toBe(6);
    expect(rows[5]![0]).toBe(HOSTILE.replace(/\s+/g, " "));
    expect(text).toContain(`newcomer-desktop${HOSTILE}`.replace(/\s+/g, " "));
    expect(text).toContain(`p1 after step 1${HOSTILE}`.replace(/\s+/g, " "));
    expect(text).toContain(`Add a todo${HOSTILE}`.replace(/\s+/g, " "));
    expect(text).toContain("3/6 reached the goal (1 harness failure: not a finding)");
    // The seat the budget never started is a finding, not a failure, and says so.
    expect(rows[5]!.slice(3, 5)).toEqual(["incomplete seat budget_reached", "budget_reached (not started: the study budget was spent; not a failure)"]);
  }, 180_000);

  test("renderReportHtml of a hostile many-seat model escapes every seat field", () => {
    const shot = { path: HOSTILE, caption: HOSTILE, png: new Uint8Array([1, 2, 3]), participantId: HOSTILE };
    const html = renderReportHtml({
      runId: "r",
      route: "browser",
      mode: "live",
      verdict: "fail",
      verdictLine: HOSTILE,
      reached: 0,
      total: 2,
      harnessFailed: 1,
      gaps: [],
      participants: [
        {
          id: HOSTILE,
          persona: HOSTILE,
          device: HOSTILE,
          status: HOSTILE,
          completionReason: HOSTILE,
          reason: HOSTILE,
          category: "harness",
          tasksPassed: 0,
          tasksTotal: 1,
          cost: { usd: null, fullyMeasured: false },
          screenshotCount: 1,
        },
        { id: "p2", status: "abandoned", completionReason: "gave_up", category: "finding" },
      ],
      tasks: [{ id: HOSTILE, goal: HOSTILE, passed: 0, total: 2, status: "failed" }],
      timeline: [],
      transcript: null,
      screenshots: [shot, { ...shot, participantId: undefined }],
      cost: [],
      costTotal: { usd: null, fullyMeasured: false },
      cleanup: [],
      warnings: [],
      verify: null,
      generatedAt: "2026-12-01T00:00:00.000Z",
    });
    expect(html).not.toContain("<script");
    expect(html).not.toContain('id="injected"');
    expectOnlyOwnImages(html);
    expect(html).toContain("Seats (0/2 reached the goal · 1 harness failure: not a finding)");
    expect(html).toContain("other screenshots");
  });
});
