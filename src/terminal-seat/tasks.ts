/**
 * Hidden task checks: each task's `check.run` runs in the sandbox AFTER the
 * participant ended, as the participant user, in the study directory, with stdin closed, no
 * secret in its env and a deadline. A task passes when the check exits `check.expectExit`.
 * The participant never sees these commands: they are not in the brief and did not exist in the
 * sandbox while it ran.
 */
import { decodeText, tailText } from "../actors/terminal-participant/exec.ts";
import type { TerminalRecorder } from "../actors/terminal-participant/participant.ts";
import type { TaskResult } from "../bundle/schemas.ts";
import { errorMessage } from "../errors.ts";
import type { TerminalTask } from "../lab/schema.ts";
import type { Sandbox } from "../sandbox/types.ts";

/** Deadline of one check, ms. */
export const TASK_CHECK_TIMEOUT_MS = 60_000;

/** Options of {@link runTaskChecks}. */
export interface TaskCheckOptions {
  sandbox: Sandbox;
  user: string;
  workdir: string;
  participantId: string;
  recorder: TerminalRecorder;
  redact: (s: string) => string;
  signal: AbortSignal;
  timeoutMs?: number;
}

/** Runs every task's check in order; never throws (an engine failure marks the task `not_run`). */
export async function runTaskChecks(tasks: readonly TerminalTask[], o: TaskCheckOptions): Promise<TaskResult[]> {
  const out: TaskResult[] = [];
  for (const task of tasks) {
    const base = { id: task.id, goal: task.goal, participantId: o.participantId };
    if (o.signal.aborted) {
      out.push({ ...base, status: "not_run", passed: false, detail: "not checked: the study was interrupted" });
      continue;
    }
    const cmd = ["bash", "-c", 'exec 0</dev/null; exec "$@"', "humanish-check", "bash", "-lc", task.check.run];
    try {
      const r = await o.sandbox.exec({
        cmd,
        env: { HOME: `/home/${o.user}` },
        user: o.user,
        cwd: o.workdir,
        timeoutMs: o.timeoutMs ?? TASK_CHECK_TIMEOUT_MS,
        signal: o.signal,
      });
      o.recorder.command({
        label: `task-check:${task.id}`,
        argv: cmd,
        envNames: ["HOME"],
        user: o.user,
        exitCode: r.exitCode,
        timedOut: r.timedOut,
        deadline: null,
        durationMs: r.durationMs,
      });
      const expect = task.check.expectExit ?? 0;
      const passed = !r.timedOut && r.exitCode === expect;
      const output = o.redact(`${decodeText(r.stdout)}${decodeText(r.stderr)}`.trim());
      const why = r.timedOut ? `check timed out after ${o.timeoutMs ?? TASK_CHECK_TIMEOUT_MS} ms` : `check exited ${r.exitCode}, expected ${expect}`;
      out.push({ ...base, status: passed ? "passed" : "failed", passed, detail: output ? `${why}; output: ${tailText(output, 300)}` : why });
      o.recorder.lifecycle("terminal-lab.task.checked", `${task.id}: ${passed ? "passed" : "failed"} (${why})`);
    } catch (e) {
      const msg = o.redact(errorMessage(e));
      out.push({ ...base, status: "not_run", passed: false, detail: `check could not run: ${msg}` });
      o.recorder.lifecycle("terminal-lab.task.error", `${task.id}: check could not run: ${msg}`);
    }
  }
  return out;
}
