/**
 * The `/web` page in real headless Chromium: it opens its own WebSocket session, runs a command
 * in a real Docker sandbox and shows the output; a final answer shows the episode's reward.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { type Browser, launchChromium } from "./cdp.ts";
import { inspectStatus, startTestServer, type TestServer } from "./support.ts";

setDefaultTimeout(120_000);
let t: TestServer;
let browser: Browser | undefined;
beforeAll(async () => {
  t = await startTestServer({ maxConcurrent: 1 });
});
afterAll(async () => {
  await browser?.close();
  await t?.cleanup();
});

test("/web: run a command and see its output, then the reward", async () => {
  const page = await fetch(`${t.server.url}/web`);
  expect(page.headers.get("content-type")).toContain("text/html");
  const html = await page.text();
  // Self-contained: no external scripts, styles or images.
  expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)=/i);

  browser = await launchChromium(`${t.server.url}/web`);
  await browser.waitFor(`document.getElementById("status").textContent === "ready"`);
  const sandboxId = t.server.stats().ownedSandboxIds[0]!;
  expect(await inspectStatus(sandboxId)).toBe(200);

  await browser.evaluate(`(() => {
    document.getElementById("command").value = "echo hello-from-web > note.txt && cat note.txt && pwd";
    document.getElementById("run").click();
    return true;
  })()`);
  await browser.waitFor(`document.getElementById("output").textContent.includes("[exit 0]")`);
  const output = await browser.evaluate<string>(`document.getElementById("output").textContent`);
  expect(output).toContain("$ echo hello-from-web > note.txt && cat note.txt && pwd\nhello-from-web\n/home/user\n[exit 0]");

  await browser.evaluate(`(() => { document.getElementById("final").value = "done"; document.getElementById("submit-final").click(); return true; })()`);
  await browser.waitFor(`document.getElementById("status").textContent === "episode over"`);
  expect(await browser.evaluate<string>(`document.getElementById("reward").textContent`)).toBe("0");
  expect(await inspectStatus(sandboxId)).toBe(404);
});
