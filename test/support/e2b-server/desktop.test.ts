/**
 * The `desktop` template of the local E2B-compatible server driven by the REAL `@e2b/desktop` SDK:
 * `Sandbox.create("desktop", { resolution })` starts Xvfb and XFCE in a real container, a
 * screenshot is a PNG of that size, and mouse and keyboard reach a Chromium that runs with its
 * own sandbox (renderers in their own user namespace under seccomp), then `kill()` removes the
 * container.
 */
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { randomUUID } from "node:crypto";
import { Sandbox } from "@e2b/desktop";
import { createDockerClient } from "../../../src/docker/index.ts";
import { desktopTemplate } from "./desktop-image.ts";
import { type E2BServer, startE2BServer } from "./index.ts";

// A cold build of the desktop image takes minutes; CI builds it in scripts/setup-images.sh.
setDefaultTimeout(900_000);
const docker = createDockerClient();
const runLabel = `e2b-desktop-${randomUUID()}`;
let e2b: E2BServer;

beforeAll(async () => {
  // The default `desktop` template; resolved here so a cold build is not charged to the test itself.
  await desktopTemplate(docker);
  e2b = await startE2BServer({ labels: { "humanish.test-run": runLabel } });
});
afterAll(async () => {
  await e2b?.close();
  expect(await docker.containerList({ all: true, labels: [`humanish.test-run=${runLabel}`] })).toEqual([]);
});

/** Width and height from a PNG's IHDR; throws when the bytes are not a PNG. */
function pngSize(png: Uint8Array): { width: number; height: number } {
  const signature = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
  if (!signature.every((b, i) => png[i] === b) || new TextDecoder().decode(png.subarray(12, 16)) !== "IHDR") throw new Error("not a PNG");
  const view = new DataView(png.buffer, png.byteOffset, png.byteLength);
  return { width: view.getUint32(16), height: view.getUint32(20) };
}

test("create with a resolution, screenshot, mouse and keyboard into sandboxed Chromium, kill", async () => {
  const desktop = await Sandbox.create("desktop", {
    apiKey: e2b.apiKey,
    apiUrl: e2b.apiUrl,
    sandboxUrl: e2b.sandboxUrl,
    resolution: [800, 600],
    timeoutMs: 300_000,
  });
  const containerId = e2b.containerIdOf(desktop.sandboxId)!;
  const shot = await desktop.screenshot();
  expect(pngSize(shot)).toEqual({ width: 800, height: 600 });
  expect(await desktop.getScreenSize()).toEqual({ width: 800, height: 600 });
  await desktop.moveMouse(123, 456);
  expect(await desktop.getCursorPosition()).toEqual({ x: 123, y: 456 });

  // A page whose title echoes what is typed into a full-window input: the window name proves
  // the click focused it and the keystrokes arrived.
  await desktop.files.write(
    "/home/user/typing.html",
    `<title>typed:</title><input oninput="document.title='typed:'+this.value" style="position:fixed;inset:0;width:100%;height:100%;font-size:40px">`,
  );
  await desktop.commands.run("chromium --kiosk --no-first-run --user-data-dir=/tmp/chromium file:///home/user/typing.html >/tmp/chromium.log 2>&1", {
    background: true,
    timeoutMs: 0,
  });
  const window = (cmd: string) => desktop.waitAndVerify(cmd, (r) => r.exitCode === 0, 60, 0.5);
  expect(await window("xdotool search --name '^typed:'")).toBe(true);
  await desktop.leftClick(400, 300);
  await desktop.write("hello e2b");
  expect(await window("xdotool search --name '^typed:hello e2b'")).toBe(true);

  // Chromium's own sandbox is on: a renderer lives in another user namespace, under seccomp-BPF.
  const sandboxed = await desktop.commands.run(
    `p=$(pgrep -f -- '--type=renderer' | head -1); [ -n "$p" ] && [ "$(readlink /proc/$p/ns/user)" != "$(readlink /proc/self/ns/user)" ] && grep -q '^Seccomp:[[:space:]]*2$' /proc/$p/status && echo sandboxed`,
  );
  expect(sandboxed.stdout).toBe("sandboxed\n");
  // No process runs with the sandbox switched off (the bracket keeps this command from matching itself).
  expect((await desktop.commands.run("pgrep -f -- '--no-sandbo[x]' || echo none")).stdout).toBe("none\n");

  expect(await desktop.kill()).toBe(true);
  expect(e2b.alive()).not.toContain(desktop.sandboxId);
  await expect(docker.containerInspect(containerId)).rejects.toThrow();
});
