/**
 * The codex-exec participant's run path in a real Docker sandbox (network none) with a stand-in
 * `codex` executable installed where npm would put it: the unkeyed version probe, the keyed
 * command with stdin closed and a first-output deadline, and the mapping of the JSONL stream
 * to the participant's outcome (turn.completed = success; turn.failed / exit 1 = failed; an
 * `error` event alone is not final; only a verdict marker with this run's nonce counts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createCodexExec } from "../../../src/actors/codex-exec/index.ts";
import type { TerminalParticipant } from "../../../src/actors/terminal-participant/participant.ts";
import { isHumanishError } from "../../../src/errors.ts";
import { TERMINAL_STUDY_DIR } from "../../../src/lab/schema.ts";
import type { ExecOptions, ExecResult, Sandbox } from "../../../src/sandbox/types.ts";
import { memoryRecorder, runContext, testSandbox } from "../support.ts";

const KEY = "canary-key-5e1f0a9b3c7d2e46";
const NONCE = "0123456789ab";

/** The stand-in: `--version` prints the pinned version; `exec` follows /tmp/fake-codex-mode. */
const FAKE_CODEX = `#!/bin/bash
if [ "$1" = "--version" ]; then echo "codex-cli 0.171.0"; exit 0; fi
[ "$1" = "exec" ] || exit 2
mode=$(cat /tmp/fake-codex-mode)
ev() { printf '%s\\n' "$1"; }
case "$mode" in
  silent) sleep 45; exit 0 ;;
  stdin)
    cat >/dev/null   # would hang forever on an open, idle stdin
    [ -n "$CODEX_API_KEY" ] && has=yes || has=no
    ev '{"type":"thread.started","thread_id":"th-1"}'
    ev '{"type":"turn.started"}'
    ev "{\\"type\\":\\"item.completed\\",\\"item\\":{\\"id\\":\\"m\\",\\"type\\":\\"agent_message\\",\\"text\\":\\"key-present=$has user=$(id -un) cwd=$PWD\\\\nHUMANISH_ACTOR_VERDICT=passed HUMANISH_ACTOR_NONCE=${NONCE}\\"}}"
    ev '{"type":"turn.completed","usage":{"input_tokens":1000,"cached_input_tokens":0,"output_tokens":100}}'
    exit 0 ;;
  failed)
    ev '{"type":"thread.started","thread_id":"th-2"}'
    ev '{"type":"turn.started"}'
    ev '{"type":"error","message":"Reconnecting... 1/5"}'
    ev '{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized"}}'
    echo "Error: unexpected status 401" >&2
    exit 1 ;;
  error-only)
    ev '{"type":"turn.started"}'
    ev '{"type":"error","message":"stream disconnected before completion"}'
    exit 1 ;;
  blocked|gaveup|nomarker|othernonce)
    case "$mode" in blocked) v="blocked ${NONCE}";; gaveup) v="failed ${NONCE}";; othernonce) v="passed ffffffffffff";; *) v="";; esac
    ev '{"type":"turn.started"}'
    if [ -n "$v" ]; then set -- $v; ev "{\\"type\\":\\"item.completed\\",\\"item\\":{\\"id\\":\\"m\\",\\"type\\":\\"agent_message\\",\\"text\\":\\"HUMANISH_ACTOR_VERDICT=$1 HUMANISH_ACTOR_NONCE=$2\\"}}"; fi
    ev '{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":5,"output_tokens":1}}'
    exit 0 ;;
esac
exit 3
`;

let sandbox: Sandbox;
let participant: TerminalParticipant;
const seen: { cmd: string[]; env: Record<string, string> }[] = [];

/** Records every exec; replaces the npm install with installing the stand-in. */
function recording(real: Sandbox): Sandbox {
  return {
    id: real.id,
    provider: real.provider,
    exec: (o: ExecOptions): Promise<ExecResult> => {
      seen.push({ cmd: [...o.cmd], env: { ...(o.env ?? {}) } });
      if (o.cmd.includes("@openai/codex@0.171.0")) {
        return real
          .writeFile("/tmp/fake-codex-src", FAKE_CODEX, 0o755)
          .then(() => real.exec({ cmd: ["bash", "-c", "cp /tmp/fake-codex-src /usr/local/bin/codex && chmod 755 /usr/local/bin/codex"], user: "root" }));
      }
      return real.exec(o);
    },
    writeFile: (p, d, m) => real.writeFile(p, d, m),
    readFile: (p, m) => real.readFile(p, m),
    release: () => real.release(),
  };
}

beforeAll(async () => {
  const t = await testSandbox("codexp");
  sandbox = recording(t.sandbox);
  participant = createCodexExec({ version: "0.171.0", model: "gpt-5-mini" });
  const rec = memoryRecorder();
  await participant.prepare({ sandbox, user: "user", workdir: TERMINAL_STUDY_DIR, recorder: rec, signal: new AbortController().signal, networkEnv: {} });
}, 300_000);

afterAll(async () => {
  expect((await sandbox?.release())?.outcome).toBe("released");
});

async function runMode(mode: string, firstOutputMs = 20_000) {
  const w = await sandbox.exec({ cmd: ["bash", "-c", `echo ${mode} > /tmp/fake-codex-mode`], user: "root" });
  expect(w.exitCode).toBe(0);
  const ctx = runContext(sandbox, {
    brief: `You are a participant.\nHUMANISH_ACTOR_NONCE=${NONCE}`,
    nonce: NONCE,
    deadlines: { firstOutputMs, deadlineAt: Date.now() + 60_000 },
    // The stand-in reads CODEX_API_KEY: here the gateway token plays the key's part.
    modelGateway: { baseURL: "http://127.0.0.1:41400/v1", token: KEY, auth: "openai-egress" },
    redact: (s) => s.replaceAll(KEY, "[REDACTED_SECRET]"),
  });
  const outcome = await participant.run(ctx);
  return { outcome, recorder: ctx.recorder };
}

