/**
 * Browser control over the real socket into a real guest container: every
 * action kind changes the real TodoMVC as expected; refusals are typed and dispatch nothing;
 * Chromium's sandbox is on; the guest reaches the app port and nothing else; nothing is left.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { type BrowserAction, type BrowserObservation, isBrowserControlError } from "../../src/browser-control/index.ts";
import { type DockerClient, runExec } from "../../src/docker/index.ts";
import { admitPng } from "../../src/png/index.ts";
import type { AppServer } from "../../src/routes/browser/serve.ts";
import { serveStatic } from "../../src/routes/browser/serve.ts";
import { allocateDesktop, type LocalDesktop } from "../../src/runtime/desktop.ts";
import type { GuestImage } from "../../src/runtime/guest-image.ts";
import { hostAddressOn } from "../support/docker-network.ts";
import { containersOfTestRun, freePort, guestPrereqs, serveTodoMvc, TEST_LABEL } from "./guest-support.ts";

let docker: DockerClient;
let image: GuestImage;
let testRun: string;
let app: AppServer;
let other: AppServer;
let desktop: LocalDesktop;
let createdId = "";

// TodoMVC geometry at 1440×950 (browser chrome ≈ 85 px): new-todo field, first row toggle and label.
const NEW_TODO = { x: 720, y: 265 };
const FIRST_TOGGLE = { x: 464, y: 329 };
const FIRST_LABEL = { x: 600, y: 329 };

async function observe(): Promise<BrowserObservation> {
  const o = await desktop.executor.observe();
  const v = admitPng(o.png);
  expect(v.ok).toBe(true);
  if (v.ok) expect([v.width, v.height]).toEqual([1440, 950]);
  return o;
}
/**
 * Observes until the page text holds `text`, for up to `ms`: X input reaches Chromium's renderer
 * some time after the guest has sent it, and on a loaded machine the next frame can come first.
 * An input that was lost still fails here, once the time is up.
 */
async function observeUntil(text: string, ms = 3000): Promise<BrowserObservation> {
  const until = Date.now() + ms;
  let o = await observe();
  while (!o.text?.includes(text) && Date.now() < until) {
    await Bun.sleep(100);
    o = await observe();
  }
  return o;
}
const run = (a: BrowserAction) => desktop.executor.execute(a);
async function refused(a: BrowserAction): Promise<string> {
  try {
    await run(a);
  } catch (e) {
    if (isBrowserControlError(e)) return `${e.errorCode}/${e.disposition}`;
    throw e;
  }
  return "accepted";
}
async function addTodo(text: string) {
  await run({ kind: "click", ...NEW_TODO });
  await run({ kind: "type", text });
  await run({ kind: "keypress", keys: ["Enter"] });
}
async function exec(cmd: string[]): Promise<{ exitCode: number; out: string }> {
  const r = await runExec(docker, createdId, { Cmd: cmd, AttachStdout: true, AttachStderr: true });
  return { exitCode: r.exitCode, out: new TextDecoder().decode(r.stdout) + new TextDecoder().decode(r.stderr) };
}

beforeAll(async () => {
  ({ docker, image, testRun } = await guestPrereqs());
  app = serveTodoMvc();
  other = serveStatic(import.meta.dir, freePort());
  desktop = await allocateDesktop({
    docker,
    image,
    runId: `test-${testRun}`,
    participantId: "p1",
    appPort: app.port,
    initialPath: "/",
    width: 1440,
    height: 950,
    labels: { [TEST_LABEL]: testRun },
    onCreated: (id) => {
      createdId = id;
    },
  });
}, 180_000);

afterAll(async () => {
  const proof = await desktop?.release();
  if (proof) expect(proof.outcome).toBe("released");
  await app?.close();
  await other?.close();
  if (docker && testRun) expect(await containersOfTestRun(docker, testRun)).toEqual([]);
}, 60_000);

