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

const utf8 = new TextDecoder();

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

  /** Bytes held now. */
  get held(): number {
    return this.headBytes + this.tailBytes;
  }

  /** The whole text when it fit, else undefined. */
  whole(): string | undefined {
    if (this.total > MAX_KEPT_BYTES) return undefined;
    return utf8.decode(Buffer.concat(this.head));
  }
  edges(): { head: string; tail: string } {
    const head = Buffer.concat(this.head).subarray(0, EDGE_BYTES);
    const tail = Buffer.concat(this.tailParts);
    return { head: utf8.decode(head), tail: utf8.decode(tail.subarray(Math.max(0, tail.length - EDGE_BYTES))) };
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

/**
 * Most bytes of a non-`data` line (an `event:` name, a comment, an `id:`) carried across chunks;
 * the rest of a longer line is dropped unread, so a huge comment or name cannot grow the carry.
 */
export const MAX_LINE_CARRY = 1024;

/** Bytes that tell a `data:` line (with its optional space) from any other. */
const FIELD_BYTES = 6;
const NEWLINE = new Uint8Array([0x0a]);
const EVENT = [0x65, 0x76, 0x65, 0x6e, 0x74, 0x3a];

function startsWith(b: Uint8Array, prefix: number[]): boolean {
  return b.length >= prefix.length && prefix.every((c, i) => b[i] === c);
}

/**
 * Folds a `text/event-stream` body incrementally; push every chunk, then read {@link SseTap.facts}.
 * A chunk is scanned once and never copied except for the bytes metering reads: the data of a read
 * event (bounded by {@link Edges}) and at most {@link MAX_LINE_CARRY} bytes of a line split across
 * chunks. Text deltas and other unread events pass without being copied or decoded.
 */
export class SseTap {
  readonly facts: TapFacts = { model: null, usage: null, final: null, incompleteReason: null };
  private readonly data = new Edges();
  /** Start of a line split across chunks (while it is not yet known to be a data line). */
  private carry: Uint8Array[] = [];
  private carryBytes = 0;
  /** True when the carried line was longer than {@link MAX_LINE_CARRY} (its rest was dropped). */
  private carryCut = false;
  private inData = false;
  /** False while inside an event whose name says the ledger does not need it. */
  private reading = true;

  push(chunk: Uint8Array): void {
    let start = 0;
    let nl = chunk.indexOf(0x0a, start);
    while (nl !== -1) {
      this.takeLine(chunk.subarray(start, nl));
      start = nl + 1;
      nl = chunk.indexOf(0x0a, start);
    }
    if (start < chunk.length) this.partial(chunk.subarray(start));
  }

  /** Bytes the tap holds now (carried line start and kept event data); bounded whatever the stream. */
  get heldBytes(): number {
    return this.carryBytes + this.data.held;
  }

  private partial(b: Uint8Array): void {
    // Only the first bytes of a line decide what it is; data payload bytes go straight to the event buffer.
    if (this.inData) {
      if (this.reading) this.data.add(b);
      return;
    }
    if (this.carryBytes >= FIELD_BYTES || this.carryCut) {
      this.keep(b);
      return;
    }
    const head = this.carryBytes > 0 ? Buffer.concat([...this.carry, b]) : b;
    this.dropCarry();
    if (head.length >= FIELD_BYTES && isDataField(head)) {
      this.inData = true;
      this.dataLine(head);
      return;
    }
    this.keep(head);
  }

  /** Carries the start of a line that is not (or not yet known to be) a data line, bounded. */
  private keep(b: Uint8Array): void {
    const room = MAX_LINE_CARRY - this.carryBytes;
    if (b.length > room) this.carryCut = true;
    if (room <= 0) return;
    const kept = b.subarray(0, room).slice();
    this.carry.push(kept);
    this.carryBytes += kept.length;
  }

  private dropCarry(): void {
    this.carry = [];
    this.carryBytes = 0;
  }

  /** Starts one `data:` line's payload (lines of one event are joined by a newline, as the format says). */
  private dataLine(line: Uint8Array): void {
    if (!this.reading) return;
    if (this.data.total > 0) this.data.add(NEWLINE);
    this.data.add(line.subarray(line[5] === 0x20 ? 6 : 5));
  }

  private takeLine(b: Uint8Array): void {
    if (this.inData) {
      if (this.reading) this.data.add(b.at(-1) === 0x0d ? b.subarray(0, -1) : b);
      this.inData = false;
      return;
    }
    let line = b;
    let cut = false;
    if (this.carryBytes > 0 || this.carryCut) {
      if (this.carryBytes < FIELD_BYTES && !this.carryCut) {
        // Not yet known what the line is: this chunk's part is joined whole (it may be data).
        line = Buffer.concat([...this.carry, b]);
      } else {
        cut = this.carryCut || this.carryBytes + b.length > MAX_LINE_CARRY;
        line = Buffer.concat([...this.carry, b.subarray(0, Math.max(0, MAX_LINE_CARRY - this.carryBytes))]);
      }
      this.dropCarry();
      this.carryCut = false;
    }
    if (!cut && line.at(-1) === 0x0d) line = line.subarray(0, -1);
    if (line.length === 0) {
      this.dispatch();
      this.reading = true;
      return;
    }
    if (startsWith(line, EVENT)) {
      // An event name too long to carry is not one the ledger knows it may skip: read the event.
      this.reading = cut || READ_EVENTS.has(utf8.decode(line.subarray(6)).trim());
      return;
    }
    // Comments (`:`), `id:`, `retry:` and unknown fields carry nothing the ledger reads.
    if (isDataField(line)) this.dataLine(line);
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
