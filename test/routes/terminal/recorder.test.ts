/**
 * The terminal recorder: events appended per complete line so a secret split across output
 * chunks is still scrubbed whole; the 512 KiB raw-output cap; command log digests and env NAMES.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { createRunWriter } from "../../../src/bundle/writer.ts";
import { createTerminalRecording, TERMINAL_EVENTS_FILE, TRANSCRIPT_MAX_BYTES } from "../../../src/routes/terminal/recorder.ts";
import { testRunId, tmpProject } from "./support.ts";

const SECRET = "plainsecretvalue9d8c7b6a5f4e";
const project = tmpProject();
afterAll(() => project.cleanup());
const enc = new TextEncoder();

function setup() {
  const writer = createRunWriter({ cwd: project.dir, runId: testRunId("rec"), secrets: [SECRET], heartbeatMs: 0 });
  const progress: string[] = [];
  const rec = createTerminalRecording({
    writer,
    participantId: "p1",
    redact: (s) => writer.redactor.text(s),
    longestSecret: SECRET.length,
    onProgress: (d) => progress.push(d),
  });
  const events = () =>
    readFileSync(join(writer.runDir, TERMINAL_EVENTS_FILE), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { stream: string; chunk: string; source: string });
  return { writer, rec, progress, events };
}

describe("terminal recorder", () => {
  test("a secret split across chunks (and across a UTF-8 sequence) is scrubbed whole in the events", async () => {
    const { rec, events, writer } = setup();
    const line = enc.encode(`key=${SECRET} café\n`);
    for (let i = 0; i < line.length; i += 3) rec.recorder.output("stdout", line.subarray(i, i + 3));
    rec.recorder.output("stderr", enc.encode("partial line without newline"));
    expect(await rec.flush()).toEqual([]);
    const ev = events();
    expect(ev.map((e) => [e.stream, e.chunk, e.source])).toEqual([
      ["stdout", "key=[REDACTED_SECRET] café\n", "p1"],
      ["stderr", "partial line without newline", "p1"],
    ]);
    expect(rec.transcript()).toBe(`key=${SECRET} café\npartial line without newline`); // raw in memory; redacted when written
    const entry = await writer.writeArtifact("terminal-transcript.txt", rec.transcript(), { kind: "terminal-transcript" });
    expect(entry.bytes).toBeGreaterThan(0);
    expect(readFileSync(join(writer.runDir, "terminal-transcript.txt"), "utf8")).not.toContain(SECRET);
  });

  test("a very long line is flushed in pieces that keep a tail back, so a secret at a cut survives whole", async () => {
    const { rec, events } = setup();
    const filler = "x".repeat(64 * 1024 + 100);
    rec.recorder.output("stdout", enc.encode(filler));
    rec.recorder.output("stdout", enc.encode(`${SECRET}\n`));
    await rec.flush();
    const all = events()
      .map((e) => e.chunk)
      .join("");
    expect(all).toBe(`${filler}[REDACTED_SECRET]\n`);
    expect(events().length).toBe(2);
  });

  test("raw output is capped at 512 KiB, with a note", async () => {
    const { rec, events } = setup();
    const chunk = enc.encode(`${"y".repeat(1023)}\n`);
    for (let i = 0; i < 600; i++) rec.recorder.output("stdout", chunk);
    await rec.flush();
    const t = rec.transcript();
    expect(t).toContain(`[humanish: participant output truncated after ${TRANSCRIPT_MAX_BYTES} bytes]`);
    expect(t.length).toBeLessThan(TRANSCRIPT_MAX_BYTES + 200);
    expect(
      events()
        .map((e) => e.chunk)
        .join("").length,
    ).toBeLessThan(TRANSCRIPT_MAX_BYTES + 200);
  });

  test("command log: sha256-16 of the exact argv, sorted env NAMES, no command text or values", () => {
    const { rec } = setup();
    const argv = ["bash", "-lc", `echo ${SECRET}`];
    rec.recorder.command({
      label: "participant-step-1",
      argv,
      envNames: ["HOME", "CODEX_API_KEY"],
      user: "user",
      exitCode: 0,
      timedOut: false,
      deadline: null,
      durationMs: 12.7,
    });
    const [entry] = rec.commandLog;
    expect(entry).toMatchObject({ label: "participant-step-1", envNames: ["CODEX_API_KEY", "HOME"], exitCode: 0, timedOut: false, durationMs: 13 });
    expect(entry!.commandDigest).toBe(createHash("sha256").update(JSON.stringify(argv)).digest("hex").slice(0, 16));
    expect(JSON.stringify(rec.commandLog)).not.toContain(SECRET);
  });

  test("lifecycle messages and progress details are redacted", () => {
    const { rec, progress } = setup();
    rec.recorder.lifecycle("terminal-lab.x", `saw ${SECRET} at /tmp/humanish-x/y`);
    rec.recorder.progress(`step 1/1: echo ${SECRET}\n`);
    expect(rec.lifecycle[0]!.message).toBe("saw [REDACTED_SECRET] at [REDACTED_LOCAL_PATH]");
    expect(progress).toEqual(["step 1/1: echo [REDACTED_SECRET]"]);
  });
});
