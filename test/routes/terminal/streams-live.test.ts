/**
 * Secrets and streams through the real CLI in a child process, on the real Docker engine:
 * - the breaker's repro: a marked `--env-file` secret printed after 65100 bytes of one line, with
 *   pauses, then more output — the joined `chunk` fields of terminal-events.ndjson never rebuild
 *   it (and neither does any file, stdout or stderr); the same for a provisioned `sk-proj-…` key;
 * - ordinary env values (`KIND=docker`, `MODE=live`, `FLAG=true`, `AUTH_ENABLED=true`,
 *   `APP=<lab id>`) are not secrets and never break the run;
 * - a step printing BEL, backspace, NUL, a title escape and invalid UTF-8 is kept losslessly,
 *   the bundle verifies, and the human output stays inert.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { decodeOutputText } from "../../../src/bundle/output-codec.ts";
import { verifyRun } from "../../../src/bundle/verify.ts";
import { requireDocker } from "../../support/prereq.ts";
import { scriptedTerminalLab } from "../../support/terminal-study.ts";
import { containersOfRun, listFiles, REPO, removeContainers, testRunId, tmpProject } from "./support.ts";

const BUN = process.execPath;
const CLI = join(REPO, "src/cli/main.ts");
const project = tmpProject();
const runIds: string[] = [];
afterAll(async () => {
  for (const id of runIds) await removeContainers(await containersOfRun(id));
  project.cleanup();
});

const CANARY = "zq9-canary-7731-secret";
/**
 * A provisioned key whose body the sandbox computes (`echo zq | sha256sum`), so no part of it
 * sits in the lab text or the tree: whatever of it reaches a file came from the product's output.
 */
const BODY = createHash("sha256").update("zq\n").digest("hex").slice(0, 48);
const KEY = `sk-proj-${BODY}`;
const LAB_ID = "h2-streams-probe";

function writeLab(): string {
  const path = join(project.dir, `${LAB_ID}.yaml`);
  const steps = [
    `head -c 65100 /dev/zero | tr '\\0' a; sleep .4; printf ${CANARY}; sleep .2; head -c 500 /dev/zero | tr '\\0' b; echo`,
    "head -c 65100 /dev/zero | tr '\\0' a; sleep .4; printf sk-proj-; echo zq | sha256sum | cut -c1-24 | tr -d '\\n'; sleep .3; echo zq | sha256sum | cut -c25-48 | tr -d '\\n'; sleep .2; head -c 500 /dev/zero | tr '\\0' b; echo",
    "printf 'bel\\a bs\\b nul\\0 title\\033]0;x\\a bad\\377\\376 end\\n'",
    "printf 'KIND=docker MODE=live FLAG=true\\n'; touch done.txt",
  ];
  writeFileSync(path, scriptedTerminalLab({ id: LAB_ID, title: "streams probe", steps }));
  return path;
}

function spawnCli(args: string[]) {
  return Bun.spawn([BUN, CLI, ...args], {
    cwd: project.dir,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: process.env.HOME ?? "/root",
      ...(process.env.DOCKER_HOST ? { DOCKER_HOST: process.env.DOCKER_HOST } : {}),
    },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
}

describe("lab run: secrets never straddle a chunk, structure is never scrubbed, any bytes are kept", () => {
  test("the breaker's repro, ordinary env values and control bytes, end to end", async () => {
    await requireDocker();
    const lab = writeLab();
    const envFile = join(project.dir, "study.env");
    writeFileSync(
      envFile,
      ["# humanish:secret", `ZQ=${CANARY}`, `OPENAI_API_KEY=${KEY}`, "KIND=docker", "MODE=live", "FLAG=true", "AUTH_ENABLED=true", `APP=${LAB_ID}`, ""].join(
        "\n",
      ),
    );
    for (const json of [false, true]) {
      const runId = testRunId(json ? "streams-json" : "streams");
      runIds.push(runId);
      const child = spawnCli(["lab", "run", lab, "--cwd", project.dir, "--env-file", envFile, "--run-id", runId, ...(json ? ["--json"] : [])]);
      const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
      expect({ code, stderr: code === 0 ? "" : stderr }).toEqual({ code: 0, stderr: "" });
      const runDir = join(project.dir, ".humanish", "runs", runId);

      // No secret on any stream or in any file.
      for (const [name, text] of [
        ["stdout", stdout],
        ["stderr", stderr],
      ] as const) {
        expect(text.includes(CANARY), name).toBe(false);
        expect(text.includes(BODY.slice(0, 24)), name).toBe(false);
        expect(text.includes(BODY.slice(24)), name).toBe(false);
      }
      for (const f of listFiles(runDir)) {
        const bytes = readFileSync(join(runDir, f));
        expect(bytes.includes(Buffer.from(CANARY)), f).toBe(false);
        expect(bytes.includes(Buffer.from(BODY.slice(0, 24))), f).toBe(false);
        expect(bytes.includes(Buffer.from(BODY.slice(24))), f).toBe(false);
      }
      // Joining the event chunks rebuilds neither secret: both were replaced whole.
      const chunks = readFileSync(join(runDir, "terminal-events.ndjson"), "utf8")
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as { chunk: string }).chunk);
      const joined = chunks.join("");
      expect(joined).not.toContain(CANARY);
      for (let k = 6; k < CANARY.length; k++) expect(chunks.some((c) => c.endsWith(CANARY.slice(0, k)))).toBe(false);
      expect(joined).not.toContain(BODY.slice(0, 24));
      expect(joined).not.toContain(BODY.slice(24));
      expect(joined).toContain(`${"a".repeat(100)}[REDACTED_SECRET]${"b".repeat(100)}`);
      expect(joined.split("[REDACTED_SECRET]").length - 1).toBeGreaterThanOrEqual(2);

      // Ordinary values are structure and text as written.
      const run = JSON.parse(readFileSync(join(runDir, "run.json"), "utf8"));
      expect(run.lab.id).toBe(LAB_ID);
      expect(run.mode).toBe("live");
      expect(JSON.stringify(run.target)).toContain("docker");
      expect(joined).toContain("KIND=docker MODE=live FLAG=true");

      // Control bytes and invalid UTF-8 survive losslessly, and the bundle verifies.
      const transcript = readFileSync(join(runDir, "terminal-transcript.txt"), "utf8");
      expect(transcript).toContain("bel\\x07 bs\\x08 nul\\x00 title\\x1b]0;x\\x07 bad\\xff\\xfe end");
      const raw = decodeOutputText(transcript);
      expect(Buffer.from(raw).includes(Buffer.from([0x62, 0x61, 0x64, 0xff, 0xfe, 0x20]))).toBe(true);
      const v = await verifyRun(runDir);
      expect(v.checks.filter((c) => !c.ok)).toEqual([]);
      expect(v.ok).toBe(true);
      if (json) {
        const r = JSON.parse(stdout);
        expect(r.ok).toBe(true);
        expect(r.verify.shareSafety).toBe("share_ready");
      } else {
        // Human output is inert: no control character other than newline/tab on stdout.
        expect(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/.test(stdout)).toBe(false);
      }
    }
  }, 300_000);
});
