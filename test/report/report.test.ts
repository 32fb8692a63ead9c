import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PNG } from "pngjs";
import { RunBundleSchema, verifyRun } from "../../src/bundle/index.ts";
import { isHumanishError } from "../../src/errors.ts";
import { escapeHtml, loadReportModel, REPORT_CSP, type ReportModel, renderReportHtml, writeReport } from "../../src/report/index.ts";
import { renderInChromium, textOf } from "./chromium.ts";
import { HOSTILE, tempProject, writeBrowserRun, writeDryRun, writeTerminalRun } from "./fixtures.ts";

const project = tempProject();
afterAll(() => project.cleanup());

function runJson(runDir: string) {
  return RunBundleSchema.parse(JSON.parse(readFileSync(join(runDir, "run.json"), "utf8")));
}

function hostileModel(): ReportModel {
  return {
    runId: HOSTILE,
    labId: HOSTILE,
    labTitle: HOSTILE,
    route: "terminal",
    mode: HOSTILE,
    createdAt: HOSTILE,
    verdict: HOSTILE,
    verdictLine: HOSTILE,
    reached: 0,
    total: 1,
    summary: HOSTILE,
    gaps: [HOSTILE],
    participants: [{ id: HOSTILE, actorType: HOSTILE, model: HOSTILE, status: HOSTILE, completionReason: HOSTILE, reason: HOSTILE }],
    tasks: [{ id: HOSTILE, goal: HOSTILE, passed: 0, total: 1, status: HOSTILE, detail: HOSTILE }],
    timeline: [{ at: HOSTILE, kind: HOSTILE, title: HOSTILE, detail: HOSTILE, exitCode: 1, problem: true }],
    transcript: HOSTILE,
    screenshots: [],
    cost: [{ label: HOSTILE, usd: null, ratesAsOf: HOSTILE, source: HOSTILE, note: HOSTILE }],
    costTotal: { usd: null, fullyMeasured: false },
    cleanup: [{ resource: HOSTILE, id: HOSTILE, outcome: HOSTILE, reason: HOSTILE }],
    warnings: [{ code: HOSTILE, message: HOSTILE }],
    verify: { ok: false, shareSafety: HOSTILE, shareReasons: [{ code: HOSTILE, message: HOSTILE }], checks: [{ name: HOSTILE, ok: false, message: HOSTILE }] },
    generatedAt: HOSTILE,
  };
}

describe("renderReportHtml", () => {
  test("every field is escaped: a hostile value in every slot yields no markup", () => {
    const html = renderReportHtml(hostileModel());
    expect(html).not.toContain("<script");
    expect(html).not.toContain("<img");
    expect(html).not.toContain('id="injected"');
    expect(html).not.toContain("</pre><h1");
    // The text is there, escaped.
    expect(html).toContain(escapeHtml(HOSTILE));
  });

  test("self-contained: strict CSP whose style hash matches the one style block, no external URL", () => {
    const html = renderReportHtml(hostileModel());
    expect(html.startsWith("<!doctype html>")).toBe(true);
    expect(html).toContain(`http-equiv="Content-Security-Policy" content="${escapeHtml(REPORT_CSP)}"`);
    expect(REPORT_CSP).toContain("default-src 'none'");
    expect(REPORT_CSP).not.toContain("script-src");
    expect(REPORT_CSP).not.toContain("unsafe");
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1]!;
    const hash = createHash("sha256").update(style, "utf8").digest("base64");
    expect(REPORT_CSP).toContain(`'sha256-${hash}'`);
    expect(html).not.toMatch(/(src|href)\s*=\s*"(https?:)?\/\//i);
    expect(html).not.toMatch(/<(script|link|iframe|object|embed)\b/i);
    expect(html).not.toMatch(/\sstyle=/i);
  });

  test("terminal escape sequences are dropped and other control characters made visible", () => {
    const m = hostileModel();
    m.transcript = "a\u001b[31mred\u001b[0m b\u001b]0;title\u0007c\rd\u0000e\u001bf";
    const html = renderReportHtml(m);
    expect(html).toContain("ared bc\nd\uFFFDe^[f");
  });
});

