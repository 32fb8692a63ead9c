/**
 * A real Docker sandbox for participant tests (humanish sandbox image, study dir ready) and a
 * recorder that keeps everything it is told.
 */
import { randomBytes } from "node:crypto";
import type { RecordedCommand, RunContext, TerminalRecorder } from "../../src/actors/terminal-participant/participant.ts";
import { createDockerClient } from "../../src/docker/index.ts";
import { TERMINAL_STUDY_DIR } from "../../src/lab/schema.ts";
import { ensureImage } from "../../src/runtime/images.ts";
import { sandboxRecipe } from "../../src/runtime/recipes.ts";
import { createDockerSandboxProvider } from "../../src/sandbox/index.ts";
import type { Sandbox } from "../../src/sandbox/types.ts";
import { dockerSocketPath, requireDocker } from "../support/prereq.ts";

/** Creates a sandbox like the terminal route does (network none unless asked). Release it in afterAll. */
export async function testSandbox(tag: string, network: "none" | "bridge" = "none"): Promise<{ sandbox: Sandbox; runId: string }> {
  await requireDocker();
  const docker = createDockerClient({ socketPath: dockerSocketPath() });
  const image = await ensureImage(docker, sandboxRecipe);
  const runId = `test-${tag}-${randomBytes(4).toString("hex")}`;
  const sandbox = await createDockerSandboxProvider({ docker }).create({
    runId,
    image: image.tag,
    network,
    workdir: TERMINAL_STUDY_DIR,
    labels: { "humanish.test": "actors" },
  });
  const r = await sandbox.exec({ cmd: ["chmod", "0777", TERMINAL_STUDY_DIR], user: "root" });
  if (r.exitCode !== 0) throw new Error(`chmod of the study dir failed: ${new TextDecoder().decode(r.stderr)}`);
  return { sandbox, runId };
}

/** A recorder that keeps every call. */
export function memoryRecorder(): TerminalRecorder & {
  lifecycles: [string, string][];
  commands: RecordedCommand[];
  out: { stream: string; text: string }[];
  progressed: string[];
} {
  const lifecycles: [string, string][] = [];
  const commands: RecordedCommand[] = [];
  const out: { stream: string; text: string }[] = [];
  const progressed: string[] = [];
  return {
    lifecycles,
    commands,
    out,
    progressed,
    lifecycle: (e, m) => lifecycles.push([e, m]),
    command: (c) => commands.push(c),
    output: (stream, chunk) => out.push({ stream, text: new TextDecoder().decode(chunk) }),
    progress: (d) => progressed.push(d),
  };
}

/** The recorder {@link memoryRecorder} makes. */
export type MemoryRecorder = ReturnType<typeof memoryRecorder>;

/**
 * A participant's {@link RunContext} in `sandbox` as the terminal route builds it: user `user`
 * in the study dir, a fresh {@link memoryRecorder}, an abort signal that never fires, no network
 * env; the caller gives the brief, nonce, deadlines and redactor, and may replace any field.
 */
export function runContext(
  sandbox: Sandbox,
  fields: Pick<RunContext, "brief" | "nonce" | "deadlines" | "redact"> & Partial<RunContext>,
): RunContext & { recorder: MemoryRecorder } {
  return {
    sandbox,
    user: "user",
    workdir: TERMINAL_STUDY_DIR,
    recorder: memoryRecorder(),
    signal: new AbortController().signal,
    networkEnv: {},
    ...fields,
  } as RunContext & { recorder: MemoryRecorder };
}
