/**
 * The terminal route's evidence recorder (reference contracts.md §5.5): the lifecycle ledger, the
 * command log (SHA-256 digests and env NAMES only), `terminal-events.ndjson` appended as output
 * arrives, and the participant transcript.
 *
 * Secrets split across output chunks: events are appended per complete line (a long line is
 * flushed in pieces that keep a tail back), so the literal scrub in the run writer always sees a
 * provisioned secret whole. The transcript is redacted as one text when it is written. Both keep
 * at most {@link TRANSCRIPT_MAX_BYTES} of raw participant output.
 */
import type { RecordedCommand, TerminalRecorder } from "../../actors/terminal/participant.ts";
import { digestText } from "../../bundle/redact.ts";
import type { CommandLogEntry, LifecycleEvent } from "../../bundle/schemas.ts";
import type { RunWriter } from "../../bundle/writer.ts";

/** Raw participant output kept for the transcript and the events stream (bytes). */
export const TRANSCRIPT_MAX_BYTES = 512 * 1024;
/** A line longer than this (chars) is flushed in pieces. */
const LINE_FLUSH_CHARS = 64 * 1024;

/** Path of the terminal events stream inside the run. */
export const TERMINAL_EVENTS_FILE = "terminal-events.ndjson";

/** The recorder plus the ledgers it filled. */
export interface TerminalRecording {
  recorder: TerminalRecorder;
  /** Lifecycle records, messages already redacted. */
  readonly lifecycle: LifecycleEvent[];
  readonly commandLog: CommandLogEntry[];
  /** Every command recorded, including the user it ran as and the deadline (for traces). */
  readonly commands: (RecordedCommand & { at: string })[];
  /** The participant transcript (raw; the writer redacts it when written). */
  transcript(): string;
  /** Number of terminal event lines appended. */
  eventLines(): number;
  /** Flushes buffered output lines and waits for every append. Errors of appends are returned, not thrown. */
  flush(): Promise<string[]>;
  /** Marks output from here on as belonging to `source` (e.g. `p1`, `check:add-filter`). */
  setSource(source: string): void;
}

/** Options of {@link createTerminalRecording}. */
export interface TerminalRecordingOptions {
  writer: RunWriter;
  /** Participant id, the default `source` of output lines. */
  participantId: string;
  /** Redaction for lifecycle messages and progress text. */
  redact: (s: string) => string;
  /** Longest provisioned secret (chars), so split lines keep enough tail back. */
  longestSecret: number;
  /** Live progress sink (already redacted text is passed). */
  onProgress: (detail: string) => void;
}

/** Creates a recorder bound to one run writer. */
export function createTerminalRecording(opts: TerminalRecordingOptions): TerminalRecording {
  const lifecycle: LifecycleEvent[] = [];
  const commandLog: CommandLogEntry[] = [];
  const commands: (RecordedCommand & { at: string })[] = [];
  const transcriptParts: string[] = [];
  let rawBytes = 0;
  let truncated = false;
  let lines = 0;
  let source = opts.participantId;
  const errors: string[] = [];
  let chain: Promise<void> = Promise.resolve();
  const keepBack = Math.max(512, opts.longestSecret);
  const decoders = { stdout: new TextDecoder("utf-8"), stderr: new TextDecoder("utf-8") };
  const pending = { stdout: "", stderr: "" };

  const append = (stream: "stdout" | "stderr", chunk: string): void => {
    if (chunk.length === 0) return;
    lines++;
    const record = { at: new Date().toISOString(), stream, source, chunk };
    chain = chain.then(() =>
      opts.writer.appendNdjson(TERMINAL_EVENTS_FILE, record, { kind: "terminal-events" }).catch((e: unknown) => {
        errors.push(e instanceof Error ? e.message : String(e));
      }),
    );
  };

  const drain = (stream: "stdout" | "stderr", final: boolean): void => {
    let buf = pending[stream];
    const nl = buf.lastIndexOf("\n");
    if (nl >= 0) {
      append(stream, buf.slice(0, nl + 1));
      buf = buf.slice(nl + 1);
    }
    if (final) {
      append(stream, buf);
      buf = "";
    } else if (buf.length > LINE_FLUSH_CHARS) {
      append(stream, buf.slice(0, buf.length - keepBack));
      buf = buf.slice(buf.length - keepBack);
    }
    pending[stream] = buf;
  };

  const recorder: TerminalRecorder = {
    lifecycle(event, message) {
      lifecycle.push({ at: new Date().toISOString(), event, message: opts.redact(message) });
    },
    command(entry) {
      const at = new Date().toISOString();
      commands.push({ ...entry, at });
      commandLog.push({
        at,
        label: entry.label,
        commandDigest: digestText(JSON.stringify(entry.argv), 16),
        envNames: [...entry.envNames].sort(),
        exitCode: entry.exitCode,
        timedOut: entry.timedOut,
        durationMs: Math.max(0, Math.round(entry.durationMs)),
      });
    },
    output(stream, chunk) {
      if (truncated) return;
      let bytes = chunk;
      if (rawBytes + bytes.byteLength > TRANSCRIPT_MAX_BYTES) {
        bytes = bytes.subarray(0, TRANSCRIPT_MAX_BYTES - rawBytes);
        truncated = true;
      }
      rawBytes += bytes.byteLength;
      const text = decoders[stream].decode(bytes, { stream: !truncated });
      transcriptParts.push(text);
      pending[stream] += text;
      drain(stream, false);
      if (truncated) {
        const note = `\n[humanish: participant output truncated after ${TRANSCRIPT_MAX_BYTES} bytes]\n`;
        transcriptParts.push(note);
        drain("stdout", true);
        drain("stderr", true);
        append(stream, note);
      }
    },
    progress(detail) {
      opts.onProgress(opts.redact(detail).replace(/\s+/g, " ").trim().slice(0, 200));
    },
  };

  return {
    recorder,
    lifecycle,
    commandLog,
    commands,
    transcript: () => transcriptParts.join(""),
    eventLines: () => lines,
    setSource(s) {
      drain("stdout", true);
      drain("stderr", true);
      source = s;
    },
    async flush() {
      for (const stream of ["stdout", "stderr"] as const) {
        const tailText = decoders[stream].decode();
        if (tailText) {
          pending[stream] += tailText;
          transcriptParts.push(tailText);
        }
        drain(stream, true);
      }
      await chain;
      return [...errors];
    },
  };
}