describe("codex-exec participant (stand-in binary)", () => {
  test("prepare: the probe ran as the participant with no key and verified the version", () => {
    const r = participant.runtime()!;
    expect(r).toMatchObject({ versionStatus: "verified", observedVersion: "0.171.0", requestedModel: "gpt-5-mini", modelStatus: "declared" });
    // First the image is asked, as root, whether it already carries the version (it does not: the
    // stand-in is installed); then the participant's own probe runs with no key.
    const probes = seen.filter((s) => s.cmd.at(-1) === "--version");
    expect(probes.map((p) => p.env)).toEqual([{ HOME: "/root" }, { HOME: "/home/user" }]);
    expect(seen.filter((s) => Object.values(s.env).includes(KEY))).toEqual([]);
  });

  test("stdin is closed (the stand-in's `cat` returns) and only the exec carries the key, as the participant", async () => {
    const before = seen.length;
    const { outcome, recorder } = await runMode("stdin");
    // The verdict marker with this run's nonce is a claim, never success: the route's hidden checks decide.
    expect(outcome).toMatchObject({ status: "incomplete", completionReason: "turn_completed", claimed: "passed" });
    expect(outcome.items.find((i) => i.kind === "message")?.text).toContain(`key-present=yes user=user cwd=${TERMINAL_STUDY_DIR}`);
    expect(outcome.tokenUsage?.turns).toHaveLength(1);
    expect(outcome.estimatedCost).toMatchObject({ estimatedCostUsd: 0.00045, modelId: "gpt-5-mini" }); // 1000 × 0.25/M + 100 × 2/M
    const keyed = seen.slice(before).filter((s) => Object.values(s.env).includes(KEY));
    expect(keyed).toHaveLength(1);
    expect(recorder.commands.map((c) => [c.label, c.envNames])).toEqual([["codex-exec", ["CODEX_API_KEY", "HOME"]]]);
    expect(recorder.lifecycles.map((l) => l[0])).toEqual(["terminal-lab.runtime-auth", "terminal-lab.exec.started", "terminal-lab.exec.completed"]);
  });

  test("a silent runtime is killed at the first-output deadline", async () => {
    // The silent runtime prints nothing for 45 s: a deadline that did not fire would end it later, and not as timed_out.
    const { outcome } = await runMode("silent", 1_500);
    expect(outcome).toMatchObject({ status: "timed_out", completionReason: "timed_out", deadline: "first-output" });
  });

  test("turn.failed (exit 1) → failed / actor_error with the runtime's message; stderr kept as a notice", async () => {
    const { outcome } = await runMode("failed");
    expect(outcome).toMatchObject({ status: "failed", completionReason: "actor_error" });
    expect(outcome.reason).toBe("turn.failed: unexpected status 401 Unauthorized (codex exited 1)");
    expect(outcome.items.some((i) => i.title === "codex stderr (tail)" && i.text?.includes("401"))).toBe(true);
    expect(outcome.tokenUsage).toBeUndefined();
    expect(outcome.estimatedCost).toMatchObject({ estimatedCostUsd: null, reason: "no_token_usage" });
  });

  test("an error event alone is not final: exit 1 without turn.completed is a runtime failure", async () => {
    const { outcome } = await runMode("error-only");
    expect(outcome.status).toBe("failed");
    expect(outcome.reason).toBe("codex exited 1 without turn.completed; last error event: stream disconnected before completion");
  });

  test("verdict markers map to participant outcomes; a foreign nonce or none is not a claim", async () => {
    expect((await runMode("blocked")).outcome).toMatchObject({ status: "blocked", completionReason: "blocked_approval", claimed: "blocked" });
    expect((await runMode("gaveup")).outcome).toMatchObject({ status: "abandoned", completionReason: "gave_up", claimed: "failed" });
    expect((await runMode("nomarker")).outcome).toMatchObject({ status: "incomplete", completionReason: "turn_completed", claimed: "none" });
    // A marker with another run's nonce is no claim of this run.
    expect((await runMode("othernonce")).outcome).toMatchObject({ status: "incomplete", completionReason: "turn_completed", claimed: "none" });
  });

  test("run() refuses without its gateway, or in openai-env mode without a key (never reaches the sandbox)", async () => {
    const before = seen.length;
    const base = { brief: "b", nonce: NONCE, deadlines: { firstOutputMs: 1000, deadlineAt: Date.now() + 1000 }, redact: (s: string) => s };
    const noGateway = await participant.run(runContext(sandbox, base)).catch((e) => e);
    expect(isHumanishError(noGateway, "HUMANISH_TERMINAL_LAB_RUNTIME_UNVERIFIED")).toBe(true);
    const noKey = await participant
      .run(runContext(sandbox, { ...base, modelGateway: { baseURL: "http://127.0.0.1:41400/v1", token: "t", auth: "openai-env" } }))
      .catch((e) => e);
    expect(isHumanishError(noKey, "HUMANISH_TERMINAL_LAB_RUNTIME_AUTH_MISSING")).toBe(true);
    expect(seen.length).toBe(before);
  });
});
