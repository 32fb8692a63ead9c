/** Evidence selection (pure): stable ids, tiers, bounds, and the omitted list that accounts for every item. */
import { afterAll, describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PNG } from "pngjs";
import { downscalePng, fitInside } from "../../src/analysis/downscale.ts";
import { SELECTION_LIMITS, selectEvidence, selectionDigest, spreadOrder } from "../../src/analysis/select.ts";
import { attemptsView, loadVerifiedBundle } from "../../src/analysis/store.ts";
import { pngSize } from "../../src/models/admission.ts";
import { tempProject, writeStudyRun, writeTerminalRun } from "../report/fixtures.ts";
import { makePng } from "../support/png.ts";

const proj = tempProject("humanish-analysis-select-");
afterAll(() => proj.cleanup());
const study = writeStudyRun(proj.cwd).then((d) => loadVerifiedBundle(d));
const terminal = writeTerminalRun(proj.cwd).then((d) => loadVerifiedBundle(d));

describe("selectEvidence", () => {
  test("every seat's status and check results come first, with stable ids, and the same bundle gives the same packet", async () => {
    const view = await study;
    const a = selectEvidence(view);
    const ids = a.items.map((i) => i.ref.id);
    expect(ids.slice(0, 6)).toEqual(["run/summary", "p1/status", "p2/status", "p3/status", "p4/status", "p5/status"]);
    for (const p of ["p1", "p2", "p3", "p4", "p5"]) {
      expect(ids).toContain(`${p}/status`);
      expect(ids).toContain(`${p}/task/add-todo`);
    }
    // p4's harness failure is the harness's record, not an observation about the product.
    expect(a.items.find((i) => i.ref.id === "p4/status")?.ref.basis).toBe("harness");
    expect(a.items.find((i) => i.ref.id === "p3/task/clear-completed")?.text).toContain("failed");
    // p5's last frame is claimed by its folder, not its trace.
    expect(ids).toContain("p5/screenshot/0002");
    expect(a.omitted).toEqual([]);
    const b = selectEvidence(view);
    expect(selectionDigest(b)).toBe(selectionDigest(a));
  });

  test("what does not fit is listed with the bound it hit, and every candidate is accounted for", async () => {
    const view = await study;
    const all = selectEvidence(view);
    const tight = selectEvidence(view, { ...SELECTION_LIMITS, maxImages: 3, maxTextBytes: 5000 });
    expect(tight.images).toBe(3);
    expect(tight.textBytes).toBeLessThanOrEqual(5000);
    const seen = [...tight.items.map((i) => i.ref.id), ...tight.omitted.map((o) => o.id)].sort();
    expect(seen).toEqual(all.items.map((i) => i.ref.id).sort());
    expect(new Set(tight.omitted.map((o) => o.reason))).toEqual(new Set(["image_budget", "text_budget"]));
    // Images are spread over seats, endings first: three different seats' last frames.
    const shots = tight.items.filter((i) => i.ref.kind === "screenshot").map((i) => i.ref.participantId);
    expect(new Set(shots).size).toBe(3);
  });

  test("participants beyond the bound are listed, not dropped", async () => {
    const view = await study;
    const sel = selectEvidence(view, { ...SELECTION_LIMITS, maxParticipants: 2 });
    expect(sel.items.some((i) => i.ref.participantId === "p3")).toBe(false);
    expect(sel.omitted.filter((o) => o.participantId === "p3").every((o) => o.reason === "participant_budget")).toBe(true);
    expect(sel.omitted.some((o) => o.id === "p3/status")).toBe(true);
  });

  test("screenshots are not held: a selected one is read again and must be the bytes verify checked", async () => {
    const dir = await writeStudyRun(proj.cwd, { runId: "select-changed" });
    const view = await loadVerifiedBundle(dir);
    expect([...view.files.keys()].some((p) => p.endsWith(".png"))).toBe(false);
    const shots = view.bundle.artifacts.filter((a) => a.kind === "screenshot");
    expect([...(view.images?.sizes.keys() ?? [])].sort()).toEqual(shots.map((a) => a.path).sort());
    const before = selectEvidence(view);
    expect(before.images).toBeGreaterThan(0);
    // Changed after verify: the analysis is refused, never sent with other bytes or without the frame.
    const target = join(dir, shots[0]!.path);
    const bytes = readFileSync(target);
    bytes[bytes.length - 20]! ^= 0x01;
    writeFileSync(target, bytes);
    let code = "";
    try {
      selectEvidence(view);
    } catch (e) {
      code = (e as { code?: string }).code ?? "";
    }
    expect(code).toBe("HUMANISH_ANALYSIS_BUNDLE_UNVERIFIED");
  });

  test("after selection only the run record and the analysis files are kept", async () => {
    const view = await study;
    const analysis = new TextEncoder().encode("{}");
    const narrowed = attemptsView({ ...view, files: new Map([...view.files, ["analysis/0001/analysis.json", analysis]]) });
    expect(narrowed.bundle).toBe(view.bundle);
    expect([...narrowed.files.keys()]).toEqual(["analysis/0001/analysis.json"]);
    expect(narrowed.images).toBeUndefined();
    expect(view.files.size).toBeGreaterThan(1);
  });

  test("a terminal transcript is cut into numbered windows", async () => {
    const view = await terminal;
    const sel = selectEvidence(view, { ...SELECTION_LIMITS, transcriptWindowLines: 2 });
    const windows = sel.items.filter((i) => i.ref.kind === "transcript");
    expect(windows.map((w) => w.ref.id)).toEqual(["p1/transcript#L5-L5", "p1/transcript#L1-L2", "p1/transcript#L3-L4"]);
    expect(windows[1]!.ref.source).toEqual({ path: "terminal-transcript.txt", lines: [1, 2] });
    expect(windows[1]!.text).toContain("    1| $ jq --help");
  });

  test("spreadOrder covers every index once, middle first", () => {
    expect(spreadOrder(0)).toEqual([]);
    expect(spreadOrder(1)).toEqual([0]);
    expect(spreadOrder(7)).toEqual([3, 1, 5, 0, 2, 4, 6]);
    for (let n = 0; n < 40; n++) expect(spreadOrder(n).sort((a, b) => a - b)).toEqual([...Array(n).keys()]);
  });
});

