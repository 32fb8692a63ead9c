/**
 * Readiness of an E2B terminal sandbox: the participant user creates the study directory in its
 * own home and opens it to everyone (0777), so root's unkeyed install commands can write there
 * even where root holds no capabilities (a template that drops them); then root confirms the
 * participant user, `timeout` and a writable study directory exist.
 */
import { decodeText, tailText } from "../../actors/terminal-participant/exec.ts";
import { errorMessage, HumanishError } from "../../errors.ts";
import { TERMINAL_STUDY_DIR } from "../../lab/schema.ts";
import type { Sandbox } from "../../sandbox/types.ts";
import { Interrupted, PARTICIPANT_USER } from "../../terminal-seat/provision.ts";

/** Deadline of each readiness command, ms. */
const READY_TIMEOUT_MS = 60_000;

/** Throws `HUMANISH_TERMINAL_LAB_SANDBOX_NOT_READY`, or {@link Interrupted} when the study was stopped. */
export async function e2bReadyProbe(sandbox: Sandbox, signal: AbortSignal): Promise<void> {
  const next = `Use an E2B template with a user "${PARTICIPANT_USER}" (home /home/${PARTICIPANT_USER}), bash and coreutils (timeout); the base template has them.`;
  const steps: { user: string; script: string }[] = [
    { user: PARTICIPANT_USER, script: `mkdir -p ${TERMINAL_STUDY_DIR} && chmod 0777 ${TERMINAL_STUDY_DIR}` },
    {
      user: "root",
      script: `id -u ${PARTICIPANT_USER} >/dev/null && command -v timeout >/dev/null && test -w ${TERMINAL_STUDY_DIR} && echo HUMANISH_SHELL_READY`,
    },
  ];
  for (const step of steps) {
    let out = "";
    let code = -1;
    try {
      const r = await sandbox.exec({ cmd: ["bash", "-c", step.script], user: step.user, cwd: "/", timeoutMs: READY_TIMEOUT_MS, signal });
      out = decodeText(r.stdout) + decodeText(r.stderr);
      code = r.exitCode;
    } catch (e) {
      if (signal.aborted) throw new Interrupted();
      throw new HumanishError("HUMANISH_TERMINAL_LAB_SANDBOX_NOT_READY", `the E2B sandbox did not become ready: ${errorMessage(e)}`, {
        next,
      });
    }
    if (signal.aborted) throw new Interrupted();
    if (code !== 0 || (step.user === "root" && !out.includes("HUMANISH_SHELL_READY"))) {
      throw new HumanishError(
        "HUMANISH_TERMINAL_LAB_SANDBOX_NOT_READY",
        `the E2B sandbox readiness probe (as ${step.user}) exited ${code}: ${tailText(out.trim(), 300)}`,
        {
          next,
        },
      );
    }
  }
}
