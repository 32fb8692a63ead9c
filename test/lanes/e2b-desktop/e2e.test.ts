/**
 * The e2b-desktop lane end to end through the real `@e2b/desktop` SDK against the local
 * E2B-compatible server (each sandbox a real container of the desktop template: Xvfb, XFCE,
 * xdotool, scrot, Chromium with its sandbox): the computer-use participant — the real `openai`
 * SDK against the fake Responses server — finishes TodoMVC, served inside the desktop, 3/3, and
 * the bundle verifies; every injected kill fault ends in the honest release outcome; the debug
 * flag retains; a loopback URL is refused with its way out; a dry run writes a contract bundle
 * that verifies; doctor looks the template up without creating anything.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Sandbox } from "e2b";
import { type LabConfig, parseLab } from "../../../src/lab/index.ts";
import { checkE2BDesktopLab } from "../../../src/lanes/e2b-desktop/doctor.ts";
import { releaseDesktop } from "../../../src/lanes/e2b-desktop/release.ts";
import { runBrowserStudy } from "../../../src/routes/browser/index.ts";
import { studyContext } from "../../routes/browser/support.ts";
import { filesUnder as files, TODO_TASKS_YAML } from "../../support/browser-study.ts";
import { type E2BServer, startE2BServer } from "../../support/e2b-server/index.ts";
import { cuaSession } from "../../support/fake-openai/computer-use.ts";
import { startFakeOpenAI } from "../../support/fake-openai/server.ts";

const KEY = "sk-test-cua-e2b-desktop-7c1f";
const cwd = mkdtempSync(join(tmpdir(), "humanish-e2b-desktop-"));
let e2b: E2BServer;

beforeAll(async () => {
  e2b = await startE2BServer();
}, 600_000);

afterAll(async () => {
  await e2b?.close();
  rmSync(cwd, { recursive: true, force: true });
}, 120_000);

/** TodoMVC at 1440×950 on the E2B desktop (XFCE panel on top, Chromium's window below it), read off a real frame. */
const TODO = { newTodo: { x: 719, y: 293 }, firstToggle: { x: 464, y: 356 }, clearCompleted: { x: 918, y: 465 } };
const click = (p: { x: number; y: number }) => ({ type: "click", button: "left", x: p.x, y: p.y });
const TURNS = [
  // Through the address bar first, as a person opening the app would: the Ctrl+L is acknowledged
  // only once the address bar holds the keyboard, the Enter only once the reloaded page does.
  [
    { type: "keypress", keys: ["ctrl", "l"] },
    { type: "type", text: "http://127.0.0.1:4173/" },
    { type: "keypress", keys: ["Enter"] },
  ],
  [
    click(TODO.newTodo),
    { type: "type", text: "Buy milk" },
    { type: "keypress", keys: ["ENTER"] },
    { type: "type", text: "Walk the dog" },
    { type: "keypress", keys: ["Enter"] },
  ],
  [click(TODO.firstToggle), { type: "wait" }],
  [click(TODO.clearCompleted)],
];

function lab(o: { appUrl: string; serve: boolean; mode: "live" | "dry-run"; seats?: string }): LabConfig {
  const parsed = parseLab(`schema: humanish.lab.v2
id: e2b-desktop-todo
subject:
  source: app-url
  appUrl: ${o.appUrl}
${o.serve ? "  serve:\n    static:\n      root: embedded:todomvc-vanillajs\n" : ""}actors:
  - type: openai-computer-use
    model: gpt-5.1
    maxOutputTokens: 1024
    mission: Use the todo app like a new user.
    ${o.seats ?? "count: 1"}
${TODO_TASKS_YAML}
execution:
  target: e2b-desktop
scenario:
  mode: ${o.mode}
  caps:
    maxUsd: 2
    maxMinutes: 3
`);
  if (!parsed.ok) throw new Error(parsed.error.message);
  return parsed.config;
}