describe("browser control into a real guest", () => {
  test("HELLO then OBSERVE: the app is open at its own loopback origin, full frame admitted", async () => {
    expect(createdId).toMatch(/^[0-9a-f]{64}$/);
    expect(desktop.containerId).toBe(createdId);
    const o = await observe();
    expect(o.url).toBe(`http://127.0.0.1:${app.port}/`);
    expect(o.title).toContain("TodoMVC");
    expect(o.text).toContain("Double-click to edit a todo");
    expect(o.stateSignature).toMatch(/^[0-9a-f]{1025}$/);
  }, 60_000);

  test("click + type + keypress add todos; drag toggles one; double_click edits one", async () => {
    await addTodo("Buy milk");
    await addTodo("Walk the dog");
    expect((await observeUntil("2 items left")).text).toContain("2 items left");
    // drag: press and release on the first row's toggle (the whole path checked first).
    await run({ kind: "drag", path: [FIRST_TOGGLE, { x: FIRST_TOGGLE.x + 1, y: FIRST_TOGGLE.y + 1 }, FIRST_TOGGLE] });
    const afterDrag = await observeUntil("1 item left");
    expect(afterDrag.text).toContain("1 item left");
    expect(afterDrag.text).toContain("Clear completed (1)");
    // double_click opens the editor of the first row; typed text lands there.
    await run({ kind: "double_click", ...FIRST_LABEL });
    await run({ kind: "keypress", keys: ["End"] });
    await run({ kind: "type", text: " now" });
    await run({ kind: "keypress", keys: ["Enter"] });
    expect((await observeUntil("Buy milk now")).text).toContain("Buy milk now");
  }, 90_000);

  test("move, wait and screenshot dispatch without changing the list", async () => {
    const before = await observe();
    await run({ kind: "move", x: 50, y: 700 });
    await run({ kind: "wait", ms: 50 });
    await run({ kind: "screenshot" });
    expect((await observe()).text).toBe(before.text!);
  }, 30_000);

  test("scroll moves a long list", async () => {
    for (let i = 1; i <= 10; i++) await addTodo(`Item ${i}`);
    await run({ kind: "keypress", keys: ["Home"] });
    const before = await observe();
    expect(before.text).toContain("Item 10");
    await run({ kind: "scroll", x: 720, y: 600, dx: 0, dy: 480 });
    await run({ kind: "wait", ms: 300 });
    const after = await observe();
    expect(after.scrollY!).toBeGreaterThan(before.scrollY ?? 0);
  }, 90_000);

  test("address bar: Ctrl+L then printable ASCII navigates on the same origin", async () => {
    await run({ kind: "keypress", keys: ["ctrl", "l"] });
    await run({ kind: "type", text: `http://127.0.0.1:${app.port}/#/completed` });
    await run({ kind: "keypress", keys: ["Enter"] });
    await run({ kind: "wait", ms: 500 });
    const o = await observe();
    expect(o.url).toBe(`http://127.0.0.1:${app.port}/#/completed`);
    expect(o.text).not.toContain("Walk the dog");
    // Armed text must be printable ASCII: Unicode after Ctrl+L is refused, nothing typed.
    await run({ kind: "keypress", keys: ["ctrl", "l"] });
    expect(await refused({ kind: "type", text: "http://ü.example/" })).toBe("action_rejected/not_dispatched");
    await run({ kind: "keypress", keys: ["Escape"] });
    await run({ kind: "click", x: 100, y: 700 });
  }, 60_000);

  test("only the app origin: file:// typed into the address bar is blocked by policy", async () => {
    const policy = await exec(["cat", "/etc/chromium/policies/managed/humanish.json"]);
    expect(JSON.parse(policy.out)).toMatchObject({ URLBlocklist: ["*"], URLAllowlist: ["http://127.0.0.1", "http://localhost"] });
    for (const target of ["file:///etc/passwd", "file:///home/humanish/"]) {
      await run({ kind: "keypress", keys: ["ctrl", "l"] });
      await run({ kind: "type", text: target });
      await run({ kind: "keypress", keys: ["Enter"] });
      await run({ kind: "wait", ms: 800 });
      const o = await observe();
      expect(o.text ?? "").not.toContain("root:x:0");
      expect(o.text ?? "").not.toContain("Index of");
      expect(o.url ?? "").not.toStartWith(target.slice(0, 7));
    }
    // Back to the app, which is still allowed.
    await run({ kind: "keypress", keys: ["ctrl", "l"] });
    await run({ kind: "type", text: `http://127.0.0.1:${app.port}/` });
    await run({ kind: "keypress", keys: ["Enter"] });
    await run({ kind: "wait", ms: 500 });
    expect((await observe()).url).toBe(`http://127.0.0.1:${app.port}/`);
    await run({ kind: "click", x: 100, y: 700 });
  }, 60_000);
});

