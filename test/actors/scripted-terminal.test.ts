/** The scripted-terminal participant in a real Docker sandbox. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createScriptedTerminal } from "../../src/actors/scripted-terminal/index.ts";
import type { RunContext } from "../../src/actors/terminal-participant/participant.ts";
import { TERMINAL_STUDY_DIR } from "../../src/lab/schema.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { type MemoryRecorder, runContext, testSandbox } from "./support.ts";

let sandbox: Sandbox;

beforeAll(async () => {
  ({ sandbox } = await testSandbox("scripted"));
}, 300_000);

afterAll(async () => {
  expect((await sandbox?.release())?.outcome).toBe("released");
});

function ctx(over: Partial<RunContext> = {}): RunContext & { recorder: MemoryRecorder } {
  return runContext(sandbox, {
    brief: "unused by the scripted participant",
    nonce: "000000000000",
    deadlines: { firstOutputMs: 20_000, deadlineAt: Date.now() + 60_000 },
    redact: (s) => s.replaceAll("hunter2-secret", "[REDACTED_SECRET]"),
    ...over,
  });
}

describe("scripted-terminal", () => {
  test("runs every step in order as the non-root user in the study dir", async () => {
    const c = ctx();
    const o = await createScriptedTerminal([{ run: "id -u" }, { run: "pwd" }, { run: "echo made > f.txt && cat f.txt" }]).run(c);
    expect(o.status).toBe("passed");
    expect(o.completionReason).toBe("turn_completed");
    expect(o.deadline).toBeNull();
    expect(o.items.map((i) => i.command?.outputTail)).toEqual(["1000\n", `${TERMINAL_STUDY_DIR}\n`, "made\n"]);
    expect(o.counts).toMatchObject({ commands: 3, actions: 3, messages: 0 });
    expect(c.recorder.commands.map((x) => [x.label, x.user, x.exitCode, x.envNames])).toEqual([
      ["participant-step-1", "user", 0, ["HOME"]],
      ["participant-step-2", "user", 0, ["HOME"]],
      ["participant-step-3", "user", 0, ["HOME"]],
    ]);
    expect(c.recorder.out.map((x) => x.text).join("")).toBe(`1000\n${TERMINAL_STUDY_DIR}\nmade\n`);
  });

  test("stops at the first step whose exit code differs; later steps never run", async () => {
    const c = ctx();
    const o = await createScriptedTerminal([{ run: "echo one" }, { run: "exit 4", expectExit: 0 }, { run: "touch should-not-exist" }]).run(c);
    expect(o.status).toBe("failed");
    expect(o.completionReason).toBe("step_failed");
    expect(o.reason).toBe("step 2 exited 4, expected 0");
    expect(o.items).toHaveLength(2);
    const r = await sandbox.exec({ cmd: ["test", "-e", `${TERMINAL_STUDY_DIR}/should-not-exist`] });
    expect(r.exitCode).toBe(1);
  });

  test("a declared non-zero exit code is expected, not a failure", async () => {
    const o = await createScriptedTerminal([
      { run: "jq --version", expectExit: 127 },
      { run: "exit 3", expectExit: 3 },
    ]).run(ctx());
    expect(o.status).toBe("passed");
  });

  test("a silent hanging step is killed at the first-output deadline and the outcome says so", async () => {
    const o = await createScriptedTerminal([{ run: "echo ok" }, { run: "sleep 43" }, { run: "echo never" }]).run(
      ctx({ deadlines: { firstOutputMs: 1_500, deadlineAt: Date.now() + 60_000 } }),
    );
    expect(o.status).toBe("timed_out");
    expect(o.deadline).toBe("first-output");
    expect(o.reason).toContain("first-output deadline");
    expect(o.items).toHaveLength(2);
  });

  test("output text goes through the redactor before it is kept", async () => {
    const o = await createScriptedTerminal([{ run: "echo token=hunter2-secret" }]).run(ctx());
    expect(JSON.stringify(o)).not.toContain("hunter2-secret");
    expect(o.items[0]!.command?.text).toBe("echo token=[REDACTED_SECRET]");
  });
});
