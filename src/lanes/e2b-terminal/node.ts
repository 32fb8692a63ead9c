/**
 * The Codex participant's runtime prerequisite in an E2B sandbox: Node ≥ 20 with npm and npx.
 * The template's own Node is reused when it is recent enough; otherwise the pinned Node 22 LTS
 * linux-x64 build and npm (the same pins the humanish sandbox image is built from, fetched and
 * verified on the host) are uploaded, their SHA-256 checked inside the sandbox BEFORE anything is
 * extracted, and laid out under /usr/local like the sandbox image. Every step is unkeyed and the
 * whole prerequisite is bounded; a failure stops the seat before the participant.
 */
import { decodeText, tailText } from "../../actors/terminal-participant/exec.ts";
import type { TerminalRecorder } from "../../actors/terminal-participant/participant.ts";
import { errorMessage, HumanishError } from "../../errors.ts";
import { fetchArtifact, type RecipeArtifact } from "../../runtime/artifacts.ts";
import { NODE_ARTIFACT, NPM_ARTIFACT } from "../../runtime/recipes.ts";
import type { Sandbox } from "../../sandbox/types.ts";
import { E2B_SETUP_BOUNDS } from "./spec.ts";

/** Oldest Node major the Codex CLI runs on. */
export const MIN_NODE_MAJOR = 20;
/** Where the uploaded archives wait for their check (removed afterwards). */
const STAGING_DIR = "/tmp/humanish-node";

/** What the probe of the template's Node found. */
export type NodeProbe = { kind: "usable"; version: string } | { kind: "absent" } | { kind: "too-old"; version: string } | { kind: "no-npm"; version: string };

/**
 * Reads the probe's output — pure. Lines `node=<node --version or empty>` and `npm=<yes|no>`.
 */
export function parseNodeProbe(stdout: string): NodeProbe {
  const node = /^node=(.*)$/m.exec(stdout)?.[1]?.trim() ?? "";
  const npm = /^npm=(yes|no)$/m.exec(stdout)?.[1];
  const m = /^v(\d+)\.(\d+)\.(\d+)$/.exec(node);
  if (!m) return { kind: "absent" };
  const version = node.slice(1);
  if (Number(m[1]) < MIN_NODE_MAJOR) return { kind: "too-old", version };
  if (npm !== "yes") return { kind: "no-npm", version };
  return { kind: "usable", version };
}

const PROBE_SCRIPT =
  'printf "node=%s\\n" "$(node --version 2>/dev/null)"; if command -v npm >/dev/null && command -v npx >/dev/null; then echo npm=yes; else echo npm=no; fi';

/** The install script run as root once the archives are uploaded: verify, then extract, then link. */
export function installScript(node: RecipeArtifact, npm: RecipeArtifact): string {
  return [
    "set -eu",
    `cd ${STAGING_DIR}`,
    // The check comes first: a mismatching archive is never opened.
    `printf '%s  %s\\n' ${node.sha256} node.tgz ${npm.sha256} npm.tgz | sha256sum -c --strict -`,
    "mkdir -p /usr/local/bin /usr/local/lib/node_modules/npm",
    "tar -xzf node.tgz -C /usr/local --strip-components=1 package/bin/node",
    "tar -xzf npm.tgz -C /usr/local/lib/node_modules/npm --strip-components=1",
    "ln -sf ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm",
    "ln -sf ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx",
    `rm -rf ${STAGING_DIR}`,
    "node --version",
  ].join("\n");
}

function failed(why: string): HumanishError {
  return new HumanishError("HUMANISH_TERMINAL_LAB_RUNTIME_BOOTSTRAP_FAILED", `the Node runtime prerequisite failed in the E2B sandbox: ${why}`, {
    next: "Use an E2B template with Node ≥ 20 and npm, or one with bash, coreutils (sha256sum), tar and gzip so humanish can install its pinned Node 22.",
  });
}