describe("writeReport on real bundles, rendered in headless Chromium", () => {
  test("terminal run: verdict, funnel and transcript shown; hostile output is text; report listed and verified", async () => {
    const runDir = await writeTerminalRun(project.cwd);
    const { path, verify } = await writeReport(runDir);
    expect(path).toBe(join(runDir, "report", "index.html"));
    const bundle = runJson(runDir);
    const entry = bundle.artifacts.find((a) => a.path === "report/index.html");
    expect(entry?.kind).toBe("report");
    const bytes = readFileSync(path);
    expect(entry?.sha256).toBe(createHash("sha256").update(bytes).digest("hex"));
    expect(verify.ok).toBe(true);
    expect(verify.shareSafety.status).toBe("share_ready");

    const r = await renderInChromium(path, { keepScreenshotAs: "humanish-report-terminal.png" });
    const text = textOf(r.dom);
    expect(text).toContain("pass");
    expect(text).toContain("1/1 reached the goal; tasks: extract-name 1/1 · count-tags 0/1");
    expect(r.dom).toContain('id="funnel"');
    expect(text).toContain("extract-name");
    expect(text).toContain("count-tags");
    expect(r.dom).toMatch(/<progress max="1" value="1">/);
    expect(r.dom).toContain('id="transcript"');
    expect(text).toContain("$ jq --help");
    expect(text).toContain("unmeasured");
    expect(text).toContain("2026-11-01");
    expect(text).toContain("released");
    expect(text).toContain("share_ready");
    // The hostile transcript rendered as text: its characters are on the page, none became markup.
    expect(text).toContain(HOSTILE);
    expect(r.dom).not.toMatch(/<h1 id="injected"/);
    expect(r.dom).not.toMatch(/<img[^>]+onerror/i);
    expect(r.dom).not.toMatch(/<script/i);
    expect(r.dom).toMatch(/<title>humanish report · First contact with jq<\/title>/);
    const png = PNG.sync.read(Buffer.from(r.screenshot));
    expect(png.width).toBe(1280);
    expect(png.height).toBe(2400);
  }, 120_000);

  test("dry run: contract-only verdict with its denominator and the task funnel", async () => {
    const runDir = await writeDryRun(project.cwd);
    const { path, verify } = await writeReport(runDir);
    expect(verify.ok).toBe(true);
    const r = await renderInChromium(path, { keepScreenshotAs: "humanish-report-dry-run.png" });
    const text = textOf(r.dom);
    expect(text).toContain("contract_proof_only");
    expect(text).toContain("dry run (contract only): 0/1 participants ran; tasks: extract-name 0/1 · count-tags 0/1");
    expect(text).toContain("live route not executed (dry run: contract only)");
    expect(text).toContain("No terminal transcript was written");
    expect(text).toContain("No resources were allocated.");
    expect(r.dom).toContain('id="funnel"');
    expect(r.screenshot.length).toBeGreaterThan(10_000);
  }, 120_000);

  test("browser run: screenshots inlined as data: URIs, in order, and the page loads them", async () => {
    const runDir = await writeBrowserRun(project.cwd);
    const { path, verify } = await writeReport(runDir);
    expect(verify.ok).toBe(true);
    const html = readFileSync(path, "utf8");
    const srcs = [...html.matchAll(/<img src="([^"]+)"/g)].map((m) => m[1]!);
    expect(srcs.length).toBe(2);
    for (const s of srcs) expect(s.startsWith("data:image/png;base64,")).toBe(true);
    // The inlined bytes are exactly the screenshot files, first turn first.
    const decoded = srcs.map((s) => Buffer.from(s.slice("data:image/png;base64,".length).replace(/\s/g, ""), "base64"));
    expect(decoded[0]!.equals(readFileSync(join(runDir, "screenshots/p1/turn-01.png")))).toBe(true);
    expect(decoded[1]!.equals(readFileSync(join(runDir, "screenshots/p1/turn-02.png")))).toBe(true);
    const r = await renderInChromium(path, { keepScreenshotAs: "humanish-report-browser.png" });
    expect(textOf(r.dom)).toContain("1. after open");
    expect(textOf(r.dom)).toContain("2. after typing");
    // The first screenshot's band colours appear in Chromium's screenshot of the page.
    const page = PNG.sync.read(Buffer.from(r.screenshot));
    const shot = PNG.sync.read(decoded[0]!);
    const target = [shot.data[0]!, shot.data[1]!, shot.data[2]!];
    let found = false;
    for (let i = 0; i < page.data.length && !found; i += 4) {
      if (Math.abs(page.data[i]! - target[0]!) <= 3 && Math.abs(page.data[i + 1]! - target[1]!) <= 3 && Math.abs(page.data[i + 2]! - target[2]!) <= 3)
        found = true;
    }
    expect(found).toBe(true);
  }, 120_000);

  test("writing the report again replaces it and the bundle still verifies", async () => {
    const runDir = await writeTerminalRun(project.cwd, "terminal-run-twice");
    await writeReport(runDir);
    const second = await writeReport(runDir);
    expect(second.verify.ok).toBe(true);
    expect(runJson(runDir).artifacts.filter((a) => a.kind === "report").length).toBe(1);
  });
});

describe("refusals", () => {
  test("a symlinked transcript is refused, never followed", async () => {
    const runDir = await writeTerminalRun(project.cwd, "terminal-symlink");
    const outside = join(project.cwd, "outside.txt");
    writeFileSync(outside, "SECRET OUTSIDE THE RUN");
    rmSync(join(runDir, "terminal-transcript.txt"));
    symlinkSync(outside, join(runDir, "terminal-transcript.txt"));
    let err: unknown;
    try {
      await loadReportModel(runDir, { verify: null });
    } catch (e) {
      err = e;
    }
    expect(isHumanishError(err, "HUMANISH_INVALID_RUN_BUNDLE")).toBe(true);
    expect((err as Error).message).toContain("terminal-transcript.txt");
    expect((await verifyRun(runDir)).ok).toBe(false);
  });

  test("a missing run.json is HUMANISH_RUN_NOT_FOUND", async () => {
    let err: unknown;
    try {
      await loadReportModel(join(project.cwd, ".humanish", "runs", "nope"), { verify: null });
    } catch (e) {
      err = e;
    }
    expect(isHumanishError(err, "HUMANISH_RUN_NOT_FOUND")).toBe(true);
  });

  test("a report directory outside .humanish/runs is refused", async () => {
    let err: unknown;
    try {
      await writeReport(project.cwd);
    } catch (e) {
      err = e;
    }
    expect(isHumanishError(err, "HUMANISH_RUN_NOT_FOUND")).toBe(true);
  });
});
