/**
 * The terminal route's evidence recorder: the lifecycle ledger, the command log (SHA-256 digests
 * and env NAMES only), `terminal-events.ndjson` appended as output arrives, and the participant
 * transcript.
 *
 * Output bytes are kept whatever they are: each stream is encoded with the escaped-bytes text
 * encoding (src/bundle/output-codec.ts: `\\` for a backslash, `\xHH` for a control or invalid
 * byte), so NUL, BEL, backspace, terminal escapes and invalid UTF-8 survive losslessly, verify as
 * text, and are inert wherever they are shown. Both the transcript text and every event `chunk`
 * are in that encoding.
 *
 * Secrets never straddle an event boundary: events are cut only where the run redactor's
 * `safeCut` allows (at whitespace, never inside or after the open start of a secret or secret
 * shape), so the literal scrub and the shape patterns always see each secret whole inside one
 * chunk, and joining the chunks cannot rebuild one. Held-back text has no bound of its own; it is
 * bounded by {@link TRANSCRIPT_MAX_BYTES}, the raw output kept per participant.
 */
import type { RecordedCommand, TerminalRecorder } from "../actors/terminal-participant/participant.ts";
import { createOutputEncoder } from "../bundle/output-codec.ts";
import { digestText } from "../bundle/redact.ts";
import type { CommandLogEntry, LifecycleEvent } from "../bundle/schemas.ts";
import type { RunWriter } from "../bundle/writer.ts";
import { errorMessage } from "../errors.ts";

/** Raw participant output kept for the transcript and the events stream (bytes). */
export const TRANSCRIPT_MAX_BYTES = 512 * 1024;
/** Pending text longer than this (chars) is flushed at its last safe cut even without a newline. */
const LINE_FLUSH_CHARS = 64 * 1024;

/** A held tail longer than this (chars) is rescanned only after it grows by half (see the recorder). */
const HOLD_RESCAN_CHARS = 4096;

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
  /** The participant transcript (escaped-bytes text, unredacted; the writer redacts it when written). */
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
  /** Live progress sink (already redacted text is passed). */
  onProgress: (detail: string) => void;
  /** Bundle path of the events file (default {@link TERMINAL_EVENTS_FILE}; a seat's folder in a many-seat study). */
  eventsPath?: string;
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
  const safeCut = (text: string, desired: number): number => opts.writer.redactor.safeCut(text, desired);
  const encoders = { stdout: createOutputEncoder(), stderr: createOutputEncoder() };
  const pending = { stdout: "", stderr: "" };

  const append = (stream: "stdout" | "stderr", chunk: string): void => {
    if (chunk.length === 0) return;
    lines++;
    const record = { at: new Date().toISOString(), stream, source, chunk };
    chain = chain.then(() =>
      opts.writer.appendNdjson(opts.eventsPath ?? TERMINAL_EVENTS_FILE, record, { kind: "terminal-events" }).catch((e: unknown) => {
        errors.push(errorMessage(e));
      }),
    );
  };

  /**
   * Pending length at which the next cut is tried, once a large tail is being held (e.g. an open
   * PEM block): waiting for the held text to grow by half again keeps the rescans linear in the
   * output size, even when a product dribbles one line at a time. Holding longer is always safe.
   */
  const retryAt = { stdout: 0, stderr: 0 };

  /** Emit what may be emitted: complete lines, or (past the flush size) up to the last safe cut. */
  const drain = (stream: "stdout" | "stderr"): void => {
    const buf = pending[stream];
    if (buf.length < retryAt[stream]) return;
    const desired = buf.length > LINE_FLUSH_CHARS ? buf.length : buf.lastIndexOf("\n") + 1;
    if (desired === 0) return;
    const cut = safeCut(buf, desired);
    const held = buf.length - cut;
    retryAt[stream] = held > HOLD_RESCAN_CHARS ? held + Math.floor(held / 2) : 0;
    if (cut === 0) return;
    append(stream, buf.slice(0, cut));
    pending[stream] = buf.slice(cut);
  };

  /** End of a stream's text (a source switch, the end of the run): emit everything pending. */
  const drainAll = (stream: "stdout" | "stderr"): void => {
    append(stream, pending[stream]);
    pending[stream] = "";
  };

  /**
   * Output stopped at the cap, possibly inside a secret: pending text after the last safe cut
   * (which may be the first part of a secret) is dropped, in the events and the transcript.
   */
  const dropOpenTail = (stream: "stdout" | "stderr"): number => {
    const buf = pending[stream];
    const cut = safeCut(buf, buf.length);
    append(stream, buf.slice(0, cut));
    pending[stream] = "";
    return buf.length - cut;
  };

  /** A stream's text ends here: bytes of an unfinished UTF-8 sequence are escaped, all is emitted. */
  const endStream = (stream: "stdout" | "stderr"): void => {
    if (!truncated) {
      const tailText = encoders[stream].end();
      if (tailText) {
        pending[stream] += tailText;
        transcriptParts.push(tailText);
      }
    }
    drainAll(stream);
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
      const text = encoders[stream].write(bytes) + (truncated ? encoders[stream].end() : "");
      transcriptParts.push(text);
      pending[stream] += text;
      if (!truncated) {
        drain(stream);
        return;
      }
      let dropped = 0;
      for (const s of ["stdout", "stderr"] as const) dropped += dropOpenTail(s);
      const whole = transcriptParts.join("");
      const keep = safeCut(whole, whole.length);
      transcriptParts.length = 0;
      transcriptParts.push(whole.slice(0, keep));
      const held = Math.max(dropped, whole.length - keep);
      const note = `\n[humanish: participant output truncated after ${TRANSCRIPT_MAX_BYTES} bytes${held > 0 ? `; the last ${held} chars of an unfinished word were dropped` : ""}]\n`;
      transcriptParts.push(note);
      append(stream, note);
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
      for (const stream of ["stdout", "stderr"] as const) endStream(stream);
      source = s;
    },
    async flush() {
      for (const stream of ["stdout", "stderr"] as const) endStream(stream);
      await chain;
      return [...errors];
    },
  };
}
