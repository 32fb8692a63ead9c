/**
 * Provisioning steps of a terminal seat, on either terminal lane: the Docker readiness probe and
 * the unkeyed `product.install` commands (run as root, stdin closed, output kept for provision.log).
 */
import { decodeText, tailText } from "../actors/terminal-participant/exec.ts";
import { errorMessage, HumanishError } from "../errors.ts";
import { TERMINAL_STUDY_DIR } from "../lab/schema.ts";
import { untrustedCertNext } from "../sandbox/tls-trust.ts";
import type { Sandbox } from "../sandbox/types.ts";
import type { TerminalRecording } from "./recorder.ts";

/** The non-root user participants, installs of the participant runtime aside, run as. */
export const PARTICIPANT_USER = "user";
/** Deadline of one `product.install` command, ms. */
export const INSTALL_TIMEOUT_MS = 600_000;
/** Deadline of the sandbox readiness probe, ms. */
const READY_TIMEOUT_MS = 60_000;

/** Thrown when the study's signal fired during a step: the seat stops without a harness failure. */
export class Interrupted extends Error {}

/**
 * Readiness: the engine created the study directory (the container's working dir) owned by root;
 * root opens it to everyone (0777) — root keeps ownership, so unkeyed install commands can chmod
 * what they create without any capability — and the participant user and `timeout` must exist.
 * Throws `HUMANISH_TERMINAL_LAB_SANDBOX_NOT_READY`, or {@link Interrupted}.
 */
export async function readyProbe(sandbox: Sandbox, signal: AbortSignal): Promise<void> {
  const script = `chmod 0777 ${TERMINAL_STUDY_DIR} && id -u ${PARTICIPANT_USER} >/dev/null && command -v timeout >/dev/null && echo HUMANISH_SHELL_READY`;
  const next = `The image needs a user "${PARTICIPANT_USER}" with home /home/${PARTICIPANT_USER}, bash and coreutils (timeout); remove execution.image to use the humanish sandbox image.`;
  let out = "";
  let code = -1;
  try {
    const r = await sandbox.exec({ cmd: ["bash", "-c", script], user: "root", cwd: TERMINAL_STUDY_DIR, timeoutMs: READY_TIMEOUT_MS, signal });
    out = decodeText(r.stdout) + decodeText(r.stderr);
    code = r.exitCode;
  } catch (e) {
    if (signal.aborted) throw new Interrupted();
    throw new HumanishError("HUMANISH_TERMINAL_LAB_SANDBOX_NOT_READY", `the sandbox did not become ready: ${errorMessage(e)}`, {
      next,
    });
  }
  if (code !== 0 || !out.includes("HUMANISH_SHELL_READY")) {
    if (signal.aborted) throw new Interrupted();
    throw new HumanishError("HUMANISH_TERMINAL_LAB_SANDBOX_NOT_READY", `the sandbox readiness probe exited ${code}: ${tailText(out.trim(), 300)}`, { next });
  }
}

/**
 * The next step of a failed install, for the lab's network: a lab without network may simply
 * need `execution.network: bridge`; a lab that has it must look elsewhere (name, version, registry).
 */
export function installFailureHint(network: "none" | "bridge"): string {
  return network === "bridge"
    ? "Fix that install command (the full output is in provision.log in the run directory); it ran as root with network (execution.network: bridge), so check the package name and version and that the registry answers from this machine."
    : "Fix that install command (the full output is in provision.log in the run directory); it ran as root with no network: if it downloads anything, set execution.network: bridge in the lab.";
}

/** Runs one `product.install` command as root, unkeyed; throws `HUMANISH_TERMINAL_LAB_INSTALL_FAILED` or {@link Interrupted}. */
export async function runInstall(
  sandbox: Sandbox,
  command: string,
  index: number,
  total: number,
  o: {
    workdir: string;
    signal: AbortSignal;
    rec: TerminalRecording;
    provisionLog: string[];
    networkEnv: Record<string, string>;
    network: "none" | "bridge";
    /** The next step of a failed install when the lane's network knob is not Docker's (default {@link installFailureHint}). */
    next?: string;
  },
): Promise<void> {
  const argv = ["bash", "-c", 'exec 0</dev/null; exec "$@"', "humanish-install", "bash", "-lc", command];
  const env = { ...o.networkEnv, HOME: "/root", DEBIAN_FRONTEND: "noninteractive" };
  const chunks: Uint8Array[] = [];
  let r: Awaited<ReturnType<typeof sandbox.exec>>;
  try {
    r = await sandbox.exec({
      cmd: argv,
      env,
      user: "root",
      cwd: o.workdir,
      timeoutMs: INSTALL_TIMEOUT_MS,
      signal: o.signal,
      onStdout: (c) => chunks.push(c),
      onStderr: (c) => chunks.push(c),
    });
  } catch (e) {
    if (o.signal.aborted) throw new Interrupted();
    throw e;
  }
  o.rec.recorder.command({
    label: `install-${index + 1}`,
    argv,
    envNames: Object.keys(env).sort(),
    user: "root",
    exitCode: r.exitCode,
    timedOut: r.timedOut,
    deadline: null,
    durationMs: r.durationMs,
  });
  const text = chunks.length > 0 ? chunks.map((c) => decodeText(c)).join("") : decodeText(r.stdout) + decodeText(r.stderr);
  o.provisionLog.push(
    `$ ${command}\n${text}${text.endsWith("\n") || text === "" ? "" : "\n"}[exit ${r.exitCode}${r.timedOut ? ", timed out" : ""} after ${Math.round(r.durationMs)} ms]\n`,
  );
  if (o.signal.aborted) throw new Interrupted();
  if (r.exitCode !== 0 || r.timedOut) {
    o.rec.recorder.lifecycle("terminal-lab.product.install.error", `product.install[${index}] exited ${r.exitCode}${r.timedOut ? " (timed out)" : ""}`);
    throw new HumanishError(
      "HUMANISH_TERMINAL_LAB_INSTALL_FAILED",
      `subject.product.install[${index}] (${index + 1} of ${total}) ${r.timedOut ? `timed out after ${INSTALL_TIMEOUT_MS} ms` : `exited ${r.exitCode}`}: ${tailText(text.trim(), 400)}`,
      { next: untrustedCertNext(text, "NODE_EXTRA_CA_CERTS" in o.networkEnv) ?? o.next ?? installFailureHint(o.network) },
    );
  }
}
