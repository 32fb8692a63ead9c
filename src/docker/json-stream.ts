/**
 * Parser for the Engine's JSON progress stream (image build, load, pull): a sequence of JSON objects,
 * normally one per line (`\r\n`), but the Engine does not promise line breaks, so objects are split by
 * tracking brace depth outside strings. Bytes are decoded as one continuous UTF-8 stream (never per
 * chunk). A message with `errorDetail` or `error` means the operation failed even when the HTTP status
 * was 200.
 */
import { HumanishError } from "../errors.ts";
import { DOCKER_PROGRESS_ERROR, dockerStreamInvalid } from "./errors.ts";

/** One message of the progress stream (fields per the Engine's `jsonmessage`). */
export interface JsonMessage {
  stream?: string;
  status?: string;
  id?: string;
  progress?: string;
  error?: string;
  errorDetail?: { code?: number; message?: string };
  aux?: Record<string, unknown>;
  [key: string]: unknown;
}

/** Incremental splitter of concatenated JSON objects. */
export class JsonObjectSplitter {
  private readonly decoder = new TextDecoder("utf-8", { fatal: true });
  private buf = "";
  private depth = 0;
  private inString = false;
  private escaped = false;
  private start = -1;
  private scanned = 0;

  constructor(private readonly onObject: (value: unknown) => void) {}

  /** Feeds raw bytes (any chunking). */
  push(chunk: Uint8Array): void {
    let text: string;
    try {
      text = this.decoder.decode(chunk, { stream: true });
    } catch {
      throw dockerStreamInvalid("progress stream is not valid UTF-8");
    }
    this.feed(text);
  }

  private feed(text: string): void {
    this.buf += text;
    const s = this.buf;
    let i = this.scanned;
    for (; i < s.length; i++) {
      const c = s.charCodeAt(i);
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (c === 0x5c) this.escaped = true;
        else if (c === 0x22) this.inString = false;
        continue;
      }
      if (this.depth === 0) {
        if (c === 0x7b) {
          this.start = i;
          this.depth = 1;
        } else if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) {
          throw dockerStreamInvalid(`unexpected character ${JSON.stringify(s[i])} between progress messages`);
        }
        continue;
      }
      if (c === 0x22) this.inString = true;
      else if (c === 0x7b || c === 0x5b) this.depth++;
      else if (c === 0x7d || c === 0x5d) {
        this.depth--;
        if (this.depth === 0) {
          const raw = s.slice(this.start, i + 1);
          let value: unknown;
          try {
            value = JSON.parse(raw);
          } catch {
            throw dockerStreamInvalid(`progress message is not JSON: ${raw.slice(0, 200)}`);
          }
          this.onObject(value);
          this.start = -1;
        }
      }
    }
    if (this.depth === 0) {
      this.buf = "";
      this.scanned = 0;
    } else {
      this.buf = s.slice(this.start);
      this.scanned = i - this.start;
      this.start = 0;
    }
  }

  /** Marks the end; throws when an object was cut short. */
  end(): void {
    let tail: string;
    try {
      tail = this.decoder.decode();
    } catch {
      throw dockerStreamInvalid("progress stream ends inside a UTF-8 sequence");
    }
    if (tail) this.feed(tail);
    if (this.depth !== 0 || this.inString) throw dockerStreamInvalid("progress stream ends inside a JSON message");
  }
}

/** Outcome of reading a whole progress stream. */
export interface ProgressResult {
  messages: JsonMessage[];
  /** The first `errorDetail.message`/`error` seen, or undefined when none. */
  error: string | undefined;
}

/**
 * Reads a progress body to its end, calling `onMessage` for each message. Does not throw for an
 * `errorDetail` line (the caller decides); throws `HUMANISH_DOCKER_STREAM_INVALID` on malformed bytes.
 */
export async function readProgress(body: ReadableStream<Uint8Array>, onMessage?: (m: JsonMessage) => void): Promise<ProgressResult> {
  const messages: JsonMessage[] = [];
  let error: string | undefined;
  const splitter = new JsonObjectSplitter((v) => {
    if (v === null || typeof v !== "object" || Array.isArray(v)) throw dockerStreamInvalid("progress message is not a JSON object");
    const m = v as JsonMessage;
    messages.push(m);
    if (error === undefined && (m.errorDetail !== undefined || m.error !== undefined)) {
      error = m.errorDetail?.message ?? (typeof m.error === "string" ? m.error : JSON.stringify(m.errorDetail ?? m.error));
    }
    onMessage?.(m);
  });
  for await (const chunk of body) splitter.push(chunk);
  splitter.end();
  return { messages, error };
}

/** The error for a progress stream that carried an `errorDetail` line. */
export function progressFailed(operation: string, message: string): HumanishError {
  return new HumanishError(DOCKER_PROGRESS_ERROR, `Docker Engine ${operation} failed: ${message}`, {
    next: "read the message above; for a build, fix the recipe or check network access of the build",
    details: { operation },
  });
}