describe("computer use on an E2B desktop", () => {
  test("two seats at once, TodoMVC served inside each desktop: 3/3 hidden checks each, released by exact id, the bundle verifies, no key on disk", async () => {
    const fake = startFakeOpenAI({ scenario: cuaSession({ turns: TURNS, batched: true, byReplay: true }), apiKey: KEY });
    const created: string[] = [];
    try {
      const config = lab({
        appUrl: "http://127.0.0.1:4173/",
        serve: true,
        mode: "live",
        seats: "lanes:\n      - {id: ana}\n      - {id: ben, persona: hurried}",
      });
      const ctx = {
        ...studyContext(config, `e2b-desktop-${Date.now()}`, cwd),
        env: { PATH: process.env.PATH, OPENAI_API_KEY: KEY, OPENAI_BASE_URL: fake.baseURL, ...e2b.env() },
      };
      const res = await runBrowserStudy(ctx, { onDesktopCreated: (_p, id) => created.push(id) });
      expect(res.error).toBeUndefined();
      expect(res.ok).toBe(true);
      expect(res.verify.ok).toBe(true);
      expect(res.tasks.filter((t) => t.passed).length).toBe(6);
      // The two-argument create: the desktop template, the device's resolution, kill on timeout, allowlisted metadata.
      const creates = e2b.bodies.filter((b) => b.call === "POST /v2/sandboxes").map((b) => b.body as Record<string, unknown>);
      expect(creates.length).toBe(2);
      for (const body of creates) {
        expect(body.templateID).toBe("desktop");
        expect(Object.keys(body.metadata as object).sort()).toEqual(["humanish.lab", "humanish.run", "humanish.seat"]);
        expect(JSON.stringify(body)).not.toContain(cwd);
      }
      expect(created.length).toBe(2);
      for (const id of created) expect(e2b.alive()).not.toContain(id);
      const run = JSON.parse(readFileSync(join(res.runDir, "run.json"), "utf8"));
      expect(run.target).toBe("e2b-desktop");
      expect(run.participants.map((p: { status: string }) => p.status)).toEqual(["passed", "passed"]);
      // Chromium's sandbox was checked positively on each desktop, never switched off.
      expect(JSON.stringify(run).split("its sandbox verified").length - 1).toBe(2);
      const receipts = readFileSync(join(res.runDir, "sandbox-receipts.ndjson"), "utf8");
      for (const id of created) expect(receipts).toContain(id);
      const ledger = JSON.parse(readFileSync(join(res.runDir, "desktop-ledgers.json"), "utf8"));
      expect(ledger.desktops.map((d: { id: string }) => d.id).sort()).toEqual([...created].sort());
      for (const d of ledger.desktops)
        expect(d).toMatchObject({ provider: "e2b", kind: "desktop", outcome: "released", reason: "kill answered true; getInfo answered not found" });
      for (const seat of ["ana", "ben"]) {
        const trace = readFileSync(join(res.runDir, `seats/${seat}/actor.json`), "utf8");
        expect(JSON.parse(trace).protocol).toBe("cua-loop");
        // Typed text is a length only in the evidence.
        expect(trace).not.toContain('Walk the dog"');
        expect(JSON.parse(readFileSync(join(res.runDir, `seats/${seat}/model-ledger.json`), "utf8")).requests).toBe(TURNS.length + 1);
        expect(existsSync(join(res.runDir, `screenshots/${seat}/turn-03.png`))).toBe(true);
      }
      for (const f of files(res.runDir)) {
        const bytes = readFileSync(f);
        expect(bytes.includes(KEY)).toBe(false);
        expect(bytes.includes(e2b.apiKey)).toBe(false);
      }
    } finally {
      await fake.close();
    }
  }, 300_000);

  test("release outcomes for every injected kill fault, by exact id", async () => {
    const conn = { apiKey: e2b.apiKey, apiUrl: e2b.apiUrl };
    const make = async () =>
      (await Sandbox.create("base", { apiKey: e2b.apiKey, apiUrl: e2b.apiUrl, sandboxUrl: e2b.sandboxUrl, timeoutMs: 120_000 })).sandboxId;
    try {
      const ok = await make();
      expect(await releaseDesktop(ok, conn)).toMatchObject({ outcome: "released", reason: "kill answered true; getInfo answered not found" });
      // Expired before the release: the kill answers 404 → released, with the end-time warning.
      const expired = await make();
      await e2b.expire(expired);
      const gone = await releaseDesktop(expired, conn);
      expect(gone.outcome).toBe("released");
      expect(gone.warning).toContain("end time is unknown");
      // Acknowledged but still running → unconfirmed.
      e2b.faults.kill = "ack-but-alive";
      const ack = await make();
      expect(await releaseDesktop(ack, conn)).toMatchObject({ outcome: "unconfirmed", reason: expect.stringContaining("still finds the sandbox") });
      // A 404 kill while getInfo still lists it → unconfirmed (positive evidence of life wins).
      e2b.faults.kill = "404-but-alive";
      const lying = await make();
      expect((await releaseDesktop(lying, conn)).outcome).toBe("unconfirmed");
      // A kill that never answers → unconfirmed within the outer deadline.
      e2b.faults.kill = "hang";
      const hung = await make();
      // The kill never answers: only a deadline can end the release (else the test times out) —
      // the SDK's own request deadline or our outer one, whichever ends first.
      const h = await releaseDesktop(hung, conn, { killMs: 1_500, infoMs: 5_000 });
      expect(h.outcome).toBe("unconfirmed");
      expect(h.reason).toMatch(/TimeoutError|did not settle/);
      // A 401 on the kill → unconfirmed.
      e2b.faults.kill = "normal";
      const denied = await make();
      e2b.faults.unauthorized = { times: 1, route: "DELETE /sandboxes/*" };
      expect((await releaseDesktop(denied, conn)).outcome).toBe("unconfirmed");
      e2b.faults.reset();
      for (const id of [ack, lying, hung, denied]) expect((await releaseDesktop(id, conn)).outcome).toBe("released");
    } finally {
      e2b.faults.reset();
    }
  }, 240_000);

  test("the debug retention flag (HUMANISH_E2B_DESKTOP_RETAIN=debug) keeps the desktop (retained; verify fails closed), which is then killed by id here", async () => {
    const fake = startFakeOpenAI({ scenario: cuaSession({ turns: [], batched: true, final: "I did not reach the goal." }), apiKey: KEY });
    const created: string[] = [];
    try {
      const config = lab({ appUrl: "http://127.0.0.1:4173/", serve: true, mode: "live" });
      const ctx = {
        ...studyContext(config, `e2b-retain-${Date.now()}`, cwd),
        env: { PATH: process.env.PATH, OPENAI_API_KEY: KEY, OPENAI_BASE_URL: fake.baseURL, ...e2b.env() },
      };
      const res = await runBrowserStudy(
        { ...ctx, env: { ...ctx.env, HUMANISH_E2B_DESKTOP_RETAIN: "debug" } },
        { onDesktopCreated: (_p, id) => created.push(id) },
      );
      // A retained desktop is deliberate, but never counts as a proven release: verify fails closed.
      expect(res.verify.ok).toBe(false);
      const ledger = JSON.parse(readFileSync(join(res.runDir, "desktop-ledgers.json"), "utf8"));
      expect(ledger.desktops[0]).toMatchObject({ id: created[0], outcome: "retained" });
      expect(e2b.alive()).toContain(created[0]!);
    } finally {
      await fake.close();
      for (const id of created) expect((await releaseDesktop(id, { apiKey: e2b.apiKey, apiUrl: e2b.apiUrl })).outcome).toBe("released");
    }
  }, 240_000);
});

