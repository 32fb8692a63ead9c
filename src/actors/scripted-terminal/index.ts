/**
 * `scripted-terminal`: a deterministic participant with no model. It runs the lab's
 * `actors[0].steps[]` (`{run, expectExit?}`) one at a time inside the sandbox, each as
 * `bash -lc <run>` under the non-root participant user, with stdin closed and the participant
 * deadlines (see ../terminal/exec.ts). The first step whose exit code differs from `expectExit`
 * (default 0) ends the participant with `failed / step_failed`; later steps do not run.
 */
import { findActor } from "../../actor-registry/registry.ts";
import type { ActorDescriptor, ActorItem } from "../../actor-registry/types.ts";
import { decodeText, runRecordedParticipantCommand, tailText } from "../terminal-participant/exec.ts";
import type { RunContext, TerminalParticipant, TerminalParticipantOutcome } from "../terminal-participant/participant.ts";

/** One scripted step. */
export interface ScriptedTerminalStep {
  /** Shell text run as `bash -lc <run>`. */
  run: string;
  /** Expected exit code (default 0). */
  expectExit?: number;
}

/** Creates the scripted-terminal participant for the given steps (validated by the lab parser). */
export function createScriptedTerminal(steps: readonly ScriptedTerminalStep[]): TerminalParticipant {
  const descriptor = findActor("scripted-terminal") as ActorDescriptor;
  return {
    descriptor,
    runtime: () => undefined,
    prepare: async () => {},
    run: (ctx) => runSteps(steps, ctx),
  };
}

async function runSteps(steps: readonly ScriptedTerminalStep[], ctx: RunContext): Promise<TerminalParticipantOutcome> {
  const startedAt = new Date();
  const items: ActorItem[] = [];
  let terminalEvents = 0;
  const finish = (
    status: TerminalParticipantOutcome["status"],
    completionReason: TerminalParticipantOutcome["completionReason"],
    reason: string,
    deadline: TerminalParticipantOutcome["deadline"],
  ): TerminalParticipantOutcome => {
    const completedAt = new Date();
    const commands = items.filter((i) => i.kind === "command").length;
    return {
      status,
      completionReason,
      reason: ctx.redact(reason),
      deadline,
      items,
      counts: { commands, actions: commands, messages: 0, terminalEvents },
      startedAt: startedAt.toISOString(),
      completedAt: completedAt.toISOString(),
      durationMs: completedAt.getTime() - startedAt.getTime(),
    };
  };
  if (steps.length === 0) return finish("failed", "harness_error", "scripted-terminal has no steps", null);

  for (const [index, step] of steps.entries()) {
    const n = index + 1;
    const expect = step.expectExit ?? 0;
    ctx.recorder.progress(`step ${n}/${steps.length}: ${step.run}`);
    ctx.recorder.lifecycle("terminal-lab.participant.step.started", `step ${n}/${steps.length}`);
    const at = new Date().toISOString();
    const r = await runRecordedParticipantCommand(ctx, ["bash", "-lc", step.run], { HOME: `/home/${ctx.user}` });
    terminalEvents += r.terminalEvents;
    if (!r.started) {
      return finish("timed_out", "timed_out", `the ${r.deadline} deadline passed before step ${n} started`, r.deadline);
    }
    ctx.recorder.command({
      label: `participant-step-${n}`,
      argv: r.argv,
      envNames: ["HOME"],
      user: ctx.user,
      exitCode: r.exitCode,
      timedOut: r.deadline !== null,
      deadline: r.deadline,
      durationMs: r.durationMs,
    });
    const output = ctx.redact(decodeText(r.stdout) + decodeText(r.stderr));
    items.push({
      id: `step-${n}`,
      kind: "command",
      lifecycle: "completed",
      status: r.deadline ? "killed" : r.exitCode === expect ? "completed" : "failed",
      title: `step ${n}: ${ctx.redact(step.run)}`,
      command: { text: ctx.redact(step.run), cwd: ctx.workdir, exitCode: r.exitCode, outputTail: tailText(output) },
      at,
    });
    if (r.deadline !== null) {
      const why =
        r.deadline === "first-output"
          ? `step ${n} printed nothing for ${ctx.deadlines.firstOutputMs} ms (first-output deadline) and was killed`
          : r.deadline === "max-minutes"
            ? `step ${n} was killed at the maxMinutes wall-clock deadline`
            : `step ${n} was stopped because the study was interrupted`;
      return r.deadline === "interrupted" ? finish("incomplete", "interrupted", why, r.deadline) : finish("timed_out", "timed_out", why, r.deadline);
    }
    if (r.exitCode !== expect) {
      return finish("failed", "step_failed", `step ${n} exited ${r.exitCode}, expected ${expect}`, null);
    }
  }
  return finish("passed", "turn_completed", `all ${steps.length} steps ran with their expected exit codes`, null);
}
