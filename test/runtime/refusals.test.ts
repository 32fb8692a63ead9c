/**
 * Content-text refusals that need a page of their own: text is refused when
 * the focus is inside an iframe, and after a JavaScript dialog opened; nothing is typed, and an
 * editable element of the top-level document still takes text.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { type BrowserAction, isBrowserControlError } from "../../src/browser-control/index.ts";
import type { DockerClient } from "../../src/docker/index.ts";
import { type AppServer, serveStatic } from "../../src/routes/browser/serve.ts";
import { allocateDesktop, type LocalDesktop } from "../../src/runtime/desktop.ts";
import { containersOfTestRun, freePort, guestPrereqs, TEST_LABEL } from "./guest-support.ts";

let docker: DockerClient;
let testRun: string;
let app: AppServer;
let desktop: LocalDesktop;

// Fixture geometry (screen px = CSS px + ≈85 px of browser chrome).
const TOP_INPUT = { x: 200, y: 145 };
const IFRAME_INPUT = { x: 200, y: 250 };
const DIALOG_BUTTON = { x: 120, y: 430 };

async function outcome(a: BrowserAction): Promise<string> {
  try {
    await desktop.executor.execute(a);
    return "accepted";
  } catch (e) {
    if (isBrowserControlError(e)) return `${e.errorCode}/${e.disposition}`;
    throw e;
  }
}

beforeAll(async () => {
  const p = await guestPrereqs();
  docker = p.docker;
  testRun = p.testRun;
  app = serveStatic(join(import.meta.dir, "fixtures/refusal-app"), freePort());
  desktop = await allocateDesktop({
    docker,
    image: p.image,
    runId: `test-${testRun}`,
    participantId: "p1",
    appPort: app.port,
    initialPath: "/",
    width: 1024,
    height: 768,
    labels: { [TEST_LABEL]: testRun },
    onCreated: () => undefined,
  });
}, 180_000);

afterAll(async () => {
  if (desktop) expect((await desktop.release()).outcome).toBe("released");
  await app?.close();
  if (docker) expect(await containersOfTestRun(docker, testRun)).toEqual([]);
}, 60_000);

test("top-level input takes text; iframe focus is refused; a dialog poisons content text", async () => {
  expect((await desktop.executor.observe()).text).toContain("fixture ready");
  await desktop.executor.execute({ kind: "click", ...TOP_INPUT });
  expect(await outcome({ kind: "type", text: "top ok" })).toBe("accepted");
  expect((await desktop.executor.observe()).text).toContain("top:top ok");

  await desktop.executor.execute({ kind: "click", ...IFRAME_INPUT });
  expect(await outcome({ kind: "type", text: "inside frame" })).toBe("action_rejected/not_dispatched");
  // The frame's input really had focus: a native key reaches it (and is echoed), typed text did not.
  await desktop.executor.execute({ kind: "keypress", keys: ["x"] });
  const framed = await desktop.executor.observe();
  expect(framed.text).toContain("frame:x");
  expect(framed.text).not.toContain("inside frame");

  await desktop.executor.execute({ kind: "click", ...DIALOG_BUTTON });
  await desktop.executor.execute({ kind: "wait", ms: 300 });
  await desktop.executor.execute({ kind: "keypress", keys: ["Escape"] });
  await desktop.executor.execute({ kind: "wait", ms: 300 });
  await desktop.executor.execute({ kind: "click", ...TOP_INPUT });
  expect(await outcome({ kind: "type", text: "after dialog" })).toBe("action_rejected/not_dispatched");

  const o = await desktop.executor.observe();
  expect(o.text).toContain("fixture ready");
  expect(o.text).toContain("top:top ok");
  expect(o.text).not.toContain("after dialog");
}, 90_000);