describe("before anything is created", () => {
  test("a loopback URL of this machine is refused with the next step", () => {
    const r = parseLab(
      `schema: humanish.lab.v2\nid: x\nsubject:\n  source: app-url\n  appUrl: http://127.0.0.1:4173/\nactors:\n  - type: openai-computer-use\n    mission: m\nexecution:\n  target: e2b-desktop\n`,
    );
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.message).toContain("cannot reach");
      expect(r.error.message).toContain("public https://");
      expect(r.error.message).toContain("subject.serve.static");
    }
  });

  test("live preflight: E2B_DEBUG and a missing E2B key are refused before any run directory", async () => {
    const config = lab({ appUrl: "https://demo.example.com/", serve: false, mode: "live" });
    const env = { PATH: process.env.PATH, OPENAI_API_KEY: KEY, ...e2b.env() };
    const runId = `e2b-pre-${Date.now()}`;
    await expect(runBrowserStudy({ ...studyContext(config, runId, cwd), env: { ...env, E2B_DEBUG: "true" } })).rejects.toMatchObject({
      code: "HUMANISH_E2B_DEBUG_REFUSED",
    });
    await expect(runBrowserStudy({ ...studyContext(config, runId, cwd), env: { ...env, E2B_API_KEY: "" } })).rejects.toMatchObject({
      code: "HUMANISH_E2B_KEY_MISSING",
    });
    expect(existsSync(join(cwd, ".humanish/runs", runId))).toBe(false);
  });

  test("doctor: the key by name and the template looked up, nothing created", async () => {
    const creates = () => e2b.calls.filter((c) => c === "POST /v2/sandboxes").length;
    const before = creates();
    const ok = await checkE2BDesktopLab(e2b.env(), "desktop");
    expect(ok.map((c) => [c.name, c.ok])).toEqual([
      ["e2b-desktop-env", true],
      ["e2b-desktop-template", true],
    ]);
    expect(JSON.stringify(ok)).not.toContain(e2b.apiKey);
    const missing = await checkE2BDesktopLab(e2b.env(), "no-such-desktop");
    expect(missing[1]).toMatchObject({ name: "e2b-desktop-template", ok: false });
    expect((await checkE2BDesktopLab({ ...e2b.env(), E2B_DEBUG: "true" }, "desktop"))[0]?.ok).toBe(false);
    expect((await checkE2BDesktopLab({ E2B_API_URL: e2b.apiUrl }, "desktop"))[0]?.detail).toContain("E2B_API_KEY is not set");
    expect(creates()).toBe(before);
  });

  test("a dry run writes a contract bundle that verifies, with no key and nothing created", async () => {
    const before = e2b.calls.length;
    const config = lab({ appUrl: "https://demo.example.com/", serve: false, mode: "dry-run", seats: "lanes:\n      - {id: ana}\n      - {id: ben}" });
    const res = await runBrowserStudy(studyContext(config, `e2b-dry-${Date.now()}`, cwd, "dry-run"));
    expect(res.ok).toBe(true);
    expect(res.verify.ok).toBe(true);
    expect(res.tasks.map((t) => t.status)).toEqual(Array(6).fill("not_run"));
    expect(JSON.parse(readFileSync(join(res.runDir, "run.json"), "utf8")).target).toBe("e2b-desktop");
    expect(e2b.calls.length).toBe(before);
  });
});
