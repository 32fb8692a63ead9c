/**
 * Reads the facts the ledger needs (the model the response reports, its usage, its final status)
 * out of a response body while the bytes pass through untouched. Memory is bounded: an SSE event
 * or a JSON body larger than {@link MAX_KEPT_BYTES} keeps only its head and tail, where the
 * response object carries `model` (near the start) and `usage` (at the end).
 */
import { parseUsage, type RequestUsage } from "../usage.ts";

/** Most bytes of one event (or JSON body) kept whole for parsing. */
export const MAX_KEPT_BYTES = 4 * 1024 * 1024;
/** Bytes kept from each end of an oversized event. */
export const EDGE_BYTES = 64 * 1024;

/** What the tap saw. */
export interface TapFacts {
  /** `response.model`, when seen. */
  model: string | null;
  usage: RequestUsage | null;
  /** Final response status: `completed`, `incomplete`, `failed`, or null when no final event arrived. */
  final: string | null;
  /** `incomplete_details.reason` when the response ended incomplete. */
  incompleteReason: string | null;
}

type Json = Record<string, unknown>;

const DATA = [0x64, 0x61, 0x74, 0x61, 0x3a];
function isDataField(b: Uint8Array): boolean {
  return b.length >= 5 && DATA.every((c, i) => b[i] === c);
}

class Edges {
  private head: Uint8Array[] = [];
  private headBytes = 0;
  private tailParts: Uint8Array[] = [];
  private tailBytes = 0;
  total = 0;

  add(b: Uint8Array): void {
    this.total += b.length;
    if (this.headBytes < MAX_KEPT_BYTES) {
      const take = b.subarray(0, MAX_KEPT_BYTES - this.headBytes);
      this.head.push(take.slice());
      this.headBytes += take.length;
      b = b.subarray(take.length);
      if (b.length === 0) return;
    }
    this.tailParts.push(b.slice());
    this.tailBytes += b.length;
    while (this.tailBytes - (this.tailParts[0]?.length ?? 0) >= EDGE_BYTES) this.tailBytes -= (this.tailParts.shift() as Uint8Array).length;
  }

  /** The whole text when it fit, else undefined. */
  whole(): string | undefined {
    if (this.total > MAX_KEPT_BYTES) return undefined;
    return new TextDecoder().decode(Buffer.concat(this.head));
  }
  edges(): { head: string; tail: string } {
    const head = Buffer.concat(this.head).subarray(0, EDGE_BYTES);
    const tail = Buffer.concat(this.tailParts);
    return { head: new TextDecoder().decode(head), tail: new TextDecoder().decode(tail.subarray(Math.max(0, tail.length - EDGE_BYTES))) };
  }
  reset(): void {
    this.head = [];
    this.headBytes = 0;
    this.tailParts = [];
    this.tailBytes = 0;
    this.total = 0;
  }
}

function fromResponseObject(facts: TapFacts, r: Json): void {
  if (typeof r.model === "string") facts.model = r.model;
  if (r.usage !== undefined) facts.usage = parseUsage(r.usage);
  if (typeof r.status === "string" && r.status !== "in_progress" && r.status !== "queued") facts.final = r.status;
  const inc = r.incomplete_details as Json | null | undefined;
  if (inc && typeof inc.reason === "string") facts.incompleteReason = inc.reason;
}

function fromEdges(facts: TapFacts, head: string, tail: string): void {
  const model = /"model"\s*:\s*"([^"\\]{1,200})"/.exec(head);
  if (model?.[1]) facts.model = model[1];
  const usageAt = tail.lastIndexOf('"usage"');
  if (usageAt >= 0) {
    const m = /^"usage"\s*:\s*(\{(?:[^{}]|\{[^{}]*\})*\})/.exec(tail.slice(usageAt));
    if (m?.[1]) {
      try {
        facts.usage = parseUsage(JSON.parse(m[1]));
      } catch {
        facts.usage = null;
      }
    }
  }
  const status = /"type"\s*:\s*"response\.(completed|incomplete|failed)"/.exec(head);
  if (status?.[1]) facts.final = status[1];
}

