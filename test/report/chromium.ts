/**
 * Renders an HTML file in real headless Debian Chromium for the report tests: `--dump-dom` for
 * text assertions and `--screenshot` for a PNG a person can look at.
 *
 * Chromium refuses to run as root with its sandbox on, and our rules forbid turning the sandbox
 * off, so when the tests run as root Chromium is started as `nobody` through `setpriv`, with a
 * fresh profile in a directory that user owns. The page is copied there first (a report is one
 * self-contained file, so the copy is the whole report).
 */
import { chmodSync, copyFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { requireBinary, requireChromium } from "../support/prereq.ts";

/** What one rendering produced. */
export interface Rendered {
  /** The serialised DOM after load (`--dump-dom`). */
  dom: string;
  /** PNG bytes of the full window (`--screenshot`). */
  screenshot: Uint8Array;
  /** Where the screenshot was kept (for a person to view). */
  screenshotPath: string;
}

function asUser(): string[] {
  if (process.getuid?.() !== 0) return [];
  const setpriv = requireBinary("setpriv", "util-linux");
  return [setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"];
}

async function run(cmd: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  const p = Bun.spawn(cmd, { stdin: "ignore", stdout: "pipe", stderr: "pipe", env });
  const timer = setTimeout(() => p.kill("SIGKILL"), 60_000);
  const [stdout, stderr, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

/**
 * Renders `htmlPath` (copied into a private temp dir) at `width`×`height` CSS pixels, scrolled to
 * `#fragment` when one is given (what following an in-page link shows).
 * `keepScreenshotAs` names a file under the OS temp dir that keeps the screenshot after cleanup.
 */
export async function renderInChromium(
  htmlPath: string,
  opts: { width?: number; height?: number; keepScreenshotAs: string; fragment?: string },
): Promise<Rendered> {
  const chromium = requireChromium();
  const dir = mkdtempSync(join(tmpdir(), "humanish-chromium-"));
  chmodSync(dir, 0o777);
  try {
    const page = join(dir, "index.html");
    copyFileSync(htmlPath, page);
    chmodSync(page, 0o644);
    const env = { HOME: dir, PATH: process.env.PATH ?? "/usr/bin:/bin", LANG: "C.UTF-8" };
    const common = [
      ...asUser(),
      chromium,
      "--headless",
      "--disable-gpu",
      "--no-first-run",
      "--hide-scrollbars",
      `--user-data-dir=${join(dir, "profile")}`,
      `--window-size=${opts.width ?? 1280},${opts.height ?? 2400}`,
    ];
    const url = `file://${page}${opts.fragment ? `#${opts.fragment}` : ""}`;
    const dump = await run([...common, "--dump-dom", url], env);
    if (dump.code !== 0 || !dump.stdout.includes("<html")) throw new Error(`chromium --dump-dom failed (${dump.code}): ${dump.stderr.slice(-2000)}`);
    const shot = join(dir, "shot.png");
    const s = await run([...common, `--screenshot=${shot}`, url], env);
    if (s.code !== 0) throw new Error(`chromium --screenshot failed (${s.code}): ${s.stderr.slice(-2000)}`);
    const screenshot = new Uint8Array(readFileSync(shot));
    const keep = join(tmpdir(), opts.keepScreenshotAs);
    copyFileSync(shot, keep);
    return { dom: dump.stdout, screenshot, screenshotPath: keep };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Visible text of a DOM dumped by {@link renderInChromium}: `<style>` blocks and tags dropped
 * (each tag becomes a space), the entities `&lt; &gt; &quot; &#39; &amp;` decoded, white space
 * runs folded to one space.
 */
export function textOf(dom: string): string {
  return dom
    .replace(/<style[\s\S]*?<\/style>/g, "")
    .replace(/<[^>]+>/g, " ")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ");
}