describe("downscalePng", () => {
  test("fits the box, keeps the aspect, never upscales, averages colour", () => {
    const big = downscalePng(makePng(1440, 950, { seed: 1, fill: "bands" }), 1024, 768);
    expect([big.width, big.height, big.originalWidth, big.originalHeight]).toEqual([1024, 676, 1440, 950]);
    expect(pngSize(big.png)).toEqual({ width: 1024, height: 676 });
    const small = downscalePng(makePng(120, 260, { seed: 2, fill: "bands" }), 1024, 768);
    expect([small.width, small.height]).toEqual([120, 260]);
    expect(fitInside(4000, 10, 1024, 768)).toEqual({ width: 1024, height: 3 });
    // A 2×2 black/white checker becomes one grey pixel.
    const png = new PNG({ width: 2, height: 2 });
    png.data.set([0, 0, 0, 255, 255, 255, 255, 255, 255, 255, 255, 255, 0, 0, 0, 255]);
    const one = downscalePng(new Uint8Array(PNG.sync.write(png)), 1, 1);
    const px = PNG.sync.read(Buffer.from(one.png)).data;
    expect([px[0], px[1], px[2]]).toEqual([128, 128, 128]);
    // A transparent pixel reads as the page background (white), not black.
    const clear = new PNG({ width: 1, height: 1 });
    clear.data.set([0, 0, 0, 0]);
    const white = PNG.sync.read(Buffer.from(downscalePng(new Uint8Array(PNG.sync.write(clear)), 4, 4).png)).data;
    expect([white[0], white[1], white[2], white[3]]).toEqual([255, 255, 255, 255]);
    expect(() => downscalePng(new Uint8Array([1, 2, 3]), 10, 10)).toThrow();
  });
});