/**
 * Ensures Node ≥ 20 with npm in the sandbox, within {@link E2B_SETUP_BOUNDS.nodeMs}.
 * @returns the Node version in use and whether it was installed by this seat.
 * @throws HumanishError `HUMANISH_TERMINAL_LAB_RUNTIME_BOOTSTRAP_FAILED` (also when the pinned
 *   archives cannot be fetched or verified on the host: `HUMANISH_IMAGE_ARTIFACT_*`).
 */
export async function ensureNode(
  sandbox: Sandbox,
  o: { recorder: TerminalRecorder; signal: AbortSignal; env?: Record<string, string | undefined>; deadlineMs?: number },
): Promise<{ version: string; installed: boolean }> {
  const deadline = Date.now() + (o.deadlineMs ?? E2B_SETUP_BOUNDS.nodeMs);
  const left = () => {
    const ms = deadline - Date.now();
    if (ms <= 0) throw failed(`it did not finish within ${o.deadlineMs ?? E2B_SETUP_BOUNDS.nodeMs} ms`);
    return ms;
  };
  const probe = await sandbox.exec({ cmd: ["bash", "-c", PROBE_SCRIPT], user: "root", cwd: "/", timeoutMs: Math.min(30_000, left()), signal: o.signal });
  if (probe.timedOut) throw failed("the Node probe timed out");
  const found = parseNodeProbe(decodeText(probe.stdout));
  if (found.kind === "usable") {
    o.recorder.lifecycle("terminal-lab.runtime.node", `node ${found.version} with npm from the template reused (Node ≥ ${MIN_NODE_MAJOR} required)`);
    return { version: found.version, installed: false };
  }
  const why =
    found.kind === "absent"
      ? "no node on PATH"
      : found.kind === "too-old"
        ? `node ${found.version} is older than ${MIN_NODE_MAJOR}`
        : `node ${found.version} has no npm/npx`;
  o.recorder.progress(`installing the pinned Node ${NODE_ARTIFACT.npmSpec} (${why})`);
  let nodeBytes: Uint8Array;
  let npmBytes: Uint8Array;
  try {
    nodeBytes = fetchArtifact(NODE_ARTIFACT, o.env);
    npmBytes = fetchArtifact(NPM_ARTIFACT, o.env);
  } catch (e) {
    throw failed(`the pinned archives could not be fetched on the host (${errorMessage(e)})`);
  }
  const mk = await sandbox.exec({ cmd: ["mkdir", "-p", STAGING_DIR], user: "root", cwd: "/", timeoutMs: Math.min(30_000, left()), signal: o.signal });
  if (mk.exitCode !== 0) throw failed(`mkdir ${STAGING_DIR} exited ${mk.exitCode}`);
  left();
  await sandbox.writeFile(`${STAGING_DIR}/node.tgz`, nodeBytes);
  left();
  await sandbox.writeFile(`${STAGING_DIR}/npm.tgz`, npmBytes);
  const r = await sandbox.exec({
    cmd: ["bash", "-c", installScript(NODE_ARTIFACT, NPM_ARTIFACT)],
    user: "root",
    cwd: "/",
    timeoutMs: left(),
    signal: o.signal,
  });
  const out = decodeText(r.stdout).trim();
  if (r.timedOut || r.exitCode !== 0) {
    throw failed(`the install ${r.timedOut ? "timed out" : `exited ${r.exitCode}`}: ${tailText(`${out}\n${decodeText(r.stderr)}`.trim(), 300)}`);
  }
  const version = /v(\d+\.\d+\.\d+)\s*$/.exec(out)?.[1] ?? "unknown";
  o.recorder.lifecycle(
    "terminal-lab.runtime.node",
    `${why}: installed ${NODE_ARTIFACT.npmSpec} (sha256 ${NODE_ARTIFACT.sha256}) and ${NPM_ARTIFACT.npmSpec} (sha256 ${NPM_ARTIFACT.sha256}), both checked in the sandbox before extraction; node ${version}`,
  );
  return { version, installed: true };
}
