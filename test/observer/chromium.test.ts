/**
 * The Observer in real headless Debian Chromium: a live 3-seat browser study (the embedded
 * `todomvc-first-run-seats`, each seat in its own sandboxed guest) runs with `--watch`; a page
 * on the printed URL, driven over CDP (`--remote-debugging-pipe`, Chromium's sandbox kept: as
 * root it runs as `nobody`), must show every seat's frames advancing, and after the run a link
 * to the report, which `humanish watch` of the same run serves.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { openCdpPage } from "../support/cdp-page.ts";

const ROOT = resolve(import.meta.dir, "../..");
const BUN = join(ROOT, "node_modules/.bin/bun");
const MAIN = join(ROOT, "src/cli/main.ts");
const cleanups: (() => void)[] = [];
const openPage = (url: string) => openCdpPage(url, cleanups);
afterAll(() => {
  for (const c of cleanups.reverse()) c();
});

/** What the page shows of each seat right now. */
const SEATS_JS = `!document.getElementById("study") ? "null" : JSON.stringify({
  seats: [...document.querySelectorAll("section.seat")].map((s) => ({ id: s.dataset.seat, shown: s.dataset.shownFrame || null, phase: s.dataset.phase })),
  state: document.getElementById("study").dataset.state || null,
  report: document.getElementById("report").className === "ready" ? document.getElementById("report-link").getAttribute("href") : null,
})`;

describe("observer in Chromium", () => {
  test("a 3-seat browser study: every seat's frames advance in the page; after the run, a link to the report", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "humanish-observer-study-"));
    cleanups.push(() => rmSync(cwd, { recursive: true, force: true }));
    const study = Bun.spawn(["timeout", "900", BUN, MAIN, "lab", "run", "todomvc-first-run-seats", "--live", "--watch", "--json"], {
      cwd,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      env: process.env,
    });
    cleanups.push(() => study.kill("SIGTERM")); // TERM reaches the study through `timeout`; a KILL would orphan it
    const stderr = study.stderr.getReader();
    let err = "";
    let url: string | undefined;
    while (!url) {
      const { value, done } = await stderr.read();
      if (done) throw new Error(`lab run ended before printing the observer URL: ${err}`);
      err += new TextDecoder().decode(value);
      url = /observer at (http:\/\/127\.0\.0\.1:\d+\/)/.exec(err)?.[1];
    }
    const page = await openPage(url);
    const seen = new Map<string, Set<string>>();
    let last: { seats: { id: string; shown: string | null }[]; state: string | null; report: string | null } | undefined;
    const stdout = new Response(study.stdout).text();
    let exited = false;
    void study.exited.then(() => (exited = true));
    // Sample the DOM until the page says the run is over with its report link (or the study exits).
    while (!exited) {
      const v = JSON.parse((await page.evaluate<string>(SEATS_JS)) ?? "null");
      if (!v) {
        await Bun.sleep(150);
        continue;
      }
      last = v;
      for (const s of last!.seats) if (s.shown) (seen.get(s.id) ?? seen.set(s.id, new Set()).get(s.id)!).add(s.shown);
      if (last!.report) break;
      await Bun.sleep(150);
    }
    const result = JSON.parse(await stdout) as { ok: boolean; runId: string; watchUrl: string; participants: unknown[] };
    expect(result.watchUrl).toBe(url);
    expect(result.participants.length).toBe(3);
    expect([...seen.keys()].sort()).toEqual(["desk-a", "desk-b", "tablet"]);
    // Each seat's screen advanced: the page showed at least two of its frames, one after another.
    for (const [, frames] of seen) expect(frames.size).toBeGreaterThanOrEqual(2);
    expect(last!.state).toBe("finished");
    expect(last!.report).toBe("/report");

    // The same run, watched from another process: the page and its report link are served.
    const watch = Bun.spawn(["timeout", "300", BUN, MAIN, "watch", result.runId, "--json"], {
      cwd,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      env: process.env,
    });
    cleanups.push(() => watch.kill("SIGTERM"));
    const first = await watch.stdout.getReader().read();
    const watchUrl = (JSON.parse(new TextDecoder().decode(first.value)) as { watchUrl: string }).watchUrl;
    await page.navigate(watchUrl);
    for (;;) {
      const v = JSON.parse((await page.evaluate<string>(SEATS_JS)) ?? "null") as { report: string | null; seats: unknown[] } | null;
      if (v?.report && v.seats.length === 3) break;
      await Bun.sleep(150);
    }
    const report = await page.evaluate<string>(`fetch("/report").then(async (r) => r.status + " " + (await r.text()).includes("reached the goal"))`);
    expect(report).toBe("200 true");
    watch.kill("SIGINT");
    await watch.exited;
  }, 900_000);
});
