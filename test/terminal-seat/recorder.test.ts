/**
 * The terminal recorder: events cut only where no secret can straddle the cut, so a secret split
 * across output chunks is still scrubbed whole; output bytes kept losslessly; the 512 KiB
 * raw-output cap; command log digests and env NAMES.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { decodeOutputText } from "../../src/bundle/output-codec.ts";
import { createRunWriter } from "../../src/bundle/writer.ts";
import { createTerminalRecording, TERMINAL_EVENTS_FILE, TRANSCRIPT_MAX_BYTES } from "../../src/terminal-seat/recorder.ts";
import { testRunId, tmpProject } from "../routes/terminal/support.ts";

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

  test("a very long line is flushed in pieces cut at whitespace, so a secret at a cut survives whole", async () => {
    const { rec, events } = setup();
    const filler = `${"x".repeat(999)} `.repeat(66);
    rec.recorder.output("stdout", enc.encode(filler + SECRET.slice(0, 9)));
    rec.recorder.output("stdout", enc.encode(`${SECRET.slice(9)} end\n`));
    await rec.flush();
    const chunks = events().map((e) => e.chunk);
    expect(chunks.join("")).toBe(`${filler}[REDACTED_SECRET] end\n`);
    expect(chunks.length).toBe(2);
    expect(chunks[0]!.endsWith(" ")).toBe(true);
  });

  test("the breaker's repro: 65100 bytes, then a secret arriving across the flush size, then more — never split", async () => {
    const { rec, events } = setup();
    rec.recorder.output("stdout", enc.encode("a".repeat(65100)));
    rec.recorder.output("stdout", enc.encode(SECRET));
    rec.recorder.output("stdout", enc.encode(`${"b".repeat(500)}\n`));
    await rec.flush();
    const chunks = events().map((e) => e.chunk);
    expect(chunks.join("")).toBe(`${"a".repeat(65100)}[REDACTED_SECRET]${"b".repeat(500)}\n`);
    for (const c of chunks) for (let k = 4; k < SECRET.length; k++) expect(c.endsWith(SECRET.slice(0, k))).toBe(false);
  });

  test("control bytes, invalid UTF-8 and backslashes are kept losslessly in the escaped-bytes encoding", async () => {
    const { rec, events, writer } = setup();
    const raw = Uint8Array.from([0x07, 0x08, 0x00, 0x1b, 0x5d, 0x30, 0x3b, 0x78, 0x07, 0xff, 0xfe, 0x5c, 0x0a]);
    rec.recorder.output("stdout", raw.subarray(0, 5));
    rec.recorder.output("stdout", raw.subarray(5));
    await rec.flush();
    const joined = events()
      .map((e) => e.chunk)
      .join("");
    expect(joined).toBe("\\x07\\x08\\x00\\x1b]0;x\\x07\\xff\\xfe\\\\\n");
    expect(Array.from(decodeOutputText(joined))).toEqual(Array.from(raw));
    await writer.writeArtifact("terminal-transcript.txt", rec.transcript(), { kind: "terminal-transcript" });
    const stored = readFileSync(join(writer.runDir, "terminal-transcript.txt"), "utf8");
    expect(Array.from(decodeOutputText(stored))).toEqual(Array.from(raw));
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
