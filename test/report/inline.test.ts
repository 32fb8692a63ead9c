import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { verifyRun } from "../../src/bundle/index.ts";
import { renderReportHtml } from "../../src/report/html.ts";
import { startLibraryServer, writeReport } from "../../src/report/index.ts";
import { chooseInlined, spreadOrder } from "../../src/report/inline.ts";
import { loadReportModel } from "../../src/report/load.ts";
import { tempProject, writeBrowserRun } from "./fixtures.ts";

describe("which screenshots the report inlines", () => {
  test("a strip keeps its first, its last, then the midpoints", () => {
    expect(spreadOrder(0)).toEqual([]);
    expect(spreadOrder(1)).toEqual([0]);
    expect(spreadOrder(2)).toEqual([0, 1]);
    expect(spreadOrder(9)).toEqual([0, 8, 4, 2, 6, 1, 3, 5, 7]);
    for (const n of [3, 10, 17, 100]) expect([...spreadOrder(n)].sort((a, b) => a - b)).toEqual([...Array(n).keys()]);
  });

  test("everything when it fits; past the budget seats share it and nothing exceeds it", () => {
    const small = [1, 2, 3].map((i) => ({ path: `a/${i}.png`, bytes: 10, participantId: "p1" }));
    expect(chooseInlined(small, 30).size).toBe(3);
    const shots = ["p1", "p2"].flatMap((p) => [...Array(10).keys()].map((i) => ({ path: `${p}/${i}.png`, bytes: 100, participantId: p })));
    const chosen = chooseInlined(shots, 650);
    expect(chosen.size).toBe(6);
    // Each seat got its first and last frame and one midpoint: turns alternate between seats.
    for (const p of ["p1", "p2"]) for (const i of [0, 9, 4]) expect(chosen.has(`${p}/${i}.png`)).toBe(true);
    // A frame that alone exceeds what is left is skipped, a smaller one after it still fits.
    const mixed = [
      { path: "x/0.png", bytes: 50 },
      { path: "x/1.png", bytes: 500 },
      { path: "x/2.png", bytes: 40 },
    ];
    expect([...chooseInlined(mixed, 100)].sort()).toEqual(["x/0.png", "x/2.png"]);
  });
});

describe("a report past its inline budget (real bundle, real server)", () => {
  const project = tempProject("humanish-inline-");
  afterAll(() => project.cleanup());

  test("inlines within the budget, links the rest, and the server serves exactly the listed frames", async () => {
    const runDir = await writeBrowserRun(project.cwd, "big-run", { extraNoiseShots: 5 });
    const v = await verifyRun(runDir);
    expect(v.ok).toBe(true);
    // 150 KB: the two small frames and some of the five ~58 KB noise frames fit, not all.
    const budget = 150_000;
    const model = await loadReportModel(runDir, { verify: v, inlineBudgetBytes: budget });
    expect(model.screenshots).toHaveLength(7);
    const inlined = model.screenshots.filter((s) => s.png);
    expect(inlined.reduce((n, s) => n + s.png!.byteLength, 0)).toBeLessThanOrEqual(budget);
    const linked = model.screenshots.filter((s) => !s.png);
    expect(linked.length).toBeGreaterThan(0);
    const html = renderReportHtml(model);
    expect(html.split('<img src="data:image/png;base64,').length - 1).toBe(inlined.length);
    for (const s of linked) expect(html).toContain(`href="../${s.path}"`);
    expect(html).toContain(`${linked.length} linked`);

    await writeReport(runDir, { verified: v, inlineBudgetBytes: budget });
    const server = await startLibraryServer({ cwd: project.cwd });
    try {
      const page = await (await fetch(`${server.url}runs/big-run/`)).text();
      const target = linked[0]!.path;
      expect(page).toContain(`href="/runs/big-run/${target}"`);
      expect(page).not.toContain('href="../');
      const shot = await fetch(`${server.url}runs/big-run/${target}`);
      expect(shot.status).toBe(200);
      expect(shot.headers.get("content-type")).toBe("image/png");
      expect(new Uint8Array(await shot.arrayBuffer())).toEqual(new Uint8Array(readFileSync(join(runDir, target))));
      // Nothing but a listed screenshot is served from the bundle.
      expect((await fetch(`${server.url}runs/big-run/run.json`)).status).toBe(404);
      expect((await fetch(`${server.url}runs/big-run/screenshots/p1/nosuch.png`)).status).toBe(404);
      // A frame changed after the seal: the bundle no longer verifies, and nothing of it is served.
      writeFileSync(join(runDir, target), readFileSync(join(runDir, "screenshots/p1/turn-01.png")));
      expect((await fetch(`${server.url}runs/big-run/${target}`)).status).toBe(409);
    } finally {
      await server.stop();
    }
  });
});