describe("refusals: typed errors, no input dispatched, channel stays usable", () => {
  test("text into a non-editable focus", async () => {
    await run({ kind: "click", x: 100, y: 700 });
    const before = await observe();
    expect(await refused({ kind: "type", text: "should not appear" })).toBe("action_rejected/not_dispatched");
    const after = await observe();
    expect(after.text).toBe(before.text!);
    expect(after.text).not.toContain("should not appear");
  }, 30_000);

  test("an unknown key name, an over-long drag, too many wheel steps", async () => {
    const before = await observe();
    expect(await refused({ kind: "keypress", keys: ["Hyper"] })).toBe("action_rejected/not_dispatched");
    expect(
      await refused({
        kind: "drag",
        path: [
          { x: 10, y: 10 },
          { x: 900, y: 10 },
          { x: 5000, y: 10 },
        ],
      }),
    ).toBe("action_rejected/not_dispatched");
    expect(await refused({ kind: "drag", path: Array.from({ length: 1025 }, () => ({ x: 1, y: 1 })) })).toBe("invalid_request/not_dispatched");
    expect(await refused({ kind: "scroll", x: 10, y: 10, dx: 0, dy: 120 * 101 })).toBe("action_rejected/not_dispatched");
    const after = await observe();
    expect(after.text).toBe(before.text!);
    expect(after.scrollY).toBe(before.scrollY!);
  }, 30_000);

  test("a second tab: content text is refused", async () => {
    await run({ kind: "keypress", keys: ["ctrl", "t"] });
    await run({ kind: "wait", ms: 800 });
    expect(await refused({ kind: "type", text: "x" })).toBe("action_rejected/not_dispatched");
    await run({ kind: "keypress", keys: ["ctrl", "w"] });
    await run({ kind: "wait", ms: 500 });
    expect((await observe()).url).toContain(`127.0.0.1:${app.port}`);
  }, 30_000);
});

describe("guest isolation and sandbox", () => {
  test("Chromium's renderers run under seccomp-BPF in their own PID and network namespaces", async () => {
    const r = await exec([
      "/bin/bash",
      "-c",
      'n=0; for d in /proc/[0-9]*; do c=$(tr "\\0" " " < $d/cmdline 2>/dev/null); case "$c" in "/usr/lib/chromium/chromium "*"--type=renderer"*) n=$((n+1)); grep -E "^(Seccomp|NSpid):" $d/status | tr "\\n" " "; echo;; esac; done; echo "renderers=$n"; grep -E "^(Seccomp|NoNewPrivs|CapEff):" /proc/1/status',
    ]);
    expect(r.exitCode).toBe(0);
    const renderers = Number(/renderers=(\d+)/.exec(r.out)?.[1]);
    expect(renderers).toBeGreaterThan(0);
    const lines = r.out.split("\n").filter((l) => l.includes("Seccomp:") && l.includes("NSpid:"));
    expect(lines).toHaveLength(renderers);
    for (const l of lines) {
      expect(l).toMatch(/Seccomp:\s+2/);
      expect(l).toMatch(/NSpid:\s+\d+\s+\d+/);
    }
    expect(r.out).toMatch(/NoNewPrivs:\s+1/);
    expect(r.out).toMatch(/CapEff:\s+0000000000000000/);
  }, 30_000);

  test("from inside the guest: the app port works; another host port, the bridge gateway and a public address fail", async () => {
    const probe = (host: string, port: number) =>
      exec([
        "/bin/bash",
        "-c",
        `exec 3<>/dev/tcp/${host}/${port} && printf 'GET / HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\n\\r\\n' >&3 && timeout 5 head -c 12 <&3`,
      ]);
    const ok = await probe("127.0.0.1", app.port);
    expect(ok.exitCode).toBe(0);
    expect(ok.out).toContain("HTTP/1.");
    // A host service listening on the bridge gateway, which any bridge container would reach.
    const bridgeGateway = await hostAddressOn("bridge");
    const onBridge = Bun.listen({ hostname: bridgeGateway, port: 0, socket: { data() {} } });
    try {
      for (const [host, port] of [
        ["127.0.0.1", other.port],
        [bridgeGateway, onBridge.port],
        [bridgeGateway, 2375],
        ["1.1.1.1", 80],
        ["8.8.8.8", 53],
      ] as const) {
        const r = await probe(host, port);
        expect({ host, port, exitCode: r.exitCode === 0 ? 0 : "failed" }).toEqual({ host, port, exitCode: "failed" });
      }
    } finally {
      onBridge.stop(true);
    }
  }, 60_000);
});
