/**
 * An Enter that submits the address bar is acknowledged only once the page it navigates to is
 * there: committed, loaded and holding the keyboard focus. In a real guest (real Xvfb, xdotool
 * and Chromium) the app answers its second page only after a delay; an executor that
 * acknowledged the Enter at once would let the next key reach the address bar, which still
 * holds the focus while the navigation is in flight.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { DockerClient } from "../../src/docker/index.ts";
import { allocateDesktop, type LocalDesktop } from "../../src/runtime/desktop.ts";
import type { GuestImage } from "../../src/runtime/guest-image.ts";
import { containersOfTestRun, freePort, guestPrereqs, TEST_LABEL } from "../runtime/guest-support.ts";

/** How long the app holds its answer to `/slow`, ms: far longer than an X round trip. */
const SLOW_MS = 2_000;

const FIRST = `<!doctype html><title>first</title><p>the first page</p><input autofocus>`;
// The second page lists what is submitted from its autofocused field.
const SLOW = `<!doctype html><title>slow</title><p>the slow page</p>
<form onsubmit="event.preventDefault(); const li = document.createElement('li'); li.textContent = 'got:' + this.q.value; document.querySelector('ul').append(li); this.q.value = '';">
<input name="q" autofocus></form><ul></ul>`;

// A page slow to answer Ctrl+L: its keydown handler holds the renderer for a while (and does not
// handle the chord), so Chromium moves the focus to the address bar only after that.
const BUSY_KEYS = `<!doctype html><title>busy keys</title><p>the busy page</p><input autofocus>
<script>addEventListener("keydown", (e) => { if (e.ctrlKey && e.key === "l") { const t = Date.now(); while (Date.now() - t < 1200); } });</script>`;
const SECOND = `<!doctype html><title>second</title><p>the second page</p>`;

let docker: DockerClient;
let image: GuestImage;
let testRun: string;
let app: ReturnType<typeof Bun.serve>;
let desktop: LocalDesktop | undefined;

beforeAll(async () => {
  ({ docker, image, testRun } = await guestPrereqs());
  app = Bun.serve({
    hostname: "127.0.0.1",
    port: freePort(),
    routes: {
      "/": () => new Response(FIRST, { headers: { "content-type": "text/html" } }),
      "/busy-keys": () => new Response(BUSY_KEYS, { headers: { "content-type": "text/html" } }),
      "/second": () => new Response(SECOND, { headers: { "content-type": "text/html" } }),
      "/slow": async () => {
        await Bun.sleep(SLOW_MS);
        return new Response(SLOW, { headers: { "content-type": "text/html" } });
      },
    },
    fetch: () => new Response("not found", { status: 404 }),
  });
}, 600_000);

afterAll(async () => {
  if (desktop) expect((await desktop.release()).outcome).toBe("released");
  app?.stop(true);
  if (docker) expect(await containersOfTestRun(docker, testRun)).toEqual([]);
}, 120_000);

test("Enter after address-bar text returns with the new page loaded and focused; the next text lands there", async () => {
  desktop = await allocateDesktop({
    docker,
    image,
    runId: `test-${testRun}`,
    participantId: "p1",
    appPort: app.port as number,
    initialPath: "/",
    width: 1280,
    height: 800,
    labels: { [TEST_LABEL]: testRun },
    onCreated: () => {},
  });
  const { executor } = desktop;
  const signal = new AbortController().signal;
  expect((await executor.observe(signal)).text).toContain("the first page");

  const target = `http://127.0.0.1:${app.port}/slow`;
  await executor.execute({ kind: "keypress", keys: ["ctrl", "l"] }, signal);
  await executor.execute({ kind: "type", text: target }, signal);
  await executor.execute({ kind: "keypress", keys: ["Enter"] }, signal);
  // No wait of our own: the acknowledgement itself is the promise that the new page holds the
  // keyboard. A key sent while the navigation were still in flight would edit the address bar
  // instead, and the Enter after it would navigate away from the app.
  await executor.execute({ kind: "keypress", keys: ["q"] }, signal);
  await executor.execute({ kind: "keypress", keys: ["Enter"] }, signal);
  const after = await executor.observe(signal);
  expect(after.url).toBe(target);
  expect(after.text).toContain("the slow page");
  expect(after.text).toContain("got:q");

  await executor.execute({ kind: "type", text: "typed-right-after" }, signal);
  await executor.execute({ kind: "keypress", keys: ["Enter"] }, signal);
  expect((await executor.observe(signal)).text).toContain("got:typed-right-after");
}, 180_000);

test("address-bar text waits for Ctrl+L to take the focus from a page slow to answer it: the URL goes to the address bar, not the page", async () => {
  const { executor } = desktop!;
  const signal = new AbortController().signal;
  const open = async (path: string) => {
    await executor.execute({ kind: "keypress", keys: ["ctrl", "l"] }, signal);
    await executor.execute({ kind: "type", text: `http://127.0.0.1:${app.port}${path}` }, signal);
    await executor.execute({ kind: "keypress", keys: ["Enter"] }, signal);
  };
  await open("/busy-keys");
  expect((await executor.observe(signal)).text).toContain("the busy page");
  await open("/second");
  const o = await executor.observe(signal);
  expect(o.url).toBe(`http://127.0.0.1:${app.port}/second`);
  expect(o.text).toContain("the second page");
}, 180_000);