/**
 * Events whose data the ledger reads; the data of any other named event (text deltas, the bulk
 * of a stream) is passed by without being copied. An event without an `event:` line is read.
 */
const READ_EVENTS = new Set(["response.created", "response.in_progress", "response.completed", "response.incomplete", "response.failed", "error"]);

/** Folds a `text/event-stream` body; push every chunk, then read {@link SseTap.facts}. */
export class SseTap {
  readonly facts: TapFacts = { model: null, usage: null, final: null, incompleteReason: null };
  private readonly data = new Edges();
  private line: Uint8Array[] = [];
  private lineBytes = 0;
  private inData = false;
  /** False while inside an event whose name says the ledger does not need it. */
  private reading = true;

  push(chunk: Uint8Array): void {
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      if (chunk[i] !== 0x0a) continue;
      this.takeLine(chunk.subarray(start, i));
      start = i + 1;
    }
    if (start < chunk.length) this.partial(chunk.subarray(start));
  }

  private partial(b: Uint8Array): void {
    // Only the first bytes of a line decide what it is; data payload bytes go straight to the event buffer.
    if (this.inData) {
      if (this.reading) this.data.add(b);
      return;
    }
    this.line.push(b.slice());
    this.lineBytes += b.length;
    if (this.lineBytes >= 6) {
      const bytes = Buffer.concat(this.line);
      if (isDataField(bytes)) {
        this.inData = true;
        if (this.reading) this.data.add(bytes.subarray(bytes[5] === 0x20 ? 6 : 5));
        this.line = [];
        this.lineBytes = 0;
      }
    }
  }

  private takeLine(b: Uint8Array): void {
    if (this.inData) {
      if (this.reading) this.data.add(b);
      this.inData = false;
      return;
    }
    const all = this.lineBytes > 0 ? Buffer.concat([...this.line, b]) : b;
    this.line = [];
    this.lineBytes = 0;
    let text = new TextDecoder().decode(all);
    if (text.endsWith("\r")) text = text.slice(0, -1);
    if (text === "") {
      this.dispatch();
      this.reading = true;
      return;
    }
    if (text.startsWith("event:")) {
      this.reading = READ_EVENTS.has(text.slice(6).trim());
      return;
    }
    if (!this.reading) return;
    if (isDataField(all)) this.data.add(all.subarray(all[5] === 0x20 ? 6 : 5, all.at(-1) === 0x0d ? -1 : all.length));
  }

  private dispatch(): void {
    if (this.data.total === 0) return;
    const whole = this.data.whole();
    if (whole !== undefined) {
      try {
        const ev = JSON.parse(whole) as Json;
        if (ev.response && typeof ev.response === "object") fromResponseObject(this.facts, ev.response as Json);
      } catch {
        // not JSON: nothing for the ledger in it
      }
    } else {
      const { head, tail } = this.data.edges();
      fromEdges(this.facts, head, tail);
    }
    this.data.reset();
  }

  /** Ends the stream (a last event without its blank line is still read). */
  end(): TapFacts {
    this.dispatch();
    return this.facts;
  }
}

/** Folds a JSON body (a Response object or an error). */
export class JsonTap {
  readonly facts: TapFacts = { model: null, usage: null, final: null, incompleteReason: null };
  private readonly body = new Edges();
  push(chunk: Uint8Array): void {
    this.body.add(chunk);
  }
  end(): TapFacts {
    const whole = this.body.whole();
    if (whole !== undefined) {
      try {
        const r = JSON.parse(whole) as Json;
        if (r && typeof r === "object" && r.object === "response") fromResponseObject(this.facts, r);
      } catch {
        // not JSON
      }
    } else {
      const { head, tail } = this.body.edges();
      fromEdges(this.facts, head, tail);
    }
    return this.facts;
  }
}
